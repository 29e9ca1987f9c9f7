package r4c

import (
	"context"
	"math"
	"reflect"
	"sync"
	"time"
)

// callCtx is the context a function receives from an asynchronous call or a timeout: the
// caller's context with its own cancellation and, under a timeout, a deadline on the registry's
// clock. It is built into the state of the call (no allocation of its own), makes its Done
// channel only when asked for, and computes its deadline only when asked for (a wall-clock read
// is not free).
//
// It is cancelled by the call, not by watching its parent: whoever cancels the call (the
// caller's context, the returned future, the timeout) cancels it.
//
// Contexts derived from it with the standard library register through its AfterFunc method, so
// deriving one starts no goroutine. Err is context.DeadlineExceeded once the timeout fired,
// context.Canceled otherwise; context.Cause returns the same (the timeout's own error is what
// the call returns).
type callCtx struct {
	parent context.Context
	clock  Clock
	until  int64 // the deadline as a reading of clock.Nanotime; 0: none of its own

	mu       sync.Mutex
	done     chan struct{} // made when first asked for
	err      error
	deadline time.Time // computed from until when first asked for
	afters   []*afterFunc
}

// afterFunc is a function registered with callCtx.AfterFunc; f is nil once it ran or stopped.
type afterFunc struct{ f func() }

func (c *callCtx) init(parent context.Context, clock Clock, until int64) {
	c.parent, c.clock, c.until = parent, clock, until
}

// Deadline returns the earlier of the parent's deadline and the timeout's.
func (c *callCtx) Deadline() (time.Time, bool) {
	pd, ok := c.parent.Deadline()
	if c.until == 0 {
		return pd, ok
	}
	c.mu.Lock()
	if c.deadline.IsZero() {
		c.deadline = c.clock.Now().Add(time.Duration(c.until - c.clock.Nanotime()))
	}
	d := c.deadline
	c.mu.Unlock()
	if ok && pd.Before(d) {
		return pd, true
	}
	return d, true
}

// Done returns a channel closed when the context is cancelled.
func (c *callCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		if c.err != nil {
			return closedDone
		}
		c.done = make(chan struct{})
	}
	return c.done
}

// Err returns the context's error: its own once cancelled, else its parent's.
func (c *callCtx) Err() error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.parent.Err()
}

// cancelCtxType is the standard library's cancellable context, which context.Cause and the
// derivation of child contexts find through Value.
var cancelCtxType = reflect.TypeOf(func() any { ctx, cancel := context.WithCancel(context.Background()); defer cancel(); return ctx }())

// Value returns the parent's value for key, except the parent's cancellable context, which the
// standard library looks up to read a cause or to attach a child: this context cancels on its
// own, so neither must reach past it (the context package's own WithoutCancel does the same).
func (c *callCtx) Value(key any) any {
	v := c.parent.Value(key)
	if _, ok := key.(*int); ok && v != nil && reflect.TypeOf(v) == cancelCtxType {
		return nil
	}
	return v
}

// AfterFunc arranges for f to run in its own goroutine once the context is cancelled (at once
// if it is). The returned stop reports whether it unregistered f before it ran. The standard
// library uses it to attach derived contexts without a goroutine each.
func (c *callCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	a := &afterFunc{f: f}
	c.afters = append(c.afters, a)
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if a.f == nil {
			return false
		}
		a.f = nil
		return true
	}
}

// cancel cancels the context with err (context.Canceled or context.DeadlineExceeded); later
// calls change nothing.
func (c *callCtx) cancel(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	if c.done == nil {
		c.done = closedDone
	} else {
		close(c.done)
	}
	afters := c.afters
	c.afters = nil
	var run []func()
	for _, a := range afters {
		if a.f != nil {
			run = append(run, a.f)
			a.f = nil
		}
	}
	c.mu.Unlock()
	for _, f := range run {
		go f()
	}
}

// addSat returns a+b for b >= 0, or math.MaxInt64 where that overflows: the deadline of the
// longest timeout is at the end of time, not in the past.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
