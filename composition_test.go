package r4c_test

// Tests of the composition rules of docs/policies.md, one per rule, each building its
// pipeline with the configs in a scrambled order: the canonical order must apply regardless.

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
)

// aimdDrop is an AIMD limit that halves on a drop and keeps its default DropOn
// (ErrCallTimeout, ErrBulkheadFull).
var aimdDrop = r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, InitialLimit: 4, BackoffRatio: 0.5, MinWindowSamples: 1}

// "Un @Timeout adentro es la señal de sobrecarga": a call that times out fails with
// *CallTimeoutError, in DropOn by default; its latency (the timeout) enters the window and AIMD
// backs off.
func TestRuleTimeoutInsideIsADrop(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "x", r4c.TimeoutConfig{Timeout: 2 * time.Second}, aimdDrop)
	done := start(p, context.Background(), func(ctx context.Context) (string, error) { <-ctx.Done(); return "", ctx.Err() })
	waitPending(t, clock, 1)
	clock.Advance(2 * time.Second)
	if err := <-done; !errors.Is(err, r4c.ErrCallTimeout) {
		t.Fatal(err)
	}
	s := handle(t, reg, "x").Snapshot()
	if s.Limit != 2 || s.Windows != 1 || s.WindowLatency != 2*time.Second || s.InFlight != 0 {
		t.Fatalf("%+v: want the limit halved after a 2s drop", s)
	}
}

// "Lo mismo pasa con un @Bulkhead lleno adentro": a full bulkhead inside is a drop too.
func TestRuleFullBulkheadInsideIsADrop(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "x", r4c.BulkheadConfig{MaxConcurrent: 1}, aimdDrop)
	release := hold(t, p) // holds the bulkhead's only slot and one of the limit's four
	_, err := p.Execute(context.Background(), func(context.Context) (string, error) { return "", nil })
	if !errors.Is(err, r4c.ErrBulkheadFull) {
		t.Fatal(err)
	}
	release()
	// The window holds two samples, one a drop; the next call after a second ends it.
	clock.Advance(time.Second)
	mustExecute(t, p, taking(clock, 0, nil))
	if s := handle(t, reg, "x").Snapshot(); s.Limit != 2 || s.Windows != 1 || s.WindowSamples != 3 {
		t.Fatalf("%+v: want the limit halved by the bulkhead's drop", s)
	}
}

// The adaptive limit is inside the rate limiter: rejected calls have already taken a permit.
func TestRuleRejectedCallsSpendRatePermits(t *testing.T) {
	reg, _ := newRegistry(t)
	p := newPipeline[string](t, reg, "x",
		r4c.AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1},
		r4c.RateLimiterConfig{Limit: 3, Period: time.Hour})
	release := hold(t, p) // permit 1, the limit's only slot
	if _, err := p.Execute(context.Background(), taking(nil, 0, nil)); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("second call: %v", err) // permit 2 spent, rejected by the limit
	}
	if _, err := p.Execute(context.Background(), taking(nil, 0, nil)); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("third call: %v", err) // permit 3 spent
	}
	release()
	if _, err := p.Execute(context.Background(), taking(nil, 0, nil)); !errors.Is(err, r4c.ErrRateLimited) {
		t.Fatalf("fourth call: %v, want the rate limiter's rejection (its permits are spent)", err)
	}
}

// "Por defecto un @Retry de afuera la reintenta después de su espera (agrégala a abortOn para
// fallar rápido)", and "la espera de un retry está afuera del límite y no ocupa lugar".
func TestRuleOuterRetryRetriesRejectionsAndWaitsOutsideTheLimit(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "x",
		r4c.AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1, MinWindowSamples: 1},
		r4c.RetryConfig{MaxAttempts: 3, Wait: time.Second})
	h := handle(t, reg, "x")
	release := hold(t, p)
	var calls atomic.Int64
	done := start(p, context.Background(), func(context.Context) (string, error) { calls.Add(1); return "ok", nil })
	waitPending(t, clock, 1) // the first attempt was rejected; the retry waits
	if h.InFlight() != 1 {
		t.Fatalf("in flight %d during the wait: the wait must hold no slot", h.InFlight())
	}
	release()
	clock.Advance(time.Second)
	if err := <-done; err != nil || calls.Load() != 1 {
		t.Fatalf("%v after %d calls", err, calls.Load())
	}
	if s := h.Snapshot(); s.Rejected != 1 || s.InFlight != 0 {
		t.Fatalf("%+v", s)
	}

	// With ErrLimitExceeded in AbortOn, a rejection fails fast.
	reg2, clock2 := newRegistry(t)
	p2 := newPipeline[string](t, reg2, "y",
		r4c.RetryConfig{MaxAttempts: 3, Wait: time.Second, AbortOn: []error{r4c.ErrLimitExceeded}},
		r4c.AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1})
	release2 := hold(t, p2)
	defer release2()
	if _, err := p2.Execute(context.Background(), taking(clock2, 0, nil)); !errors.Is(err, r4c.ErrLimitExceeded) || clock2.Pending() != 0 {
		t.Fatalf("%v, %d timers", err, clock2.Pending())
	}
}

// "Cada intento se mide por separado": two failing attempts and a success are three samples,
// each with its own latency.
func TestRuleEachAttemptIsMeasuredSeparately(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "x",
		r4c.RetryConfig{MaxAttempts: 3, Wait: 10 * time.Second},
		r4c.AdaptiveLimitConfig{MinWindowSamples: 3, Window: time.Millisecond, DropOn: []error{errOverloaded}})
	var n atomic.Int64
	done := start(p, context.Background(), func(context.Context) (string, error) {
		if n.Add(1) < 3 {
			clock.Advance(time.Second) // each failing attempt takes 1s
			return "", errOverloaded
		}
		clock.Advance(4 * time.Second)
		return "ok", nil
	})
	waitPending(t, clock, 1)
	clock.Advance(10 * time.Second)
	waitPending(t, clock, 1)
	clock.Advance(10 * time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s := handle(t, reg, "x").Snapshot()
	if s.Windows != 1 || s.WindowSamples != 3 || s.WindowLatency != 2*time.Second {
		t.Fatalf("%+v: want one window of 3 samples averaging (1+1+4)/3 = 2s, the waits outside", s)
	}
}

// The fallback is outermost: it sees what every inner policy returns, typed by the pipeline.
func TestFallback(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "x",
		r4c.AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1},
		r4c.Fallback(func(_ context.Context, err error) (string, error) {
			if errors.Is(err, r4c.ErrLimitExceeded) {
				return "cached", nil
			}
			return "", err
		}, r4c.ErrLimitExceeded),
		r4c.RetryConfig{MaxAttempts: 2, Wait: time.Nanosecond, AbortOn: []error{errNotFound}})
	release := hold(t, p)
	done := make(chan string, 1)
	go func() { v, _ := p.Execute(context.Background(), taking(clock, 0, nil)); done <- v }()
	waitPending(t, clock, 1)
	clock.Advance(time.Nanosecond) // the retry's second attempt is rejected too
	if v := <-done; v != "cached" {
		t.Fatalf("%q", v)
	}
	release()
	// Errors not in On pass through.
	if _, err := p.Execute(context.Background(), taking(clock, 0, errNotFound)); !errors.Is(err, errNotFound) {
		t.Fatal(err)
	}
	// A fallback for another type is refused, and so is a nil function or a fallback in the registry.
	if _, err := r4c.NewPipeline[int](reg, "y", r4c.Fallback(func(context.Context, error) (string, error) { return "", nil })); r4c.ErrorCode(err) != "R4C-REG-011" {
		t.Fatalf("%v", err)
	}
	if _, err := r4c.NewPipeline[int](reg, "y", r4c.FallbackConfig[int]{}); r4c.ErrorCode(err) != "R4C-REG-011" {
		t.Fatalf("%v", err)
	}
	if _, err := r4c.NewRegistry(r4c.WithDefaults(r4c.Fallback(func(context.Context, error) (int, error) { return 0, nil }))); r4c.ErrorCode(err) != "R4C-REG-011" {
		t.Fatalf("%v", err)
	}
	// The caller's cancellation never falls back.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p2 := newPipeline[string](t, reg, "z", r4c.Fallback(func(context.Context, error) (string, error) { return "fallback", nil }))
	if v, err := p2.Execute(ctx, func(ctx context.Context) (string, error) { return "", ctx.Err() }); v == "fallback" || !errors.Is(err, context.Canceled) {
		t.Fatalf("%q %v", v, err)
	}
}

// Every policy's id is the pipeline's id, and each is visible through the registry.
func TestEveryPolicyHasAHandleAndASnapshot(t *testing.T) {
	reg, _ := newRegistry(t)
	newPipeline[string](t, reg, "all",
		r4c.BulkheadConfig{}, r4c.TimeoutConfig{}, r4c.RateLimiterConfig{}, r4c.RetryConfig{},
		r4c.CircuitBreakerConfig{}, r4c.HedgeConfig{}, r4c.AdaptiveLimitConfig{})
	if _, err := reg.Bulkhead("all"); err != nil {
		t.Error(err)
	}
	if _, err := reg.Timeout("all"); err != nil {
		t.Error(err)
	}
	if _, err := reg.RateLimiter("all"); err != nil {
		t.Error(err)
	}
	if _, err := reg.Retry("all"); err != nil {
		t.Error(err)
	}
	if cb, err := reg.CircuitBreaker("all"); err != nil || cb.State() != r4c.CircuitClosed {
		t.Error(err)
	}
	if _, err := reg.Hedge("all"); err != nil {
		t.Error(err)
	}
	s := reg.Snapshot()
	if len(s.AdaptiveLimits) != 1 || len(s.Bulkheads) != 1 || len(s.Timeouts) != 1 || len(s.RateLimiters) != 1 ||
		len(s.Retries) != 1 || len(s.CircuitBreakers) != 1 || len(s.Hedges) != 1 {
		t.Fatalf("%+v", s)
	}
	for _, f := range []func(string) error{
		func(id string) error { _, err := reg.Bulkhead(id); return err },
		func(id string) error { _, err := reg.Timeout(id); return err },
		func(id string) error { _, err := reg.RateLimiter(id); return err },
		func(id string) error { _, err := reg.Retry(id); return err },
		func(id string) error { _, err := reg.CircuitBreaker(id); return err },
		func(id string) error { _, err := reg.Hedge(id); return err },
	} {
		if err := f("nope"); r4c.ErrorCode(err) != "R4C-REG-009" {
			t.Errorf("%v", err)
		}
	}
}

// "Un @CircuitBreaker de afuera la registra como falla (agrégala a ignoreOn si un límite lleno no
// debe abrir el breaker)": by default the breaker records the limit's rejections as failures.
func TestRuleOuterBreakerRecordsRejections(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ignore []error
		want   r4c.CircuitState
	}{
		{"recorded by default", nil, r4c.CircuitOpen},
		{"ignored with IgnoreOn", []error{r4c.ErrLimitExceeded}, r4c.CircuitClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, _ := newRegistry(t)
			p := newPipeline[string](t, reg, "x",
				r4c.AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1},
				r4c.CircuitBreakerConfig{MinimumCalls: 4, SlidingWindowSize: 4, FailureRateThreshold: 50, IgnoreOn: tc.ignore})
			release := hold(t, p)
			for i := 0; i < 4; i++ {
				if _, err := p.Execute(context.Background(), taking(nil, 0, nil)); !errors.Is(err, r4c.ErrLimitExceeded) {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			release()
			cb, _ := reg.CircuitBreaker("x")
			if cb.State() != tc.want {
				t.Fatalf("state %v, want %v", cb.State(), tc.want)
			}
		})
	}
}

// "Un @Hedge deja de lanzar intentos cuando el límite rechaza uno".
func TestRuleHedgeStopsWhenTheLimitRejects(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "x",
		r4c.HedgeConfig{Delay: time.Second, MaxHedges: 3},
		r4c.AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1})
	unblock := make(chan struct{})
	done := start(p, context.Background(), func(context.Context) (string, error) { <-unblock; return "first", nil })
	waitPending(t, clock, 1)
	clock.Advance(time.Second) // the first hedge is launched and rejected by the full limit
	h, _ := reg.Hedge("x")
	for handle(t, reg, "x").Snapshot().Rejected == 0 {
		runtime.Gosched()
	}
	for clock.Pending() != 0 { // launches stop: the delay timer is stopped
		runtime.Gosched()
	}
	clock.Advance(10 * time.Second)
	close(unblock)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := h.Snapshot(); s.Hedges != 1 {
		t.Fatalf("%+v: want exactly one hedge launched", s)
	}
}
