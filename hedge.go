package r4c

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// HedgeConfig configures a hedge: when an attempt is slow, extra attempts are launched and the
// first success wins. A zero field means "not set here" (see AdaptiveLimitConfig).
//
// Each attempt runs the policies inside the hedge (CircuitBreaker, RateLimiter, AdaptiveLimit,
// Timeout, Bulkhead) and the function in its own goroutine, so the function may run several
// times at once: it must be safe for concurrent use, and should be idempotent. The attempts
// that lose have their context cancelled and their results discarded; a failure launches
// nothing (use a Retry, outside the hedge, for that), and a rejection by an inner policy stops
// further launches.
type HedgeConfig struct {
	// Delay is how long an attempt runs before the next one is launched (default 100ms).
	Delay time.Duration
	// MaxHedges is how many extra attempts may be launched (default 1).
	MaxHedges int
	// Enabled turns the hedge Off (one attempt) or back On.
	Enabled Toggle
	// Config names a configuration registered with WithConfig to start from.
	Config string
}

const policyHedge = "hedge"

// policyName returns "hedge".
func (HedgeConfig) policyName() string { return policyHedge }

func (c HedgeConfig) addTo(l layer, scope string, named bool) error {
	return addToLayer(&hedgeSpec, c, l, scope, named)
}

func (c HedgeConfig) namedConfig() string { return c.Config }

var hedgeSpec = policySpec[HedgeConfig]{
	main:     "delay",
	name:     policyHedge,
	kind:     KindHedge,
	goType:   "r4c.HedgeConfig",
	defaults: HedgeConfig{Delay: 100 * time.Millisecond, MaxHedges: 1, Enabled: On},
	named:    func(c *HedgeConfig) *string { return &c.Config },
	settings: []setting[HedgeConfig]{
		durationSetting("delay", "a positive duration",
			func(c *HedgeConfig) *time.Duration { return &c.Delay }, positive, codeInvalidSetting).eg("50ms").
			describe("How long an attempt runs before the next one is launched."),
		intSetting("maxHedges", "at least 1",
			func(c *HedgeConfig) *int { return &c.MaxHedges }, atLeastOne, codeInvalidSetting).eg("2").
			describe("How many extra attempts may be launched."),
		toggleSetting(func(c *HedgeConfig) *Toggle { return &c.Enabled }, "false disables the hedge: one attempt."),
	},
}

// HedgeHandle is one hedge instance of a registry. Get it with Registry.Hedge.
type HedgeHandle struct {
	calls, hedges, hedgeWins atomic.Int64

	id      string
	cfg     HedgeConfig
	enabled bool
	clock   Clock
	reg     *Registry
}

func newHedge(reg *Registry, id string) func(HedgeConfig) *HedgeHandle {
	return func(cfg HedgeConfig) *HedgeHandle {
		return &HedgeHandle{id: id, cfg: cfg, enabled: cfg.Enabled != Off, clock: reg.clock, reg: reg}
	}
}

// Config returns the instance's resolved configuration.
func (h *HedgeHandle) Config() HedgeConfig { return h.cfg }

// HedgeSnapshot is a reading of a hedge's counters.
type HedgeSnapshot struct {
	ID        string
	Enabled   bool
	Delay     time.Duration
	MaxHedges int
	Calls     int64 // calls that went through the hedge
	Hedges    int64 // extra attempts launched
	HedgeWins int64 // calls won by an extra attempt
}

// Snapshot returns the hedge's counters.
func (h *HedgeHandle) Snapshot() HedgeSnapshot {
	return HedgeSnapshot{ID: h.id, Enabled: h.enabled, Delay: h.cfg.Delay, MaxHedges: h.cfg.MaxHedges,
		Calls: h.calls.Load(), Hedges: h.hedges.Load(), HedgeWins: h.hedgeWins.Load()}
}

func (h *HedgeHandle) snapshotAny() any { return h.Snapshot() }

// Hedge returns the hedge instance id, or an error with code R4C-REG-009.
func (r *Registry) Hedge(id string) (*HedgeHandle, error) {
	return lookup[*HedgeHandle](r, policyHedge, id)
}

// hedgeBufferMax caps the capacity of a call's result channel. Up to that many attempts (and
// with the default MaxHedges, every attempt) deliver their result without waiting; a later
// attempt that finds the channel full waits for the call to read it or to end, so no goroutine
// blocks forever and a large MaxHedges costs no large allocation per call.
const hedgeBufferMax = 16

// errAttemptExited is the result of an attempt whose goroutine exited without returning (the
// function called runtime.Goexit): it counts as a failure, so the call does not wait forever.
var errAttemptExited = errors.New("r4c: hedge: an attempt exited without returning (runtime.Goexit)")

// hedgeResult is the outcome of one attempt of a hedged call, numbered from 1.
type hedgeResult[T any] struct {
	result[T]
	attempt int
}

// launchAttempt runs next(ctx, fn) as attempt n in a new goroutine and delivers its result (or
// its panic) on out. The send never blocks while out has room; when it is full, the goroutine
// waits until the call reads it or ctx (cancelled when the call returns) is done.
func launchAttempt[T any](ctx context.Context, next call[T], fn func(context.Context) (T, error), n int, out chan<- hedgeResult[T]) {
	go func() {
		r := hedgeResult[T]{attempt: n}
		returned := false
		defer func() {
			if p := recover(); p != nil {
				r.result = result[T]{panicked: newPanicError(p)}
			} else if !returned {
				r.result = result[T]{err: errAttemptExited}
			}
			select {
			case out <- r:
			default:
				select {
				case out <- r:
				case <-ctx.Done(): // the call has returned (or is returning): nobody needs r
				}
			}
		}()
		r.v, r.err = next(ctx, fn)
		returned = true
	}()
}

// launched counts and publishes the launch of attempt n (from 2).
func (h *HedgeHandle) launched(n int) {
	h.hedges.Add(1)
	if h.reg.observed {
		h.reg.publish(Event{Type: EventHedged, Kind: KindHedge, Instance: h.id, Attempt: n})
	}
}

// hedgeRejected reports whether err is the rejection of an inner policy, which stops a hedge
// from launching more attempts: they would be rejected too, and would only add load.
func hedgeRejected(err error) bool {
	return errors.Is(err, ErrLimitExceeded) || errors.Is(err, ErrCircuitOpen) ||
		errors.Is(err, ErrBulkheadFull) || errors.Is(err, ErrRateLimited)
}

// hedgeStage runs the rest of the pipeline as a first attempt and, each time Delay passes on
// the registry's clock without a success, launches another, up to MaxHedges more. Attempts run
// in their own goroutines with a context derived from the caller's, cancelled when the call
// returns. The first success wins at once and the other attempts are abandoned (their results
// are discarded when they return). A failure ends the call only when no other attempt is
// running; failures launch nothing (that is Retry's job). A rejection by an inner policy
// (ErrLimitExceeded, ErrCircuitOpen, ErrBulkheadFull, ErrRateLimited) stops further launches.
// The caller's cancellation ends the call at once with ctx.Err(). A panic in an attempt is
// re-raised in the caller's goroutine. The delay timer is stopped when the call returns.
func hedgeStage[T any](h *HedgeHandle) stage[T] {
	maxHedges := h.cfg.MaxHedges
	buffer := hedgeBufferMax
	if maxHedges < hedgeBufferMax-1 {
		buffer = maxHedges + 1
	}
	return func(next call[T]) call[T] {
		return func(ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
			h.calls.Add(1)
			actx, cancel := context.WithCancel(ctx)
			defer cancel() // abandons the attempts still running
			results := make(chan hedgeResult[T], buffer)
			launchAttempt(actx, next, fn, 1, results)
			launched, running := 1, 1
			timer := h.clock.NewTimer(h.cfg.Delay)
			defer timer.Stop()
			delay := timer.C() // nil once no attempt may be launched any more

			// settle handles a delivered result: done reports that the call returns (v, err).
			settle := func(r hedgeResult[T]) (done bool, v T, err error) {
				running--
				if r.panicked != nil {
					panic(r.panicked.Value) // the deferred calls stop the timer and the attempts
				}
				if r.err == nil {
					if r.attempt > 1 {
						h.hedgeWins.Add(1)
					}
					return true, r.v, nil
				}
				if delay != nil && hedgeRejected(r.err) {
					timer.Stop()
					delay = nil
				}
				if running > 0 {
					return false, v, nil // another attempt may still succeed
				}
				if cerr := ctx.Err(); cerr != nil {
					return true, v, cerr // the caller cancelled: its error, whatever the attempt said
				}
				return true, v, r.err
			}

			for {
				select {
				case r := <-results:
					if done, v, err := settle(r); done {
						return v, err
					}
				case <-delay:
					if ctx.Err() != nil {
						continue // the caller cancelled: the next round returns
					}
					launched++
					h.launched(launched)
					launchAttempt(actx, next, fn, launched, results)
					running++
					if launched <= maxHedges {
						timer.Reset(h.cfg.Delay)
					} else {
						delay = nil
					}
				case <-ctx.Done():
					// A result delivered by now still wins over the cancellation, as in
					// timeoutStage; otherwise the caller's error, at once.
					for {
						select {
						case r := <-results:
							if done, v, err := settle(r); done && err == nil {
								return v, nil
							}
						default:
							var zero T
							return zero, ctx.Err()
						}
					}
				}
			}
		}
	}
}

// String writes the configuration as its keys and values, as docs/configuration.md documents
// them ("hedge{...}"); settings not set are left out.
func (c HedgeConfig) String() string { return hedgeSpec.text(c) }
