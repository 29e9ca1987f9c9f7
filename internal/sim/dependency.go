package sim

import (
	"math"

	"github.com/resilience4cata/r4c/internal/heapq"
)

// Model is how the simulated dependency shares its capacity among the calls it holds.
type Model uint8

const (
	// PS is processor sharing over c workers: n calls each progress at min(1, c/n) of full
	// speed, so a call's latency is its work while n <= c and grows in proportion to n above.
	// Its knee is c, whatever the service time.
	PS Model = iota
	// FIFO is a pool of c workers in front of a first-in first-out queue: a call waits for a
	// free worker, then takes its work's time. Its knee is c too.
	FIFO
)

// String returns "ps" or "fifo".
func (m Model) String() string {
	if m == FIFO {
		return "fifo"
	}
	return "ps"
}

// job is one call inside the dependency.
type job struct {
	c      *call
	work   float64 // nanoseconds of work at full speed
	finish float64 // PS: the virtual time at which it is done; FIFO: the time it ends
	index  int     // position in the heap, -1 when not in one
	queued bool    // FIFO: waiting for a worker
}

// dependency is the service every replica calls.
type dependency interface {
	add(now int64, j *job)
	// cancel removes a call whose caller gave up: it stops using a worker.
	cancel(now int64, j *job)
	// next returns when the next call ends, math.MaxInt64 when none is in service.
	next() int64
	// done returns a call that has ended by now, or nil.
	done(now int64) *job
	setCapacity(now int64, c int)
	// load returns the calls the dependency holds (in service or queued).
	load() int
}

func newDependency(m Model, capacity int) dependency {
	if m == FIFO {
		return &fifo{capacity: capacity, running: newJobHeap()}
	}
	return &ps{capacity: capacity, jobs: newJobHeap()}
}

// ps shares its workers equally: every call in service progresses at the same rate, so the
// simulation tracks one virtual clock (the work each call has received since the start) and
// each call's virtual finishing time, and never touches calls that are not finishing.
type ps struct {
	capacity int
	v        float64          // virtual time: work done per call since the start
	last     int64            // the time v was last brought up to date
	jobs     *heapq.Heap[job] // by virtual finishing time
}

func (d *ps) rate() float64 {
	if n := d.jobs.Len(); n > d.capacity {
		return float64(d.capacity) / float64(n)
	}
	return 1
}

func (d *ps) catchUp(now int64) {
	if d.jobs.Len() > 0 {
		d.v += float64(now-d.last) * d.rate()
	}
	d.last = now
}

func (d *ps) add(now int64, j *job) {
	d.catchUp(now)
	j.finish = d.v + j.work
	d.jobs.Push(j)
}

func (d *ps) cancel(now int64, j *job) {
	if j.index < 0 {
		return
	}
	d.catchUp(now)
	d.jobs.Remove(j)
}

func (d *ps) next() int64 {
	if d.jobs.Len() == 0 {
		return math.MaxInt64
	}
	left := (d.jobs.Min().finish - d.v) / d.rate()
	return d.last + int64(math.Ceil(max(0, left)))
}

func (d *ps) done(now int64) *job {
	if d.jobs.Len() == 0 {
		return nil
	}
	d.catchUp(now)
	// Rounding the finishing time up to a whole nanosecond leaves a call at most a fraction of
	// a nanosecond of virtual time short.
	if d.jobs.Min().finish > d.v+1e-3 {
		return nil
	}
	return d.jobs.Pop()
}

func (d *ps) setCapacity(now int64, c int) {
	d.catchUp(now)
	d.capacity = c
}

func (d *ps) load() int { return d.jobs.Len() }

// fifo serves calls in arrival order on capacity workers.
type fifo struct {
	capacity int
	running  *heapq.Heap[job] // by finishing time
	queue    []*job           // waiting, oldest first; cancelled ones are skipped when reached
	queued   int              // calls in queue that are not cancelled
}

func (d *fifo) add(now int64, j *job) {
	if d.running.Len() < d.capacity {
		d.start(now, j)
		return
	}
	j.queued = true
	d.queue = append(d.queue, j)
	d.queued++
}

func (d *fifo) start(now int64, j *job) {
	j.queued = false
	j.finish = float64(now) + j.work
	d.running.Push(j)
}

func (d *fifo) cancel(now int64, j *job) {
	switch {
	case j.queued:
		j.queued = false
		j.c = nil // skipped when it reaches the head of the queue
		d.queued--
	case d.running.Remove(j):
		d.fill(now)
	}
}

// fill starts queued calls while workers are free.
func (d *fifo) fill(now int64) {
	for d.running.Len() < d.capacity && len(d.queue) > 0 {
		j := d.queue[0]
		d.queue[0] = nil
		d.queue = d.queue[1:]
		if j.c == nil {
			continue
		}
		d.queued--
		d.start(now, j)
	}
	if len(d.queue) == 0 {
		d.queue = d.queue[:0:0] // let the backing array go once the queue drains
	}
}

func (d *fifo) next() int64 {
	if d.running.Len() == 0 {
		return math.MaxInt64
	}
	return int64(math.Ceil(d.running.Min().finish))
}

func (d *fifo) done(now int64) *job {
	if d.running.Len() == 0 || d.running.Min().finish > float64(now) {
		return nil
	}
	j := d.running.Pop()
	d.fill(now)
	return j
}

func (d *fifo) setCapacity(now int64, c int) {
	d.capacity = c
	d.fill(now)
}

func (d *fifo) load() int { return d.running.Len() + d.queued }

// newJobHeap returns a heap of calls by finish.
func newJobHeap() *heapq.Heap[job] {
	return heapq.New(func(a, b *job) bool { return a.finish < b.finish }, func(j *job) *int { return &j.index })
}
