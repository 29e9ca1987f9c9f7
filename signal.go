package r4c

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// signal is a one-shot "done" between a call and the goroutine that runs its function, reused
// through a pool: the channel is never seen outside the library, so it can be, once both sides
// let go of it (the goroutine may send long after the caller stopped waiting, at a timeout).
type signal struct {
	ch   chan struct{} // buffered: the goroutine's send never blocks
	refs atomic.Int32
}

var signals = sync.Pool{New: func() any { return &signal{ch: make(chan struct{}, 1)} }}

// newSignal returns a signal held by two: the waiting caller and the signalling goroutine.
func newSignal() *signal {
	s := signals.Get().(*signal)
	s.refs.Store(2)
	return s
}

// send signals, and lets go of the signal.
func (s *signal) send() {
	s.ch <- struct{}{}
	s.release()
}

// release lets go of the signal; the last to let go empties it and returns it to the pool.
func (s *signal) release() {
	if s.refs.Add(-1) == 0 {
		select {
		case <-s.ch:
		default:
		}
		signals.Put(s)
	}
}

// What ended a wait.
type waitEnd uint8

const (
	signalled waitEnd = iota
	deadline
	cancelled
)

// timers holds stopped *time.Timer for waits on the system clock: a timer is made once and
// reset, instead of allocated per call. Go 1.23 timers drop a stale value on Stop and Reset.
var timers sync.Pool

// waitFor waits for s, d on clock, or ctx, whichever comes first. A signal that is there at the
// deadline wins.
func waitFor(s *signal, ctx context.Context, clock Clock, d time.Duration) waitEnd {
	if _, ok := clock.(systemClock); ok {
		t, _ := timers.Get().(*time.Timer)
		if t == nil {
			t = time.NewTimer(d)
		} else {
			t.Reset(d)
		}
		end := waitOn(s, ctx, t.C)
		t.Stop()
		timers.Put(t)
		return end
	}
	t := clock.NewTimer(d)
	end := waitOn(s, ctx, t.C())
	t.Stop()
	return end
}

func waitOn(s *signal, ctx context.Context, fired <-chan time.Time) waitEnd {
	select {
	case <-s.ch:
		return signalled
	case <-fired:
		select {
		case <-s.ch:
			return signalled
		default:
			return deadline
		}
	case <-ctx.Done():
		select {
		case <-s.ch:
			return signalled
		default:
			return cancelled
		}
	}
}
