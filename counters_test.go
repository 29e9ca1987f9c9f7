package r4c_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime/debug"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
)

// The counters that metrics read: each outcome lands in its own counter, in the synchronous and
// the asynchronous driver alike.

func TestRetryCountsEveryOutcome(t *testing.T) {
	errFatal := errors.New("fatal")
	for _, async := range []bool{false, true} {
		reg, _ := newRegistry(t)
		p := newPipeline[int](t, reg, "r", r4c.RetryConfig{MaxAttempts: 2, Wait: r4c.NoWait, AbortOn: []error{errFatal}})
		run := func(results ...error) {
			n := 0
			fn := func(context.Context) (int, error) {
				err := results[min(n, len(results)-1)]
				n++
				return n, err
			}
			if async {
				p.Go(context.Background(), fn).Get(context.Background())
			} else {
				p.Execute(context.Background(), fn)
			}
		}
		run(nil)                          // successful without retry
		run(nil)                          // successful without retry
		run(errOverloaded, nil)           // successful with retry
		run(errFatal)                     // failed without retry (aborted)
		run(errOverloaded, errOverloaded) // failed with retry: exhausted
		run(errOverloaded, errFatal)      // failed with retry: aborted at the second attempt
		h, _ := reg.Retry("r")
		s := h.Snapshot()
		want := r4c.RetrySnapshot{ID: "r", Enabled: true, MaxAttempts: 2, Calls: 6,
			SuccessfulWithoutRetry: 2, SuccessfulWithRetry: 1, FailedWithoutRetry: 1, FailedWithRetry: 2,
			Retries: 3, Exhausted: 1}
		if s != want {
			t.Fatalf("async %v:\n got %+v\nwant %+v", async, s, want)
		}
	}
}

func TestRetryCountsACancelledCallAsFailed(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "r", r4c.RetryConfig{MaxAttempts: 3, Wait: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	f := p.Go(ctx, func(context.Context) (string, error) { return "", errOverloaded })
	waitPending(t, clock, 1) // the wait before the second attempt
	cancel()
	if _, err := f.Get(context.Background()); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	h, _ := reg.Retry("r")
	if s := h.Snapshot(); s.Calls != 1 || s.FailedWithoutRetry != 1 || s.Retries != 1 {
		t.Fatalf("%+v", s)
	}
}

func TestCircuitBreakerCountsOutcomesSinceCreation(t *testing.T) {
	errIgnored := errors.New("ignored")
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "b", r4c.CircuitBreakerConfig{SlidingWindowSize: 4, MinimumCalls: 4,
		SlowCallDuration: time.Second, IgnoreOn: []error{errIgnored}})
	p.Execute(context.Background(), taking(clock, 0, errIgnored))
	mustExecute(t, p, taking(clock, 0, nil))
	p.Execute(context.Background(), taking(clock, 2*time.Second, nil)) // slow success
	p.Execute(context.Background(), taking(clock, 0, errOverloaded))
	p.Execute(context.Background(), taking(clock, 3*time.Second, errOverloaded)) // slow failure: opens
	p.Execute(context.Background(), taking(clock, 0, nil))                       // not permitted
	h, _ := reg.CircuitBreaker("b")
	s := h.Snapshot()
	if s.State != r4c.CircuitOpen || s.Successful != 2 || s.Failed != 2 || s.Ignored != 1 || s.Slow != 2 || s.NotPermitted != 1 {
		t.Fatalf("%+v", s)
	}
	h.Reset()
	if s := h.Snapshot(); s.Successful != 2 || s.Failed != 2 || s.BufferedCalls != 0 {
		t.Fatalf("after Reset: %+v", s)
	}
}

func TestAdaptiveLimitCountsSamplesAndDropsOfCompletedWindows(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "l", r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, MinWindowSamples: 1, Window: time.Second})
	for _, err := range []error{nil, r4c.ErrCallTimeout, nil} {
		p.Execute(context.Background(), taking(clock, 10*time.Millisecond, err))
	}
	h := handle(t, reg, "l")
	if s := h.Snapshot(); s.Samples != 0 || s.Drops != 0 {
		t.Fatalf("before a window ended: %+v", s)
	}
	clock.Advance(time.Second)
	mustExecute(t, p, taking(clock, 10*time.Millisecond, nil)) // its sample ends the window
	if s := h.Snapshot(); s.Windows != 1 || s.Samples != 4 || s.Drops != 1 {
		t.Fatalf("after one window: %+v", s)
	}
}

func TestSnapshotJSONIsReadable(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "all",
		r4c.AdaptiveLimitConfig{MinWindowSamples: 1}, r4c.TimeoutConfig{Timeout: 1500 * time.Millisecond},
		r4c.BulkheadConfig{}, r4c.RateLimiterConfig{}, r4c.RetryConfig{MaxAttempts: 1},
		r4c.CircuitBreakerConfig{}, r4c.HedgeConfig{MaxHedges: 1})
	mustExecute(t, p, taking(clock, 25*time.Millisecond, nil))
	clock.Advance(time.Second)
	mustExecute(t, p, taking(clock, 25*time.Millisecond, nil))
	b, err := json.Marshal(reg.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		AdaptiveLimits, Bulkheads, Timeouts, RateLimiters, Retries, CircuitBreakers, Hedges []map[string]any
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	checks := []struct {
		list, field string
		want        any
	}{
		{"AdaptiveLimits", "ID", "all"},
		{"AdaptiveLimits", "Algorithm", "gradient2"},
		{"AdaptiveLimits", "WindowLatency", "25ms"},
		{"AdaptiveLimits", "Limit", 20.0},
		{"Timeouts", "Timeout", "1.5s"},
		{"CircuitBreakers", "State", "closed"},
		{"CircuitBreakers", "FailureRate", -1.0},
		{"RateLimiters", "Period", "1s"},
		{"Hedges", "Delay", "100ms"},
		{"Retries", "SuccessfulWithoutRetry", 2.0},
		{"Bulkheads", "MaxWait", "0s"},
	}
	lists := map[string][]map[string]any{"AdaptiveLimits": got.AdaptiveLimits, "Bulkheads": got.Bulkheads,
		"Timeouts": got.Timeouts, "RateLimiters": got.RateLimiters, "Retries": got.Retries,
		"CircuitBreakers": got.CircuitBreakers, "Hedges": got.Hedges}
	for _, c := range checks {
		if l := lists[c.list]; len(l) != 1 || l[0][c.field] != c.want {
			t.Errorf("%s[0].%s = %#v, want %#v (in %s)", c.list, c.field, l, c.want, b)
		}
	}
	// Field order is the declaration order, as in the Go source.
	if i, j := indexOf(b, `"ID":"all","Algorithm"`), indexOf(b, `"Windows":`); i < 0 || j < i {
		t.Errorf("fields out of order: %s", b)
	}
}

func indexOf(b []byte, s string) int {
	for i := range len(b) - len(s) + 1 {
		if string(b[i:i+len(s)]) == s {
			return i
		}
	}
	return -1
}

// A retry without wait of an ExecuteAsync whose futures fail at once starts its attempts in a
// loop: a deep MaxAttempts does not grow the stack.
func TestAsyncRetryWithoutWaitDoesNotRecurse(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(32 << 20)) // recursion would need far more
	reg, _ := newRegistry(t)
	const attempts = 200_000
	p := newPipeline[int](t, reg, "r", r4c.RetryConfig{MaxAttempts: attempts, Wait: r4c.NoWait})
	n := 0
	f := p.ExecuteAsync(context.Background(), func(context.Context) *r4c.Future[int] {
		n++
		f := r4c.NewFuture[int]()
		f.Complete(0, errOverloaded)
		return f
	})
	var re *r4c.RetryExhaustedError
	if _, err := f.Get(context.Background()); !errors.As(err, &re) || re.Attempts != attempts || n != attempts {
		t.Fatalf("%v after %d attempts", err, n)
	}
}
