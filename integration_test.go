package r4c_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
)

// The ways the core gives integrations (r4chttp, r4cgrpc) and users to say what an outcome
// means, to build instances without a pipeline, and to learn when to try again.

func TestDroppedIsADropWhateverDropOn(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "d", r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, InitialLimit: 10, MinWindowSamples: 1})
	status := errors.New("503 Service Unavailable")
	_, err := p.Execute(context.Background(), taking(clock, time.Second, r4c.Dropped(status)))
	if !errors.Is(err, status) || err.Error() != status.Error() {
		t.Fatalf("the mark hides the error: %v", err)
	}
	mustExecute(t, p, taking(clock, time.Millisecond, nil)) // ends the window
	if s := handle(t, reg, "d").Snapshot(); s.Drops != 1 || s.Limit != 9 {
		t.Fatalf("a Dropped error is not a drop: %+v", s)
	}
	if r4c.Dropped(nil) != nil || r4c.Ignored(nil) != nil {
		t.Fatal("marking nil is not nil")
	}
}

func TestIgnoredIsNoOutcome(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "i",
		r4c.AdaptiveLimitConfig{MinWindowSamples: 1, DropOn: []error{errOverloaded}},
		r4c.RetryConfig{MaxAttempts: 3, Wait: r4c.NoWait},
		r4c.CircuitBreakerConfig{MinimumCalls: 1, SlidingWindowSize: 1})
	attempts := 0
	_, err := p.Execute(context.Background(), func(context.Context) (string, error) {
		attempts++
		clock.Advance(time.Second)
		return "", r4c.Ignored(errOverloaded)
	})
	if !errors.Is(err, errOverloaded) || attempts != 1 {
		t.Fatalf("%v after %d attempts: an Ignored error is not retried", err, attempts)
	}
	mustExecute(t, p, taking(clock, time.Millisecond, nil))
	if s := handle(t, reg, "i").Snapshot(); s.Drops != 0 || s.Samples != 1 {
		t.Fatalf("an Ignored error in DropOn is a sample or a drop: %+v", s)
	}
	b, _ := reg.CircuitBreaker("i")
	if s := b.Snapshot(); s.Ignored != 1 || s.Failed != 0 || s.State != r4c.CircuitClosed {
		t.Fatalf("the breaker recorded an Ignored error: %+v", s)
	}
}

func TestRetryAfterOfAnOpenBreakerAndARateLimiter(t *testing.T) {
	reg, clock := newRegistry(t)
	b := newPipeline[string](t, reg, "b", r4c.CircuitBreakerConfig{MinimumCalls: 1, SlidingWindowSize: 1, WaitInOpen: 10 * time.Second})
	b.Execute(context.Background(), taking(clock, 0, errOverloaded))
	clock.Advance(3 * time.Second)
	_, err := b.Execute(context.Background(), taking(clock, 0, nil))
	var open *r4c.CircuitOpenError
	if !errors.As(err, &open) || open.RetryAfter() != 7*time.Second {
		t.Fatalf("%v: retry after %v, want 7s", err, open.RetryAfter())
	}
	clock.Advance(8 * time.Second)
	if d := open.RetryAfter(); d != 0 {
		t.Fatalf("after WaitInOpen: %v", d)
	}

	r := newPipeline[string](t, reg, "r", r4c.RateLimiterConfig{Limit: 2, Period: time.Minute})
	clock.Advance(15 * time.Second)
	mustExecute(t, r, taking(clock, 0, nil))
	mustExecute(t, r, taking(clock, 0, nil))
	_, err = r.Execute(context.Background(), taking(clock, 0, nil))
	var limited *r4c.RateLimitedError
	if !errors.As(err, &limited) || limited.RetryAfter() != 45*time.Second {
		t.Fatalf("%v: retry after %v, want 45s (the next period)", err, limited.RetryAfter())
	}
	clock.Advance(45 * time.Second)
	if d := limited.RetryAfter(); d != 0 {
		t.Fatalf("in the next period: %v", d)
	}
}

// retryAfterErr is an error that says when to try again, as an HTTP response's Retry-After.
type retryAfterErr time.Duration

func (e retryAfterErr) Error() string             { return "try later" }
func (e retryAfterErr) RetryAfter() time.Duration { return time.Duration(e) }

func TestRetryWaitsWhatTheErrorAsksWithinMaxWait(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "r", r4c.RetryConfig{MaxAttempts: 3, Wait: time.Second, MaxWait: 10 * time.Second})
	results := []error{retryAfterErr(4 * time.Second), retryAfterErr(time.Millisecond), nil}
	n := 0
	done := start(p, context.Background(), func(context.Context) (string, error) {
		n++
		return "ok", results[n-1]
	})
	waitPending(t, clock, 1)
	clock.Advance(4*time.Second - 1) // the error asked for 4s, more than the 1s backoff
	if n != 1 {
		t.Fatalf("retried after %d attempts before the error's 4s", n)
	}
	clock.Advance(1)
	waitPending(t, clock, 1)
	clock.Advance(time.Second) // 1ms asked, less than the backoff: the backoff
	if err := <-done; err != nil || n != 3 {
		t.Fatalf("%v after %d attempts", err, n)
	}

	n = 0
	results = []error{retryAfterErr(time.Minute), nil}
	if _, err := p.Execute(context.Background(), func(context.Context) (string, error) { n++; return "", results[n-1] }); !errors.As(err, new(retryAfterErr)) || n != 1 {
		t.Fatalf("a wait beyond MaxWait: %v after %d attempts, want the error at once", err, n)
	}
}

func TestBuildMakesInstancesWithoutAPipeline(t *testing.T) {
	reg, _ := newRegistry(t)
	if err := reg.Build("edge", r4c.AdaptiveLimitConfig{MaxLimit: 10}, r4c.CircuitBreakerConfig{}); err != nil {
		t.Fatal(err)
	}
	l := handle(t, reg, "edge")
	if l.Config().MaxLimit != 10 {
		t.Fatalf("%+v", l.Config())
	}
	if _, err := reg.CircuitBreaker("edge"); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Bulkhead("edge"); r4c.ErrorCode(err) != "R4C-REG-009" {
		t.Fatalf("a policy not built: %v", err)
	}
	// A pipeline with the same settings joins the instances; other settings conflict.
	if _, err := r4c.NewPipeline[int](reg, "edge", r4c.AdaptiveLimitConfig{MaxLimit: 10}); err != nil {
		t.Fatal(err)
	}
	if err := reg.Build("edge", r4c.AdaptiveLimitConfig{MaxLimit: 20}); r4c.ErrorCode(err) != "R4C-REG-008" {
		t.Fatalf("conflict: %v", err)
	}
	fb := r4c.Fallback(func(context.Context, error) (int, error) { return 0, nil })
	for _, c := range []struct {
		reg  *r4c.Registry
		id   string
		cfgs []r4c.PolicyConfig
		code string
	}{
		{nil, "x", nil, "R4C-REG-010"},
		{reg, "", nil, "R4C-REG-001"},
		{reg, "x", []r4c.PolicyConfig{fb}, "R4C-REG-011"},
		{reg, "x", []r4c.PolicyConfig{r4c.AdaptiveLimitConfig{Smoothing: 2}}, "R4C-REG-001"},
	} {
		if err := c.reg.Build(c.id, c.cfgs...); r4c.ErrorCode(err) != c.code {
			t.Errorf("Build(%q, %v): %v, want %s", c.id, c.cfgs, err, c.code)
		}
	}
}

func TestRetryStopsOnANegativeRetryAfter(t *testing.T) {
	reg, _ := newRegistry(t)
	p := newPipeline[string](t, reg, "r", r4c.RetryConfig{MaxAttempts: 3, Wait: r4c.NoWait})
	n := 0
	_, err := p.Execute(context.Background(), func(context.Context) (string, error) { n++; return "", retryAfterErr(-1) })
	if !errors.As(err, new(retryAfterErr)) || n != 1 {
		t.Fatalf("%v after %d attempts, want the error after one", err, n)
	}
}
