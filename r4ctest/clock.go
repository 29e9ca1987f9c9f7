// Package r4ctest helps test code that uses r4c: a manual clock that makes every time-based
// behaviour of a registry deterministic.
package r4ctest

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/heapq"
)

// Epoch is the instant at which every ManualClock starts.
var Epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// ManualClock is an r4c.Clock that moves only when Advance is called. Latencies measured with it
// are exactly the time advanced while the call ran, windows end when Advance passes them, and
// timers fire, in order, inside Advance. It is safe for concurrent use.
type ManualClock struct {
	now atomic.Int64 // nanoseconds since Epoch

	mu      sync.Mutex
	goal    int64                    // the sum of every Advance so far: where the clock is heading
	timers  *heapq.Heap[manualTimer] // made on first use, so the zero ManualClock works
	seq     uint64
	changed chan struct{} // closed and replaced whenever a timer is scheduled
}

var _ r4c.Clock = (*ManualClock)(nil)

// NewManualClock returns a manual clock reading Epoch, with no timers.
func NewManualClock() *ManualClock { return &ManualClock{} }

// Nanotime returns the nanoseconds advanced since the clock was made.
func (c *ManualClock) Nanotime() int64 { return c.now.Load() }

// Now returns Epoch plus the time advanced.
func (c *ManualClock) Now() time.Time { return Epoch.Add(time.Duration(c.now.Load())) }

// Advance moves the clock forward by d (a negative d counts as zero) and fires, in order of
// their due time (then of creation), every timer due by the new time, with the clock reading
// each timer's due time while it fires. Channel timers send without blocking; AfterFunc
// functions run in the calling goroutine. Timers that firing creates fire too if they fall due.
// Concurrent Advances add up: the clock ends at the sum of them all.
func (c *ManualClock) Advance(d time.Duration) {
	if d < 0 {
		d = 0
	}
	c.mu.Lock()
	c.goal = addSat(c.goal, int64(d))
	target := c.goal
	c.mu.Unlock()
	for {
		c.mu.Lock()
		t := c.timersLocked().Min()
		if t == nil || t.when > target {
			if target > c.now.Load() { // never backwards, even with concurrent Advances
				c.now.Store(target)
			}
			c.mu.Unlock()
			return
		}
		c.timers.Pop()
		if t.when > c.now.Load() {
			c.now.Store(t.when)
		}
		c.mu.Unlock()
		t.fire()
	}
}

// WaitPending blocks until at least n timers are pending, or ctx is done. Tests use it to let
// a call running in another goroutine schedule its timer (a timeout, a retry's wait, a hedge's
// delay) before they Advance past it.
func (c *ManualClock) WaitPending(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		if c.timersLocked().Len() >= n {
			c.mu.Unlock()
			return nil
		}
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Pending returns the number of timers scheduled and not yet fired or stopped.
func (c *ManualClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timersLocked().Len()
}

// timersLocked returns the heap of pending timers, making it on first use. c.mu must be held.
func (c *ManualClock) timersLocked() *heapq.Heap[manualTimer] {
	if c.timers == nil {
		c.timers = heapq.New(earlier, func(t *manualTimer) *int { return &t.index })
	}
	return c.timers
}

// earlier orders timers by due time, then creation.
func earlier(a, b *manualTimer) bool {
	if a.when != b.when {
		return a.when < b.when
	}
	return a.seq < b.seq
}

// NewTimer returns a timer that sends the clock's time on its channel (buffered, capacity one)
// once the clock has advanced by d. A timer with d <= 0 fires at once.
func (c *ManualClock) NewTimer(d time.Duration) r4c.Timer {
	t := &manualTimer{c: c, ch: make(chan time.Time, 1), index: -1}
	t.Reset(d)
	return t
}

// AfterFunc returns a timer that calls f in the goroutine of the Advance that makes it due.
// A timer with d <= 0 is due at once and runs on the next Advance (Advance(0) will do).
func (c *ManualClock) AfterFunc(d time.Duration, f func()) r4c.Timer {
	t := &manualTimer{c: c, f: f, index: -1}
	t.Reset(d)
	return t
}

type manualTimer struct {
	c     *ManualClock
	ch    chan time.Time
	f     func()
	when  int64
	seq   uint64
	index int // position in the heap, -1 when not scheduled
}

func (t *manualTimer) C() <-chan time.Time { return t.ch }

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.unscheduleLocked()
}

func (t *manualTimer) unscheduleLocked() bool {
	return t.c.timersLocked().Remove(t)
}

func (t *manualTimer) Reset(d time.Duration) bool {
	c := t.c
	c.mu.Lock()
	active := t.unscheduleLocked()
	if d <= 0 && t.f == nil {
		c.mu.Unlock()
		t.fire()
		return active
	}
	t.when = addSat(c.now.Load(), int64(max(d, 0)))
	c.seq++
	t.seq = c.seq
	c.timersLocked().Push(t)
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
	c.mu.Unlock()
	return active
}

func (t *manualTimer) fire() {
	if t.f != nil {
		t.f()
		return
	}
	select {
	case t.ch <- t.c.Now():
	default:
	}
}

// addSat returns a+b for b >= 0, or math.MaxInt64 where that overflows: a timer of the longest
// duration is due at the end of time, not in the past.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
