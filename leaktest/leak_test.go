package leaktest

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

var errBoom = errors.New("boom")

// TestMain fails the package if any test leaves a goroutine running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func registry(t *testing.T) (*r4c.Registry, *r4ctest.ManualClock) {
	t.Helper()
	clock := r4ctest.NewManualClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	return reg, clock
}

func pipeline(t *testing.T, reg *r4c.Registry, cfgs ...r4c.PolicyConfig) *r4c.Pipeline[string] {
	t.Helper()
	p, err := r4c.NewPipeline[string](reg, t.Name(), cfgs...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTimeoutLeavesNothingBehind(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg, clock := registry(t)
	p := pipeline(t, reg, r4c.TimeoutConfig{Timeout: time.Second}, r4c.AdaptiveLimitConfig{})
	// A function that respects its context.
	done := make(chan error, 1)
	go func() {
		_, err := p.Execute(context.Background(), func(ctx context.Context) (string, error) { <-ctx.Done(); return "", ctx.Err() })
		done <- err
	}()
	if err := clock.WaitPending(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := <-done; !errors.Is(err, r4c.ErrCallTimeout) {
		t.Fatal(err)
	}
	// A function that ignores it: its goroutine ends when it returns.
	unblock := make(chan struct{})
	go func() {
		_, err := p.Execute(context.Background(), func(context.Context) (string, error) { <-unblock; return "", nil })
		done <- err
	}()
	if err := clock.WaitPending(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := <-done; !errors.Is(err, r4c.ErrCallTimeout) {
		t.Fatal(err)
	}
	close(unblock)
	// Calls that finish first.
	for i := 0; i < 100; i++ {
		if _, err := p.Execute(context.Background(), func(context.Context) (string, error) { return "ok", nil }); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRetryLeavesNothingBehind(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg, clock := registry(t)
	p := pipeline(t, reg, r4c.RetryConfig{MaxAttempts: 3, Wait: time.Second}, r4c.TimeoutConfig{Timeout: time.Hour})
	done := make(chan error, 1)
	go func() {
		_, err := p.Execute(context.Background(), func(context.Context) (string, error) { return "", errBoom })
		done <- err
	}()
	// The pending timers are the retry's waits and, briefly, each attempt's timeout: advance
	// until the call is over.
	if err := advanceUntil(clock, done, time.Second); !errors.Is(err, errBoom) {
		t.Fatal(err)
	}
	// A caller that gives up during a wait (a pipeline whose only timer is the retry's).
	reg, clock = registry(t)
	p = pipeline(t, reg, r4c.RetryConfig{MaxAttempts: 3, Wait: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := p.Execute(ctx, func(context.Context) (string, error) { return "", errBoom })
		done <- err
	}()
	if err := clock.WaitPending(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// advanceUntil advances clock by step whenever a timer is pending, until done delivers.
func advanceUntil(clock *r4ctest.ManualClock, done <-chan error, step time.Duration) error {
	for {
		select {
		case err := <-done:
			return err
		default:
			if clock.Pending() > 0 {
				clock.Advance(step)
			} else {
				runtime.Gosched()
			}
		}
	}
}

func TestHedgeLeavesNothingBehind(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg, clock := registry(t)
	p := pipeline(t, reg, r4c.HedgeConfig{Delay: time.Second, MaxHedges: 2})
	var attempts atomic.Int64
	started := make(chan struct{}, 3)
	done := make(chan string, 1)
	go func() {
		v, _ := p.Execute(context.Background(), func(ctx context.Context) (string, error) {
			started <- struct{}{}
			if attempts.Add(1) == 1 {
				<-ctx.Done() // the slow first attempt: cancelled when the hedge wins
				return "", ctx.Err()
			}
			return "hedge", nil
		})
		done <- v
	}()
	<-started
	if err := clock.WaitPending(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if v := <-done; v != "hedge" {
		t.Fatalf("%q", v)
	}
}

func TestAsyncCallsLeaveNothingBehind(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg, _ := registry(t)
	for _, cfgs := range [][]r4c.PolicyConfig{
		{r4c.AdaptiveLimitConfig{}},
		{r4c.AdaptiveLimitConfig{}, r4c.TimeoutConfig{Timeout: time.Hour}, r4c.RetryConfig{}},
	} {
		p := pipeline(t, reg, cfgs...)
		reg, _ = registry(t)
		ctx, cancel := context.WithCancel(context.Background())
		f := p.Go(ctx, func(ctx context.Context) (string, error) { <-ctx.Done(); return "", ctx.Err() })
		inner := r4c.NewFuture[string]()
		g := p.ExecuteAsync(ctx, func(context.Context) *r4c.Future[string] { return inner })
		cancel()
		for _, fut := range []*r4c.Future[string]{f, g} {
			if _, err := fut.Get(context.Background()); !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
		}
		h := p.Go(context.Background(), func(context.Context) (string, error) { return "ok", nil })
		if v, err := h.Get(context.Background()); v != "ok" || err != nil {
			t.Fatal(v, err)
		}
	}
}

// 2000 asynchronous calls through every policy, pending together, then completed, cancelled
// or timed out: while pending they hold no goroutine, and afterwards nothing is left running.
func TestAsyncFullStackLeavesNothingBehind(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg, clock := registry(t)
	p := pipeline(t, reg,
		r4c.RetryConfig{MaxAttempts: 2, Wait: time.Second},
		r4c.HedgeConfig{Delay: 500 * time.Millisecond},
		r4c.CircuitBreakerConfig{SlidingWindowSize: 5000, MinimumCalls: 5000},
		r4c.RateLimiterConfig{Limit: 10000, Period: time.Second},
		r4c.AdaptiveLimitConfig{InitialLimit: 5000, MaxLimit: 5000},
		r4c.TimeoutConfig{Timeout: 2 * time.Second},
		r4c.BulkheadConfig{MaxConcurrent: 5000})
	before := runtime.NumGoroutine()
	const n = 2000
	inners := make([]*r4c.Future[string], 0, 2*n)
	outs := make([]*r4c.Future[string], n)
	for i := range outs {
		outs[i] = p.ExecuteAsync(context.Background(), func(context.Context) *r4c.Future[string] {
			f := r4c.NewFuture[string]()
			inners = append(inners, f) // the first attempts run here, in order
			return f
		})
	}
	if during := runtime.NumGoroutine(); during-before > 10 {
		t.Fatalf("%d goroutines before, %d with %d calls pending", before, during, n)
	}
	for i, f := range inners[:n] {
		switch i % 3 {
		case 0:
			f.Complete("ok", nil)
		case 1:
			outs[i].Cancel()
		}
		// case 2: left to the hedge (launched at 500ms) and the timeout (2s)
	}
	clock.Advance(500 * time.Millisecond) // the hedges of the calls left
	for _, f := range inners[n:] {
		f.Complete("hedged", nil)
	}
	for i, f := range outs {
		v, err := f.Get(t.Context())
		switch i % 3 {
		case 0:
			if v != "ok" {
				t.Fatalf("call %d: %q, %v", i, v, err)
			}
		case 1:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("call %d: %v, want cancelled", i, err)
			}
		case 2:
			if v != "hedged" {
				t.Fatalf("call %d: %q, %v", i, v, err)
			}
		}
	}
	if clock.Pending() != 0 {
		t.Fatalf("%d timers pending", clock.Pending())
	}
}

// Go's goroutine is the call itself: once its functions return, nothing is left, whether the
// call completed, was cancelled, or timed out while its function ignored its context.
func TestGoLeavesNothingBehind(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg, clock := registry(t)
	p := pipeline(t, reg, r4c.AdaptiveLimitConfig{}, r4c.TimeoutConfig{Timeout: time.Second})
	release := make(chan struct{})
	ok := p.Go(context.Background(), func(context.Context) (string, error) { return "ok", nil })
	cancelled := p.Go(context.Background(), func(ctx context.Context) (string, error) { <-ctx.Done(); return "", ctx.Err() })
	ignoring := p.Go(context.Background(), func(context.Context) (string, error) { <-release; return "late", nil })
	if v, err := ok.Get(t.Context()); v != "ok" || err != nil {
		t.Fatal(v, err)
	}
	cancelled.Cancel()
	clock.Advance(time.Second)
	if _, err := cancelled.Get(t.Context()); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if _, err := ignoring.Get(t.Context()); !errors.Is(err, r4c.ErrCallTimeout) {
		t.Fatal(err)
	}
	close(release) // the abandoned function returns: its goroutine ends
}
