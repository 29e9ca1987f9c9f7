package benchmarks

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/fallback"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"
	"github.com/failsafe-go/failsafe-go/ratelimiter"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"
	"github.com/resilience4cata/r4c"
)

// workFn is work behind a package variable, so that the baseline calls it indirectly, as every
// policy does, instead of inlining it.
var workFn = work

// errBoom is the failure used to open a breaker during setup.
var errBoom = errors.New("boom")

// policyContender is one contender of BenchmarkPolicies, set up and ready: exactly one of r4c
// and fs is set, or neither for the direct call.
type policyContender struct {
	r4c *r4c.Pipeline[string]
	fs  failsafe.Executor[string]
	// reject is the error every call fails with (errors.Is), nil when every call must return
	// "ok", nil.
	reject error
}

// policyCase names a contender and sets it up. Its name is "<policy>/<library>".
type policyCase struct {
	name  string
	setup func(tb testing.TB) policyContender
}

// pipelineID is the instance id of every r4c pipeline below; each contender has its own registry.
const pipelineID = "bench"

// newPipeline returns a pipeline with cfgs on a new registry on the system clock, and the registry.
func newPipeline(tb testing.TB, cfgs ...r4c.PolicyConfig) (*r4c.Registry, *r4c.Pipeline[string]) {
	tb.Helper()
	reg, err := r4c.NewRegistry()
	if err != nil {
		tb.Fatal(err)
	}
	p, err := r4c.NewPipeline[string](reg, pipelineID, cfgs...)
	if err != nil {
		tb.Fatal(err)
	}
	return reg, p
}

func r4cOnly(cfgs ...r4c.PolicyConfig) func(testing.TB) policyContender {
	return func(tb testing.TB) policyContender {
		_, p := newPipeline(tb, cfgs...)
		return policyContender{r4c: p}
	}
}

func failsafeOnly(mk func() []failsafe.Policy[string]) func(testing.TB) policyContender {
	return func(testing.TB) policyContender {
		return policyContender{fs: failsafe.With[string](mk()...)}
	}
}

// Configurations of the happy path: nothing is rejected, retried, hedged or timed out.
var (
	// r4cLimit is the adaptive limit fixed at limit, as in BenchmarkAdmitted.
	r4cLimit = r4c.AdaptiveLimitConfig{InitialLimit: limit, MinLimit: limit, MaxLimit: limit}
	// r4cBreaker is the default count-based breaker, written out: 50% of the last 100 calls.
	r4cBreaker = r4c.CircuitBreakerConfig{FailureRateThreshold: 50, SlidingWindowSize: 100, MinimumCalls: 100,
		WaitInOpen: time.Minute}
	r4cRetry   = r4c.RetryConfig{MaxAttempts: 3}
	r4cTimeout = r4c.TimeoutConfig{Timeout: time.Second}
)

func fsBreaker() circuitbreaker.CircuitBreaker[string] {
	return circuitbreaker.NewBuilder[string]().WithFailureThresholdRatio(50, 100).WithDelay(time.Minute).Build()
}

func fsRetry() retrypolicy.RetryPolicy[string] {
	return retrypolicy.NewBuilder[string]().WithMaxAttempts(3).Build()
}

// hugeRate is a rate limit that no benchmark reaches: 2^30 calls a second.
const hugeRate = 1 << 30

// policyCases lists every contender of BenchmarkPolicies, in the order they run.
var policyCases = []policyCase{
	{"direct/fn", func(testing.TB) policyContender { return policyContender{} }},

	{"adaptivelimit/r4c", r4cOnly(r4cLimit)},
	{"adaptivelimit/failsafe", failsafeOnly(func() []failsafe.Policy[string] {
		return []failsafe.Policy[string]{newFailsafe()}
	})},

	{"bulkhead/r4c", r4cOnly(r4c.BulkheadConfig{MaxConcurrent: limit})},
	{"bulkhead/failsafe", failsafeOnly(func() []failsafe.Policy[string] {
		return []failsafe.Policy[string]{bulkhead.New[string](limit)}
	})},

	{"timeout/r4c", r4cOnly(r4cTimeout)},
	{"timeout/failsafe", failsafeOnly(func() []failsafe.Policy[string] {
		return []failsafe.Policy[string]{timeout.New[string](time.Second)}
	})},

	// failsafe-go's bursty limiter grants maxExecutions per period, like r4c's Limit per Period;
	// its smooth limiter spaces permits evenly instead.
	{"ratelimiter/r4c", r4cOnly(r4c.RateLimiterConfig{Limit: hugeRate, Period: time.Second})},
	{"ratelimiter/failsafe", failsafeOnly(func() []failsafe.Policy[string] {
		return []failsafe.Policy[string]{ratelimiter.NewBursty[string](hugeRate, time.Second)}
	})},

	{"retry/r4c", r4cOnly(r4cRetry)},
	{"retry/failsafe", failsafeOnly(func() []failsafe.Policy[string] {
		return []failsafe.Policy[string]{fsRetry()}
	})},

	{"breaker/r4c", r4cOnly(r4cBreaker)},
	{"breaker/failsafe", failsafeOnly(func() []failsafe.Policy[string] {
		return []failsafe.Policy[string]{fsBreaker()}
	})},

	{"hedge/r4c", r4cOnly(r4c.HedgeConfig{Delay: time.Second, MaxHedges: 1})},
	{"hedge/failsafe", failsafeOnly(func() []failsafe.Policy[string] {
		return []failsafe.Policy[string]{hedgepolicy.NewWithDelay[string](time.Second)}
	})},

	{"fallback/r4c", r4cOnly(r4c.Fallback(func(context.Context, error) (string, error) { return "fallback", nil }))},
	{"fallback/failsafe", failsafeOnly(func() []failsafe.Policy[string] {
		return []failsafe.Policy[string]{fallback.NewWithResult[string]("fallback")}
	})},

	// The stack, outermost first in both: retry, circuit breaker, adaptive limit, timeout.
	{"stack/r4c", r4cOnly(r4cRetry, r4cBreaker, r4cLimit, r4cTimeout)},
	{"stack/failsafe", failsafeOnly(func() []failsafe.Policy[string] {
		return []failsafe.Policy[string]{fsRetry(), fsBreaker(), newFailsafe(), timeout.New[string](time.Second)}
	})},

	// Rejections: every call fails at once and fn is never called.
	{"breaker-open/r4c", func(tb testing.TB) policyContender {
		reg, p := newPipeline(tb, r4c.CircuitBreakerConfig{SlidingWindowSize: 1, MinimumCalls: 1, WaitInOpen: time.Hour})
		if _, err := p.Execute(context.Background(), func(context.Context) (string, error) { return "", errBoom }); !errors.Is(err, errBoom) {
			tb.Fatalf("opening call: %v", err)
		}
		cb, err := reg.CircuitBreaker(pipelineID)
		if err != nil {
			tb.Fatal(err)
		}
		if cb.State() != r4c.CircuitOpen {
			tb.Fatalf("breaker %v after a failure, want open", cb.State())
		}
		return policyContender{r4c: p, reject: r4c.ErrCircuitOpen}
	}},
	{"breaker-open/failsafe", func(testing.TB) policyContender {
		cb := circuitbreaker.NewBuilder[string]().WithDelay(time.Hour).Build()
		cb.Open()
		return policyContender{fs: failsafe.With[string](cb), reject: circuitbreaker.ErrOpen}
	}},

	{"bulkhead-full/r4c", func(tb testing.TB) policyContender {
		reg, p := newPipeline(tb, r4c.BulkheadConfig{MaxConcurrent: 1})
		// One call holds the only slot until the cleanup.
		entered, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			_, _ = p.Execute(context.Background(), func(context.Context) (string, error) {
				close(entered)
				<-release
				return "ok", nil
			})
		}()
		<-entered
		tb.Cleanup(func() {
			close(release)
			<-done
			if h, err := reg.Bulkhead(pipelineID); err != nil || h.InFlight() != 0 {
				tb.Errorf("bulkhead not free after the holder returned: %v", err)
			}
		})
		return policyContender{r4c: p, reject: r4c.ErrBulkheadFull}
	}},
	{"bulkhead-full/failsafe", func(tb testing.TB) policyContender {
		bh := bulkhead.New[string](1)
		if !bh.TryAcquirePermit() { // held until the cleanup
			tb.Fatal("bulkhead: no permit")
		}
		tb.Cleanup(bh.ReleasePermit)
		return policyContender{fs: failsafe.With[string](bh), reject: bulkhead.ErrFull}
	}},

	{"ratelimiter-empty/r4c", func(tb testing.TB) policyContender {
		_, p := newPipeline(tb, r4c.RateLimiterConfig{Limit: 1, Period: time.Hour})
		if v, err := p.Execute(context.Background(), work); err != nil || v != "ok" { // spends the permit
			tb.Fatalf("first call: %q, %v", v, err)
		}
		return policyContender{r4c: p, reject: r4c.ErrRateLimited}
	}},
	{"ratelimiter-empty/failsafe", func(tb testing.TB) policyContender {
		rl := ratelimiter.NewBursty[string](1, time.Hour)
		if !rl.TryAcquirePermit() { // spends the permit
			tb.Fatal("rate limiter: no permit")
		}
		return policyContender{fs: failsafe.With[string](rl), reject: ratelimiter.ErrExceeded}
	}},
}

// BenchmarkPolicies measures one call of fn through each policy alone, through a stack of four,
// and rejected by an open breaker, a full bulkhead or an exhausted rate limiter, for r4c
// (Pipeline.Execute) and failsafe-go (Executor.Get, built once outside the loop), sequentially
// ("seq") and from GOMAXPROCS goroutines sharing one instance ("parallel"). "direct/fn" calls fn
// through a function value, with no policy. Every round runs every contender, a few hundred
// milliseconds each with -benchtime 300ms.
//
// The checks in the loops are only whether the call failed: TestPolicyContenders checks the
// values and the errors.
func BenchmarkPolicies(b *testing.B) {
	ctx := context.Background()
	for _, pc := range policyCases {
		b.Run(pc.name+"/seq", func(b *testing.B) {
			c := pc.setup(b)
			wantErr := c.reject != nil
			b.ReportAllocs()
			var v string
			var err error
			switch {
			case c.r4c != nil:
				p := c.r4c
				for b.Loop() {
					if v, err = p.Execute(ctx, work); (err != nil) != wantErr {
						b.Fatal(err)
					}
				}
			case c.fs != nil:
				exec := c.fs
				for b.Loop() {
					if v, err = exec.Get(workNoCtx); (err != nil) != wantErr {
						b.Fatal(err)
					}
				}
			default:
				for b.Loop() {
					if v, err = workFn(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			sinkStr = v
		})
		b.Run(pc.name+"/parallel", func(b *testing.B) {
			c := pc.setup(b)
			wantErr := c.reject != nil
			b.ReportAllocs()
			switch {
			case c.r4c != nil:
				p := c.r4c
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := p.Execute(ctx, work); (err != nil) != wantErr {
							panic(err)
						}
					}
				})
			case c.fs != nil:
				exec := c.fs
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := exec.Get(workNoCtx); (err != nil) != wantErr {
							panic(err)
						}
					}
				})
			default:
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := workFn(ctx); err != nil {
							panic(err)
						}
					}
				})
			}
		})
	}
}
