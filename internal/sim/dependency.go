package sim

import (
	"container/heap"
	"math"
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
		return &fifo{capacity: capacity}
	}
	return &ps{capacity: capacity}
}

// ps shares its workers equally: every call in service progresses at the same rate, so the
// simulation tracks one virtual clock (the work each call has received since the start) and
// each call's virtual finishing time, and never touches calls that are not finishing.
type ps struct {
	capacity int
	v        float64 // virtual time: work done per call since the start
	last     int64   // the time v was last brought up to date
	jobs     jobHeap // by virtual finishing time
}

func (d *ps) rate() float64 {
	if n := len(d.jobs); n > d.capacity {
		return float64(d.capacity) / float64(n)
	}
	return 1
}

func (d *ps) catchUp(now int64) {
	if len(d.jobs) > 0 {
		d.v += float64(now-d.last) * d.rate()
	}
	d.last = now
}

func (d *ps) add(now int64, j *job) {
	d.catchUp(now)
	j.finish = d.v + j.work
	heap.Push(&d.jobs, j)
}

func (d *ps) cancel(now int64, j *job) {
	if j.index < 0 {
		return
	}
	d.catchUp(now)
	heap.Remove(&d.jobs, j.index)
}

func (d *ps) next() int64 {
	if len(d.jobs) == 0 {
		return math.MaxInt64
	}
	left := (d.jobs[0].finish - d.v) / d.rate()
	return d.last + int64(math.Ceil(max(0, left)))
}

func (d *ps) done(now int64) *job {
	if len(d.jobs) == 0 {
		return nil
	}
	d.catchUp(now)
	// Rounding the finishing time up to a whole nanosecond leaves a call at most a fraction of
	// a nanosecond of virtual time short.
	if d.jobs[0].finish > d.v+1e-3 {
		return nil
	}
	return heap.Pop(&d.jobs).(*job)
}

func (d *ps) setCapacity(now int64, c int) {
	d.catchUp(now)
	d.capacity = c
}

func (d *ps) load() int { return len(d.jobs) }

// fifo serves calls in arrival order on capacity workers.
type fifo struct {
	capacity int
	running  jobHeap // by finishing time
	queue    []*job  // waiting, oldest first; cancelled ones are skipped when reached
	queued   int     // calls in queue that are not cancelled
}

func (d *fifo) add(now int64, j *job) {
	if len(d.running) < d.capacity {
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
	heap.Push(&d.running, j)
}

func (d *fifo) cancel(now int64, j *job) {
	switch {
	case j.queued:
		j.queued = false
		j.c = nil // skipped when it reaches the head of the queue
		d.queued--
	case j.index >= 0:
		heap.Remove(&d.running, j.index)
		d.fill(now)
	}
}

// fill starts queued calls while workers are free.
func (d *fifo) fill(now int64) {
	for len(d.running) < d.capacity && len(d.queue) > 0 {
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
	if len(d.running) == 0 {
		return math.MaxInt64
	}
	return int64(math.Ceil(d.running[0].finish))
}

func (d *fifo) done(now int64) *job {
	if len(d.running) == 0 || d.running[0].finish > float64(now) {
		return nil
	}
	j := heap.Pop(&d.running).(*job)
	d.fill(now)
	return j
}

func (d *fifo) setCapacity(now int64, c int) {
	d.capacity = c
	d.fill(now)
}

func (d *fifo) load() int { return len(d.running) + d.queued }

// jobHeap orders calls by finish.
type jobHeap []*job

func (h jobHeap) Len() int           { return len(h) }
func (h jobHeap) Less(i, j int) bool { return h[i].finish < h[j].finish }
func (h jobHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *jobHeap) Push(x any) {
	j := x.(*job)
	j.index = len(*h)
	*h = append(*h, j)
}
func (h *jobHeap) Pop() any {
	old := *h
	n := len(old)
	j := old[n-1]
	old[n-1] = nil
	j.index = -1
	*h = old[:n-1]
	return j
}
