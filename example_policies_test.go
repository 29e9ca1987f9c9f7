package r4c_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// A bulkhead caps the calls running at once; with MaxWait 0 a full one rejects at once.
func ExampleBulkheadConfig() {
	reg, _ := r4c.NewRegistry()
	p, _ := r4c.NewPipeline[string](reg, "db", r4c.BulkheadConfig{MaxConcurrent: 1})
	_, err := p.Execute(context.Background(), func(ctx context.Context) (string, error) {
		// While this call holds the only slot, a nested call is rejected.
		_, err := p.Execute(ctx, func(context.Context) (string, error) { return "unreachable", nil })
		return "", err
	})
	fmt.Println(errors.Is(err, r4c.ErrBulkheadFull), err)
	// Output: true r4c: bulkhead "db" full: every slot is taken
}

// A timeout returns at its deadline and cancels the call's context; on a manual clock the
// deadline passes when the test says so.
func ExampleTimeoutConfig() {
	clock := r4ctest.NewManualClock()
	reg, _ := r4c.NewRegistry(r4c.WithClock(clock))
	p, _ := r4c.NewPipeline[string](reg, "slow", r4c.TimeoutConfig{Timeout: 2 * time.Second})

	done := make(chan error)
	go func() {
		_, err := p.Execute(context.Background(), func(ctx context.Context) (string, error) {
			<-ctx.Done() // a dependency that answers only when cancelled
			return "", ctx.Err()
		})
		done <- err
	}()
	_ = clock.WaitPending(context.Background(), 1) // the timeout's timer is set
	clock.Advance(2 * time.Second)
	err := <-done
	var te *r4c.CallTimeoutError
	fmt.Println(errors.Is(err, r4c.ErrCallTimeout), errors.Is(err, context.DeadlineExceeded), errors.As(err, &te) && te.Timeout())
	// Output: true true true
}

// A retry runs failed attempts again after a wait; when every attempt fails, its error wraps
// the last one.
func ExampleRetryConfig() {
	clock := r4ctest.NewManualClock()
	reg, _ := r4c.NewRegistry(r4c.WithClock(clock), r4c.WithObserver(func(e r4c.Event) {
		if e.Type == r4c.EventRetried {
			fmt.Printf("attempt %d failed (%v); retrying in %v\n", e.Attempt, e.Err, e.Duration)
		}
	}))
	p, _ := r4c.NewPipeline[string](reg, "flaky", r4c.RetryConfig{MaxAttempts: 3, Wait: 100 * time.Millisecond, Multiplier: 2})
	errUnavailable := errors.New("unavailable")

	done := make(chan error)
	go func() {
		_, err := p.Execute(context.Background(), func(context.Context) (string, error) { return "", errUnavailable })
		done <- err
	}()
	for _, wait := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
		_ = clock.WaitPending(context.Background(), 1)
		clock.Advance(wait)
	}
	err := <-done
	fmt.Println(errors.Is(err, errUnavailable))
	fmt.Println(err)
	// Output:
	// attempt 1 failed (unavailable); retrying in 100ms
	// attempt 2 failed (unavailable); retrying in 200ms
	// true
	// r4c: retry "flaky" gave up after 3 attempts: unavailable
}

// A fallback is typed by the pipeline and sees the final error of every inner policy.
func ExampleFallback() {
	reg, _ := r4c.NewRegistry()
	prices, _ := r4c.NewPipeline[float64](reg, "prices",
		r4c.AdaptiveLimitConfig{},
		r4c.Fallback(func(_ context.Context, err error) (float64, error) { return 9.99, nil }, r4c.ErrLimitExceeded, errBackend))
	price, err := prices.Execute(context.Background(), func(context.Context) (float64, error) { return 0, errBackend })
	fmt.Println(price, err)
	// Output: 9.99 <nil>
}

var errBackend = errors.New("backend down")

// Asynchronous calls go through every policy as their events happen: the first attempt runs
// before ExecuteAsync returns, a failed attempt settles when its future completes, the retry's
// wait and the timeout are timers on the registry's clock, and no goroutine waits.
func ExamplePipeline_ExecuteAsync_policies() {
	clock := r4ctest.NewManualClock()
	reg, _ := r4c.NewRegistry(r4c.WithClock(clock))
	p, _ := r4c.NewPipeline[string](reg, "quotes",
		r4c.RetryConfig{MaxAttempts: 2, Wait: 100 * time.Millisecond},
		r4c.AdaptiveLimitConfig{InitialLimit: 10},
		r4c.TimeoutConfig{Timeout: time.Second})
	limit, _ := reg.AdaptiveLimit("quotes")

	var attempts []*r4c.Future[string]
	f := p.ExecuteAsync(context.Background(), func(context.Context) *r4c.Future[string] {
		a := r4c.NewFuture[string]()
		attempts = append(attempts, a)
		return a
	})
	fmt.Println("attempts:", len(attempts), "in flight:", limit.InFlight())

	attempts[0].Complete("", errors.New("busy")) // settles now: the slot is free, the retry waits
	fmt.Println("in flight:", limit.InFlight(), "timers:", clock.Pending())

	clock.Advance(100 * time.Millisecond) // the second attempt starts here
	clock.Advance(time.Second)            // and times out here
	_, err := f.Get(context.Background())
	fmt.Println("attempts:", len(attempts), errors.Is(err, r4c.ErrCallTimeout))
	// Output:
	// attempts: 1 in flight: 1
	// in flight: 0 timers: 1
	// attempts: 2 true
}
