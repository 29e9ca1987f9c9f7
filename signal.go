package r4c

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// signal is how a call under a timeout learns that its function's goroutine is done or that the
// deadline came, whichever first: each sends one token on ch, and the caller receives one. It is
// reused through a pool (it is never seen outside the library), once the caller, the goroutine
// and the timer have all let go of it: the goroutine may send long after the caller returned at
// the deadline, and the timer may fire while the caller stops it.
type signal struct {
	ch    chan struct{} // room for both tokens: no send ever blocks
	refs  atomic.Int32
	done  atomic.Bool // the goroutine's result is there
	fired atomic.Bool // the deadline came
	// timer is the system clock's, made once with the signal and reset for each call; other
	// clocks make a timer per call (extra).
	timer *time.Timer
	extra Timer
}

var signals sync.Pool

func init() {
	signals.New = func() any {
		s := &signal{ch: make(chan struct{}, 2)}
		s.timer = time.AfterFunc(time.Hour, s.fire)
		s.timer.Stop()
		return s
	}
}

// startSignal returns a signal held by the caller, the goroutine and a timer that fires after d
// on clock.
func startSignal(clock Clock, d time.Duration) *signal {
	s := signals.Get().(*signal)
	s.refs.Store(3)
	if _, ok := clock.(systemClock); ok {
		s.timer.Reset(d)
	} else {
		s.extra = clock.AfterFunc(d, s.fire)
	}
	return s
}

// send is the goroutine's: its result is there.
func (s *signal) send() {
	s.done.Store(true)
	s.ch <- struct{}{}
	s.release()
}

// fire is the timer's: the deadline came.
func (s *signal) fire() {
	s.fired.Store(true)
	s.ch <- struct{}{}
	s.release()
}

// What ended a wait.
type waitEnd uint8

const (
	signalled waitEnd = iota
	deadline
	cancelled
)

// wait waits for the result, the deadline or ctx, whichever comes first (a result that is there
// by then wins), stops the timer, and lets go of the signal: the caller must not touch it after.
func (s *signal) wait(ctx context.Context) waitEnd {
	if done := ctx.Done(); done == nil {
		<-s.ch // a plain receive: cheaper than a select
	} else {
		select {
		case <-s.ch:
		case <-done:
		}
	}
	end := cancelled
	switch {
	case s.done.Load():
		end = signalled
	case s.fired.Load():
		end = deadline
	}
	stopped := false
	if s.extra != nil {
		stopped = s.extra.Stop()
	} else {
		stopped = s.timer.Stop()
	}
	if stopped {
		s.release() // the timer will not fire: its share goes with the caller's
	}
	s.release()
	return end
}

// release lets go of the signal; the last to let go empties it and returns it to the pool.
func (s *signal) release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	for len(s.ch) > 0 {
		<-s.ch
	}
	s.done.Store(false)
	s.fired.Store(false)
	s.extra = nil
	signals.Put(s)
}

// deadlineTimer is a pooled AfterFunc timer of the system clock that calls its target's expire once
// its duration has passed: an asynchronous call's timeout, without a timer and a function
// allocated per call. It is reused once the call (which stops it) and the timer (which may
// fire while it is stopped) have both let go of it.
type deadlineTimer struct {
	t    *time.Timer
	refs atomic.Int32

	mu     sync.Mutex
	target interface{ expire() }
}

var deadlines sync.Pool

func init() {
	deadlines.New = func() any {
		dl := &deadlineTimer{}
		dl.t = time.AfterFunc(time.Hour, dl.fire)
		dl.t.Stop()
		return dl
	}
}

// startDeadline calls target.expire once d has passed, unless the deadline is stopped first.
func startDeadline(target interface{ expire() }, d time.Duration) *deadlineTimer {
	dl := deadlines.Get().(*deadlineTimer)
	dl.mu.Lock()
	dl.target = target
	dl.mu.Unlock()
	dl.refs.Store(2)
	dl.t.Reset(d)
	return dl
}

func (dl *deadlineTimer) fire() {
	dl.mu.Lock()
	target := dl.target
	dl.mu.Unlock()
	target.expire()
	dl.release()
}

// stop stops the deadline and lets go of it. If the timer has fired already, its expire may
// still run: the target must then find itself ended.
func (dl *deadlineTimer) stop() {
	if dl.t.Stop() {
		dl.release() // it will not fire: the timer's share goes too
	}
	dl.release()
}

func (dl *deadlineTimer) release() {
	if dl.refs.Add(-1) == 0 {
		dl.mu.Lock()
		dl.target = nil
		dl.mu.Unlock()
		deadlines.Put(dl)
	}
}
