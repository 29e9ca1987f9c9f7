// Package benchmarks compares, in one benchmark run, the cost of one admitted call through
// r4c's adaptive limit with its peers (docs/performance.md). It is a separate module so that the r4c module
// itself keeps no dependencies.
//
// BenchmarkAdmitted measures an empty call that is admitted, sequentially ("seq") and from
// GOMAXPROCS goroutines sharing one instance ("parallel"), for:
//
//   - floor: the least a measured, limited call can do: an atomic add on a shared in-flight
//     counter checked against a limit loaded from an atomic, two monotonic clock reads
//     (time.Since on a fixed start) and the atomic add that returns the slot;
//   - r4c-engine: AdaptiveLimitHandle.Acquire then AdaptiveLimitPermit.Success;
//   - r4c-pipeline: Pipeline.Execute with only an AdaptiveLimit;
//   - semaphore: golang.org/x/sync/semaphore TryAcquire(1) then Release(1). It measures
//     nothing, so its distance to the floor is what the two clock reads cost;
//   - failsafe-permit: failsafe-go's adaptivelimiter, TryAcquirePermit then Permit.Record;
//   - failsafe-executor: the same limiter through failsafe.With(limiter).Get(fn), the executor
//     built once outside the loop.
//
// Every limit is fixed at 1000 (min = initial = max), so nothing is ever rejected and no limit
// moves during a run; a rejection fails the benchmark. failsafe-go's limiter would otherwise
// lower its limit towards a multiple of the peak in-flight count (its maxLimitFactor).
//
// Run, from this directory:
//
//	go test -run '^$' -bench . -benchmem -count 10 -cpu 1,2 . | tee bench.txt
//	go run golang.org/x/perf/cmd/benchstat@latest bench.txt
//
// Compare only numbers from the same run: the ratios, not the absolute values, are the targets.
// results/ holds the raw output behind docs/performance.md.
// go test ./... runs TestContendersAdmit, which checks that every contender admits and
// completes a call and leaves no slot taken.
//
// BenchmarkPolicies (policies_test.go) measures one call of the same empty function through
// every r4c policy alone (Pipeline.Execute) against failsafe-go's equivalent policy
// (failsafe.With(policy).Get(fn), built once outside the loop): adaptive limit, bulkhead,
// timeout, rate limiter (failsafe-go's bursty limiter), retry, count-based circuit breaker,
// hedge and fallback, on the happy path (nothing rejected, retried, hedged or timed out); a
// stack of retry, circuit breaker, adaptive limit and timeout, in that order from the outside
// in; the rejections of an open breaker, a full bulkhead and an exhausted rate limiter; and, as
// a baseline, the function called directly. Each contender runs "seq" and "parallel", and every
// round runs all of them:
//
//	go test -run '^$' -bench BenchmarkPolicies -benchmem -count 8 -cpu 1,2 -benchtime 300ms . | tee results/policies.txt
//
// go test ./... runs TestPolicyContenders, which checks that each of these contenders, set up
// as benchmarked, returns "ok" and calls the function once per call, or, for a rejection,
// fails every call with its rejection without calling the function.
//
// Two packages below measure how well the limits limit rather than what a call costs:
// quality/ is the quality bench, a discrete-event simulation on a simulated clock
// (docs/quality.md), and realtime/ runs failsafe-go's adaptive limiter, which reads the wall
// clock, beside ours in real time (docs/quality-realtime.md).
package benchmarks
