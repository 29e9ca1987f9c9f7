package r4c

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// RetryConfig configures a retry: failed attempts are run again after a wait. A zero field
// means "not set here" (see AdaptiveLimitConfig).
type RetryConfig struct {
	// MaxAttempts is the number of attempts, the first one included (default 3).
	MaxAttempts int
	// Wait is the wait before the first retry (default 500ms). Use NoWait to retry at once.
	Wait time.Duration
	// Multiplier grows the wait after each retry: wait x Multiplier^(n-1) before retry n
	// (default 1: a constant wait; above 1: exponential backoff).
	Multiplier float64
	// MaxWait caps the wait, jitter included (default 0: no cap). Use NoWait to remove a cap set
	// by a lower layer.
	//
	// An error that says when to try again (a method RetryAfter() time.Duration anywhere in its
	// tree: an open breaker's *CircuitOpenError, a rate limiter's *RateLimitedError, an HTTP
	// response's Retry-After through r4chttp) is waited for: the wait is the longer of the
	// backoff and RetryAfter. When RetryAfter is longer than MaxWait, the retry gives up at once
	// and returns that error, since no attempt could succeed before then; a negative RetryAfter
	// (a gRPC server's negative pushback) says not to try again.
	MaxWait time.Duration
	// Jitter randomises each wait by up to this fraction either way, in [0, 1) (default 0). Use
	// NoJitter to remove jitter set by a lower layer.
	Jitter float64
	// RetryOn lists the errors that are retried (errors.Is); empty (the default) retries every
	// error but those in AbortOn.
	RetryOn []error
	// AbortOn lists the errors that are never retried (default: none).
	AbortOn []error
	// Enabled turns the retry Off (one attempt) or back On.
	Enabled Toggle
	// Config names a configuration registered with WithConfig to start from.
	Config string
}

// NoJitter is the value of RetryConfig.Jitter for no jitter: the zero value means "not set here".
const NoJitter = -1.0

const policyRetry = "retry"

// policyName returns "retry".
func (RetryConfig) policyName() string { return policyRetry }

func (c RetryConfig) addTo(l layer, scope string, named bool) error {
	return addToLayer(&retrySpec, c, l, scope, named)
}

func (c RetryConfig) namedConfig() string { return c.Config }

var retrySpec = policySpec[RetryConfig]{
	main:   "maxAttempts",
	name:   policyRetry,
	kind:   KindRetry,
	goType: "r4c.RetryConfig",
	defaults: RetryConfig{MaxAttempts: 3, Wait: 500 * time.Millisecond, Multiplier: 1, MaxWait: NoWait,
		Jitter: NoJitter, RetryOn: []error{}, AbortOn: []error{}, Enabled: On},
	named: func(c *RetryConfig) *string { return &c.Config },
	settings: []setting[RetryConfig]{
		intSetting("maxAttempts", "at least 1",
			func(c *RetryConfig) *int { return &c.MaxAttempts }, atLeastOne, codeLimitBelowOne).eg("5").
			describe("The number of attempts, the first one included."),
		waitSetting("wait", func(c *RetryConfig) *time.Duration { return &c.Wait }).eg("1s").
			describe("The wait before the first retry (0 retries at once); it is spent outside every inner policy and holds no slot."),
		floatSetting("multiplier", "at least 1",
			func(c *RetryConfig) *float64 { return &c.Multiplier }, func(v float64) bool { return v >= 1 && v < inf }).eg("2").
			describe("Grows the wait after each retry (exponential backoff above 1)."),
		waitSetting("maxWait", func(c *RetryConfig) *time.Duration { return &c.MaxWait }).eg("10s").
			describe("Caps the wait; 0 means no cap."),
		fractionSetting("jitter", func(c *RetryConfig) *float64 { return &c.Jitter }).eg("0.2").
			describe("Randomises each wait by up to this fraction either way."),
		errorsSetting("retryOn", "a list of errors, matched with errors.Is; no nil entries",
			func(c *RetryConfig) *[]error { return &c.RetryOn }).eg("net.ErrClosed").
			describe("The errors that are retried; empty retries every error but those in abortOn."),
		errorsSetting("abortOn", "a list of errors, matched with errors.Is; no nil entries",
			func(c *RetryConfig) *[]error { return &c.AbortOn }).eg("r4c.ErrCircuitOpen").
			describe("The errors that are never retried."),
		toggleSetting(func(c *RetryConfig) *Toggle { return &c.Enabled }, "false disables the retry: one attempt."),
	},
}

// fractionSetting is a float in [0, 1), 0 written NoJitter in Go code.
func fractionSetting[C any](key string, f func(*C) *float64) setting[C] {
	s := floatSetting(key, "in [0, 1) (NoJitter for 0 in Go code)", f,
		func(v float64) bool { return (v >= 0 && v < 1) || v == NoJitter })
	format := s.format
	s.format = func(c *C) string {
		if *f(c) == NoJitter {
			return "0"
		}
		return format(c)
	}
	return s.zeroAs(func(c *C) bool { return *f(c) == 0 }, func(c *C) { *f(c) = NoJitter })
}

// RetryHandle is one retry instance of a registry. Get it with Registry.Retry.
type RetryHandle struct {
	// The calls that ended, by outcome (see RetrySnapshot); each call adds to one of them when
	// it ends, so the counters cost a call what a single count of calls would.
	succeededFirst, succeededRetried, failedFirst, failedRetried atomic.Int64
	retries, exhausted                                           atomic.Int64

	id      string
	cfg     RetryConfig
	enabled bool
	jitter  float64
	maxWait time.Duration
	clock   Clock
	reg     *Registry
}

func newRetry(reg *Registry, id string) func(RetryConfig) *RetryHandle {
	return func(cfg RetryConfig) *RetryHandle {
		return &RetryHandle{id: id, cfg: cfg, enabled: cfg.Enabled != Off, jitter: max(cfg.Jitter, 0),
			maxWait: effectiveWait(cfg.MaxWait), clock: reg.clock, reg: reg}
	}
}

// Config returns the instance's resolved configuration.
func (h *RetryHandle) Config() RetryConfig { return h.cfg }

// backoff returns the wait after failed attempt n (from 1).
func (h *RetryHandle) backoff(n int) time.Duration {
	w := float64(effectiveWait(h.cfg.Wait)) * math.Pow(h.cfg.Multiplier, float64(n-1))
	if h.maxWait > 0 && w > float64(h.maxWait) {
		w = float64(h.maxWait)
	}
	if h.jitter > 0 {
		w *= 1 + h.jitter*(2*rand.Float64()-1)
		if h.maxWait > 0 && w > float64(h.maxWait) {
			w = float64(h.maxWait) // jitter spreads a capped wait below the cap, never above
		}
	}
	if w >= float64(math.MaxInt64) { // float64(MaxInt64) is 2^63: equal already overflows
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(w)
}

// retryable reports whether err may be retried.
func (h *RetryHandle) retryable(err error) bool {
	if isIgnored(err) || matchesAny(err, h.cfg.AbortOn) {
		return false
	}
	return len(h.cfg.RetryOn) == 0 || matchesAny(err, h.cfg.RetryOn)
}

// RetrySnapshot is a reading of a retry's counters. A call counts in one of the four outcomes
// when it ends (as resilience4j counts them): with or without a retry, successful or failed (a
// failure is the call's error as the retry returns it, before any fallback; a caller's
// cancellation is a failure too).
type RetrySnapshot struct {
	ID          string
	Enabled     bool
	MaxAttempts int
	// Calls counts the calls that went through the retry and ended: the sum of the four
	// outcomes below.
	Calls                  int64
	SuccessfulWithoutRetry int64 // succeeded at the first attempt
	SuccessfulWithRetry    int64 // succeeded at a later attempt
	FailedWithoutRetry     int64 // failed at the first attempt, with an error not retried
	FailedWithRetry        int64 // failed after at least one retry
	Retries                int64 // attempts after the first
	Exhausted              int64 // calls whose every attempt failed (counted in FailedWithRetry)
}

// Snapshot returns the retry's counters.
func (h *RetryHandle) Snapshot() RetrySnapshot {
	s := RetrySnapshot{ID: h.id, Enabled: h.enabled, MaxAttempts: h.cfg.MaxAttempts,
		SuccessfulWithoutRetry: h.succeededFirst.Load(), SuccessfulWithRetry: h.succeededRetried.Load(),
		FailedWithoutRetry: h.failedFirst.Load(), FailedWithRetry: h.failedRetried.Load(),
		Retries: h.retries.Load(), Exhausted: h.exhausted.Load()}
	s.Calls = s.SuccessfulWithoutRetry + s.SuccessfulWithRetry + s.FailedWithoutRetry + s.FailedWithRetry
	return s
}

// ended counts a call that ended after attempts attempts with err.
func (h *RetryHandle) ended(attempts int, err error) {
	switch {
	case err == nil && attempts <= 1:
		h.succeededFirst.Add(1)
	case err == nil:
		h.succeededRetried.Add(1)
	case attempts <= 1:
		h.failedFirst.Add(1)
	default:
		h.failedRetried.Add(1)
	}
}

func (h *RetryHandle) snapshotAny() any { return h.Snapshot() }

// Retry returns the retry instance id, or an error with code R4C-REG-009.
func (r *Registry) Retry(id string) (*RetryHandle, error) {
	return lookup[*RetryHandle](r, policyRetry, id)
}

// retryStage runs the rest of the pipeline up to MaxAttempts times. The wait between attempts
// is spent here, outside every inner policy: it holds no slot of an inner limit or bulkhead.
// A failure once the caller's context is done is never retried; the caller's cancellation
// during a wait ends the call at once with the context's error.
func retryStage[T any](h *RetryHandle) stage[T] {
	return func(next call[T]) call[T] {
		return func(ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
			for attempt := 1; ; attempt++ {
				v, err := next(ctx, fn)
				if err == nil || ctx.Err() != nil || !h.retryable(err) {
					h.ended(attempt, err)
					return v, err
				}
				wait, final := h.failed(attempt, err)
				if final != nil {
					h.ended(attempt, final)
					var zero T
					return zero, final
				}
				if err := sleep(ctx, h.clock, wait); err != nil {
					h.ended(attempt, err)
					var zero T
					return zero, err
				}
			}
		}
	}
}

// failed decides what follows failed attempt n (from 1), whose error is retryable: the wait
// before the next attempt, or, after the last attempt, the call's final error.
func (h *RetryHandle) failed(n int, err error) (wait time.Duration, final error) {
	if n >= h.cfg.MaxAttempts {
		h.exhausted.Add(1)
		return 0, &RetryExhaustedError{ID: h.id, Attempts: n, Last: err}
	}
	wait = h.backoff(n)
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		switch d := ra.RetryAfter(); {
		case d < 0:
			return 0, err // the error says not to try again
		case d > wait:
			if h.maxWait > 0 && d > h.maxWait {
				return 0, err // the next attempt could not succeed before MaxWait: give up now
			}
			wait = d
		}
	}
	h.retries.Add(1)
	if h.reg.observed {
		h.reg.publish(Event{Type: EventRetried, Kind: KindRetry, Instance: h.id, Attempt: n, Duration: wait, Err: err})
	}
	return wait, nil
}

// sleep waits d on clock, or returns ctx's error if ctx is done first.
func sleep(ctx context.Context, clock Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := clock.NewTimer(d)
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		t.Stop()
		return ctx.Err()
	}
}

// String writes the configuration as its keys and values, as docs/configuration.md documents
// them ("retry{...}"); settings not set are left out.
func (c RetryConfig) String() string { return retrySpec.text(c) }
