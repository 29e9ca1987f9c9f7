package realtime

import (
	"sync"
	"time"

	"github.com/resilience4cata/r4c"
)

// Dependency emulates a service with a number of workers and a FIFO queue on a clock: a call
// waits for a worker in its order of arrival, then holds it for its work. A call whose caller
// gives up (done closes) leaves the queue, or frees its worker: the dependency stops working on
// it, as the quality bench's dependencies do. Its knee is its number of workers.
type Dependency struct {
	clock r4c.Clock

	mu      sync.Mutex
	workers int           // workers now; a call starts only while busy < workers
	busy    int           // calls holding a worker
	queue   []chan<- bool // callers waiting for a worker, oldest first; a send hands one a worker

	queued chan<- int // tests only: told the queue's length each time a caller joins it
}

// NewDependency returns a dependency of workers workers on clock.
func NewDependency(clock r4c.Clock, workers int) *Dependency {
	return &Dependency{clock: clock, workers: max(1, workers)}
}

// SetWorkers changes the number of workers: calls beyond a lower number finish their work, and
// no call starts until fewer than workers are busy.
func (d *Dependency) SetWorkers(workers int) {
	d.mu.Lock()
	d.workers = max(1, workers)
	d.startLocked()
	d.mu.Unlock()
}

// InFlight returns the calls the dependency holds: working and waiting.
func (d *Dependency) InFlight() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.busy + len(d.queue)
}

// Call serves a call of work: it waits for a worker, then works. It reports whether the work
// was done before done closed; if done closes first, the call leaves the queue or its worker
// at once.
func (d *Dependency) Call(done <-chan struct{}, work time.Duration) bool {
	ready := make(chan bool, 1)
	d.mu.Lock()
	if d.busy < d.workers && len(d.queue) == 0 {
		d.busy++
		ready <- true
	} else {
		d.queue = append(d.queue, ready)
		if d.queued != nil {
			d.queued <- len(d.queue)
		}
	}
	d.mu.Unlock()
	select {
	case <-ready:
	case <-done:
		d.mu.Lock()
		if i := d.indexLocked(ready); i >= 0 {
			d.queue = append(d.queue[:i], d.queue[i+1:]...)
			d.mu.Unlock()
			return false
		}
		d.mu.Unlock()
		// A worker was handed over as done closed: give it back.
		d.release()
		return false
	}
	t := d.clock.NewTimer(work)
	defer t.Stop()
	select {
	case <-t.C():
		d.release()
		return true
	case <-done:
		d.release()
		return false
	}
}

// release frees a worker and hands it to the oldest caller waiting, if it may start.
func (d *Dependency) release() {
	d.mu.Lock()
	d.busy--
	d.startLocked()
	d.mu.Unlock()
}

// startLocked hands free workers to the callers waiting, oldest first.
func (d *Dependency) startLocked() {
	for d.busy < d.workers && len(d.queue) > 0 {
		d.busy++
		d.queue[0] <- true
		d.queue = d.queue[1:]
	}
}

func (d *Dependency) indexLocked(ready chan<- bool) int {
	for i, q := range d.queue {
		if q == ready {
			return i
		}
	}
	return -1
}
