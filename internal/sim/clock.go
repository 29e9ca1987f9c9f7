package sim

import (
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// Epoch is the wall time at which every simulation starts (plus its Scenario.ClockOffset): the
// manual clock's, a whole number of Knee's drain periods since the Unix epoch.
var Epoch = r4ctest.Epoch

// Clock is the simulation's r4c.Clock: it reads the simulated time, and its timers are events of
// the simulation, fired in order by the event loop. It is not safe for concurrent use: a
// simulation runs in one goroutine.
type Clock struct {
	s *Sim
}

var _ r4c.Clock = Clock{}

// Nanotime returns the simulated nanoseconds since the start.
func (c Clock) Nanotime() int64 { return c.s.now }

// Now returns the wall time: Epoch plus the scenario's ClockOffset plus the simulated time.
func (c Clock) Now() time.Time { return c.s.wall() }

// NewTimer returns a timer that sends the simulated time once d has passed.
func (c Clock) NewTimer(d time.Duration) r4c.Timer {
	t := &timer{s: c.s, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// AfterFunc returns a timer that calls f, in the event loop, once d has passed.
func (c Clock) AfterFunc(d time.Duration, f func()) r4c.Timer {
	t := &timer{s: c.s, f: f}
	t.Reset(d)
	return t
}

type timer struct {
	s  *Sim
	ch chan time.Time
	f  func()
	ev *event // the pending event, nil when not scheduled
}

func (t *timer) C() <-chan time.Time { return t.ch }

func (t *timer) Stop() bool {
	if t.ev == nil {
		return false
	}
	t.ev.cancelled = true
	t.ev = nil
	return true
}

func (t *timer) Reset(d time.Duration) bool {
	active := t.Stop()
	t.ev = t.s.schedule(t.s.now+max(0, int64(d)), evTimer, nil)
	t.ev.timer = t
	return active
}

func (t *timer) fire() {
	t.ev = nil
	if t.f != nil {
		t.f()
		return
	}
	select {
	case t.ch <- t.s.wall():
	default:
	}
}

// wall returns the wall time the simulation's clock reads now.
func (s *Sim) wall() time.Time { return Epoch.Add(s.sc.ClockOffset + time.Duration(s.now)) }
