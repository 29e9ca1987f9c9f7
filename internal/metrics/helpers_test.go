package metrics

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// everyPolicySnapshot builds a pipeline with every policy on a manual clock, runs calls that
// succeed and fail through it until the breaker has rates and a window has ended, and returns
// the registry's snapshot.
func everyPolicySnapshot(t *testing.T) r4c.Snapshot {
	t.Helper()
	clock := r4ctest.NewManualClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	p, err := r4c.NewPipeline[int](reg, "all",
		r4c.AdaptiveLimitConfig{MinWindowSamples: 1}, r4c.TimeoutConfig{}, r4c.BulkheadConfig{},
		r4c.RateLimiterConfig{}, r4c.RetryConfig{MaxAttempts: 2, Wait: r4c.NoWait},
		r4c.CircuitBreakerConfig{MinimumCalls: 2}, r4c.HedgeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	for i := range 4 {
		p.Execute(context.Background(), func(context.Context) (int, error) {
			clock.Advance(300 * time.Millisecond)
			if i%2 == 1 {
				return 0, boom
			}
			return i, nil
		})
	}
	return reg.Snapshot()
}
