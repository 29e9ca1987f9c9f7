package r4c

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// TimeoutConfig configures a timeout: it bounds a call's duration and cancels its context. A
// zero field means "not set here" (see AdaptiveLimitConfig).
type TimeoutConfig struct {
	// Timeout is how long a call may run (default 1s).
	Timeout time.Duration
	// Enabled turns the timeout Off or back On.
	Enabled Toggle
	// Config names a configuration registered with WithConfig to start from.
	Config string
}

const policyTimeout = "timeout"

// policyName returns "timeout".
func (TimeoutConfig) policyName() string { return policyTimeout }

func (c TimeoutConfig) addTo(l layer, scope string, named bool) error {
	return addToLayer(&timeoutSpec, c, l, scope, named)
}

func (c TimeoutConfig) namedConfig() string { return c.Config }

var timeoutSpec = policySpec[TimeoutConfig]{
	main:     "timeout",
	name:     policyTimeout,
	kind:     KindTimeout,
	goType:   "r4c.TimeoutConfig",
	defaults: TimeoutConfig{Timeout: time.Second, Enabled: On},
	named:    func(c *TimeoutConfig) *string { return &c.Config },
	settings: []setting[TimeoutConfig]{
		durationSetting("timeout", "a positive duration",
			func(c *TimeoutConfig) *time.Duration { return &c.Timeout }, positive, codeInvalidSetting).eg("2s").
			describe("How long a call may run before it fails with ErrCallTimeout and its context is cancelled."),
		toggleSetting(func(c *TimeoutConfig) *Toggle { return &c.Enabled }, "false disables the timeout."),
	},
}

// TimeoutHandle is one timeout instance of a registry. Get it with Registry.Timeout.
type TimeoutHandle struct {
	timedOut atomic.Int64

	id      string
	cfg     TimeoutConfig
	enabled bool
	clock   Clock
	err     *CallTimeoutError
	reg     *Registry
}

func newTimeout(reg *Registry, id string) func(TimeoutConfig) *TimeoutHandle {
	return func(cfg TimeoutConfig) *TimeoutHandle {
		return &TimeoutHandle{id: id, cfg: cfg, enabled: cfg.Enabled != Off, clock: reg.clock, reg: reg,
			err: &CallTimeoutError{timeout: cfg.Timeout, instanceError: instanceError{id: id, sentinel: ErrCallTimeout,
				msg: fmt.Sprintf("r4c: call timed out after %v (timeout %q)", cfg.Timeout, id)}}}
	}
}

// Config returns the instance's resolved configuration.
func (h *TimeoutHandle) Config() TimeoutConfig { return h.cfg }

// TimeoutSnapshot is a reading of a timeout's state.
type TimeoutSnapshot struct {
	ID       string
	Enabled  bool
	Timeout  time.Duration
	TimedOut int64 // calls that ran past the timeout
}

// Snapshot returns the timeout's state.
func (h *TimeoutHandle) Snapshot() TimeoutSnapshot {
	return TimeoutSnapshot{ID: h.id, Enabled: h.enabled, Timeout: h.cfg.Timeout, TimedOut: h.timedOut.Load()}
}

func (h *TimeoutHandle) snapshotAny() any { return h.Snapshot() }

// Timeout returns the timeout instance id, or an error with code R4C-REG-009.
func (r *Registry) Timeout(id string) (*TimeoutHandle, error) {
	return lookup[*TimeoutHandle](r, policyTimeout, id)
}

// result is the outcome of a call run in another goroutine; panicked holds a recovered panic.
type result[T any] struct {
	v        T
	err      error
	panicked *PanicError
}

// expired counts and publishes a timeout and returns its error.
func (h *TimeoutHandle) expired() error {
	h.timedOut.Add(1)
	if h.reg.observed {
		h.reg.publish(Event{Type: EventTimedOut, Kind: KindTimeout, Instance: h.id, Duration: h.cfg.Timeout})
	}
	return h.err
}

// timeoutCall is one call of Execute under a timeout: the function's context and the result
// its goroutine hands back. One allocation: the context is built in.
type timeoutCall[T any] struct {
	ctx  callCtx
	next call[T]
	fn   func(context.Context) (T, error)
	r    result[T]
	sig  *signal // the goroutine's "done", from a pool
}

// run runs the rest of the pipeline in the call's goroutine and signals its result.
func (c *timeoutCall[T]) run() {
	returned := false
	defer func() {
		if !returned {
			if p := recover(); p != nil {
				c.r.panicked = newPanicError(p)
			} else {
				c.r.err = errAttemptExited
			}
		}
		c.sig.send()
	}()
	c.r.v, c.r.err = c.next(&c.ctx, c.fn)
	returned = true
}

// timeoutStage bounds the rest of the pipeline. The rest runs in its own goroutine so that the
// call returns at the deadline even if the function ignores its context; the abandoned
// function's result is discarded when it returns. The caller waits for the result, the deadline
// or its own context, whichever comes first, on a timer it stops when the result comes first.
func timeoutStage[T any](h *TimeoutHandle) stage[T] {
	return func(next call[T]) call[T] {
		return func(ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
			c := &timeoutCall[T]{next: next, fn: fn}
			c.ctx.init(ctx, h.clock, addSat(h.clock.Nanotime(), int64(h.cfg.Timeout)))
			c.sig = startSignal(h.clock, h.cfg.Timeout)
			go c.run()
			var r result[T]
			switch c.sig.wait(ctx) {
			case signalled:
				r = c.r
				c.ctx.cancel(context.Canceled)
			case deadline:
				c.ctx.cancel(context.DeadlineExceeded)
				return zero[T](), h.expired()
			default: // the caller's context is done
				c.ctx.cancel(context.Canceled)
				return zero[T](), ctx.Err()
			}
			if r.panicked != nil {
				panic(r.panicked.Value)
			}
			return r.v, r.err
		}
	}
}

// String writes the configuration as its keys and values, as docs/configuration.md documents
// them ("timeout{...}"); settings not set are left out.
func (c TimeoutConfig) String() string { return timeoutSpec.text(c) }
