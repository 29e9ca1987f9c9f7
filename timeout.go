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

// PolicyName returns "timeout".
func (TimeoutConfig) PolicyName() string { return policyTimeout }

func (c TimeoutConfig) addTo(l layer, scope string, named bool) error {
	return addToLayer(&timeoutSpec, c, l, scope, named)
}

func (c TimeoutConfig) namedConfig() string { return c.Config }

var timeoutSpec = policySpec[TimeoutConfig]{
	name:     policyTimeout,
	kind:     KindTimeout,
	goType:   "r4c.TimeoutConfig",
	defaults: TimeoutConfig{Timeout: time.Second, Enabled: On},
	named:    func(c *TimeoutConfig) *string { return &c.Config },
	settings: []setting[TimeoutConfig]{
		durationSetting("timeout", "a positive duration",
			func(c *TimeoutConfig) *time.Duration { return &c.Timeout }, positive, CodeInvalidSetting).eg("2s").
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

// ID returns the instance id.
func (h *TimeoutHandle) ID() string { return h.id }

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

// timeoutCtx is the context of a call under a timeout. Its deadline comes from the registry's
// clock (so a manual clock drives it), and once the timeout fires its Err is
// context.DeadlineExceeded and its cause the *CallTimeoutError. Contexts derived from it see
// context.Canceled with that cause.
type timeoutCtx struct {
	context.Context
	cancel   context.CancelCauseFunc
	deadline time.Time
	expired  atomic.Bool
}

func (c *timeoutCtx) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *timeoutCtx) Err() error {
	if err := c.Context.Err(); err != nil && c.expired.Load() {
		return context.DeadlineExceeded
	}
	return c.Context.Err()
}

// result is the outcome of a call run in another goroutine; panicked holds a recovered panic.
type result[T any] struct {
	v        T
	err      error
	panicked *PanicError
}

// runAsync runs next(ctx, fn) in a new goroutine and delivers its result (or its panic) on a
// buffered channel, so that the goroutine never blocks even if nobody reads it.
func runAsync[T any](ctx context.Context, next call[T], fn func(context.Context) (T, error), out chan<- result[T]) {
	go func() {
		defer func() {
			if r := recover(); r != nil {
				out <- result[T]{panicked: newPanicError(r)}
			}
		}()
		v, err := next(ctx, fn)
		out <- result[T]{v: v, err: err}
	}()
}

// expired counts and publishes a timeout and returns its error.
func (h *TimeoutHandle) expired() error {
	h.timedOut.Add(1)
	if h.reg.observed {
		h.reg.publish(Event{Type: EventTimedOut, Kind: KindTimeout, Instance: h.id, Duration: h.cfg.Timeout})
	}
	return h.err
}

// timeoutStage bounds the rest of the pipeline. The rest runs in its own goroutine so that the
// call returns at the deadline even if the function ignores its context; the abandoned
// function's result is discarded when it returns. The timer is stopped when the call ends first.
func timeoutStage[T any](h *TimeoutHandle) stage[T] {
	return func(next call[T]) call[T] {
		return func(ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
			cctx, cancel := context.WithCancelCause(ctx)
			tctx := &timeoutCtx{Context: cctx, cancel: cancel, deadline: h.clock.Now().Add(h.cfg.Timeout)}
			timer := h.clock.AfterFunc(h.cfg.Timeout, func() {
				tctx.expired.Store(true)
				cancel(h.err)
			})
			done := make(chan result[T], 1)
			runAsync(tctx, next, fn, done)
			var r result[T]
			select {
			case r = <-done:
			case <-cctx.Done():
				select {
				case r = <-done: // finished at the deadline: judged below
				default:
					timer.Stop() // when the caller cancelled, the timer is still pending
					var zero T
					if tctx.expired.Load() {
						return zero, h.expired()
					}
					return zero, ctx.Err() // the caller cancelled
				}
			}
			timer.Stop()
			cancel(nil)
			if r.panicked != nil {
				panic(r.panicked.Value)
			}
			if r.err != nil && tctx.expired.Load() {
				// Failed once the timeout had fired (typically with its context's error): a
				// timeout, whichever goroutine noticed first.
				var zero T
				return zero, h.expired()
			}
			return r.v, r.err
		}
	}
}
