package r4c

import "time"

// Clock is the source of time for every time-based decision of a Registry: the monotonic reads
// that measure a call (and tell a rate limiter's period or an open breaker's wait), and the
// timers that timeouts, retry waits, hedge delays and waits for a bulkhead slot or a rate
// permit schedule.
//
// The system clock (SystemClock) is the default. Tests pass r4ctest.NewManualClock to
// WithClock so that latencies, windows and timers move only when the test says so.
//
// Implementations must be safe for concurrent use.
type Clock interface {
	// Nanotime returns a monotonic reading in nanoseconds. Only differences between two
	// readings of the same clock mean anything; the value is not related to wall time.
	Nanotime() int64
	// Now returns the current wall time.
	Now() time.Time
	// NewTimer returns a timer that sends the time on its channel once d has passed.
	NewTimer(d time.Duration) Timer
	// AfterFunc returns a timer that calls f once d has passed. The system clock calls f in its
	// own goroutine; a manual clock calls it in the goroutine that advances the clock.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a single-shot timer made by a Clock. Its methods mirror those of *time.Timer.
type Timer interface {
	// C returns the channel on which the timer delivers the time; nil for AfterFunc timers.
	C() <-chan time.Time
	// Stop prevents the timer from firing. It reports whether the call stopped the timer,
	// false if it had already fired or been stopped.
	Stop() bool
	// Reset changes the timer to fire once d has passed from now. It reports whether the timer
	// had been active.
	Reset(d time.Duration) bool
}

// SystemClock returns the clock backed by package time. Its Nanotime is the cheapest monotonic
// read the standard library offers: time.Since on a fixed start reads only the runtime's
// monotonic clock (not the wall clock, which time.Now also reads), about half the cost of
// time.Now on the machines we measured (see docs/performance.md).
func SystemClock() Clock { return systemClock{} }

// processStart anchors the system clock's Nanotime; it carries a monotonic reading.
var processStart = time.Now()

type systemClock struct{}

func (systemClock) Nanotime() int64 { return int64(time.Since(processStart)) }
func (systemClock) Now() time.Time  { return time.Now() }

func (systemClock) NewTimer(d time.Duration) Timer {
	return systemTimer{time.NewTimer(d)}
}

func (systemClock) AfterFunc(d time.Duration, f func()) Timer {
	return systemTimer{time.AfterFunc(d, f)}
}

type systemTimer struct{ t *time.Timer }

func (t systemTimer) C() <-chan time.Time        { return t.t.C }
func (t systemTimer) Stop() bool                 { return t.t.Stop() }
func (t systemTimer) Reset(d time.Duration) bool { return t.t.Reset(d) }
