// Package r4c keeps services alive when their dependencies slow down or fail.
//
// Its headline policy is the adaptive concurrency limit (AdaptiveLimitConfig): a bulkhead that
// finds its own size. It caps how many calls to a dependency run at once, raises the cap while
// the dependency's latency holds and lowers it when latency grows or calls time out, with an
// algorithm applied once per window: Knee, which seeks the dependency's knee (the smallest
// concurrency at which it delivers its full throughput), or Netflix's Gradient2 (the default),
// AIMD or Vegas. Calls beyond the cap are rejected at once with ErrLimitExceeded instead of
// queueing behind slow ones.
//
// A Registry holds the instances, their configuration (built-in defaults < WithDefaults < a
// named configuration < the call site < WithInstance), the Clock they measure with and the
// observers of their events. Calls go through a Pipeline:
//
//	reg, err := r4c.NewRegistry()
//	search, err := r4c.NewPipeline[string](reg, "search", r4c.AdaptiveLimitConfig{MaxLimit: 100})
//	s, err := search.Execute(ctx, func(ctx context.Context) (string, error) { return backend.Search(ctx, "go") })
//
// Around it stand the policies a Go team expects, each a config given to NewPipeline:
// BulkheadConfig, TimeoutConfig, RateLimiterConfig, RetryConfig, CircuitBreakerConfig,
// HedgeConfig and Fallback. Whatever order they are given in, they apply in one canonical order,
// outermost first: Fallback > Retry > Hedge > CircuitBreaker > RateLimiter > AdaptiveLimit >
// Timeout > Bulkhead > the call.
//
// Middleware that cannot hand over a closure takes per-call permits of an adaptive limit
// instead (AdaptiveLimitHandle.Acquire). Asynchronous calls (Pipeline.Go,
// Pipeline.ExecuteAsync) hold their slot until their Future completes.
//
// Everything time-based reads the registry's Clock; tests pass r4ctest.NewManualClock to
// WithClock, so that latencies and windows move only when the test advances the clock.
//
// The package imports only the standard library. See the docs folder of the repository for the
// guides (docs/adaptive-limit.md, docs/policies.md), the configuration reference, the error
// codes and the measured costs.
package r4c

//go:generate go test -run ^TestConfigurationReference$ -update .
