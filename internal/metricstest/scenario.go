// Package metricstest drives a registry through a scenario with an instance of every policy, on
// the manual clock, and says which metric samples it must produce: the tests of the Prometheus
// and OpenTelemetry modules (r4cprom, r4cotel) scrape the same scenario and compare with the
// same expectations.
package metricstest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/metrics"
	"github.com/resilience4cata/r4c/r4ctest"
)

// Sample is one expected sample, in Prometheus terms.
type Sample struct {
	Type   string // "counter" or "gauge"
	Name   string // the Prometheus name
	Labels string // the label pairs as in the text format, sorted by key: `kind="bulkhead",name="bulk"`
	Value  float64
}

// Before is what a registry without instances reports.
var Before = []Sample{
	{"counter", "r4c_observer_panics_total", "", 0},
}

// Expected is what the registry reports after Drive, written out by hand from the scenario.
var Expected = []Sample{
	// "limit": AIMD from 2; two calls held, a third rejected; one window of three 100ms samples,
	// one of them a drop, so AIMD backed off to int(2 x 0.9) = 1; one call still running.
	{"counter", "r4c_calls_rejected_total", `kind="adaptivelimit",name="limit"`, 1},
	{"gauge", "r4c_adaptivelimit_limit", `name="limit"`, 1},
	{"gauge", "r4c_adaptivelimit_concurrent_calls", `name="limit"`, 1},
	{"counter", "r4c_adaptivelimit_limit_changes_total", `name="limit"`, 1},
	{"gauge", "r4c_adaptivelimit_min_limit", `name="limit"`, 1},
	{"gauge", "r4c_adaptivelimit_max_limit", `name="limit"`, 200},
	{"counter", "r4c_adaptivelimit_windows_total", `name="limit"`, 1},
	{"gauge", "r4c_adaptivelimit_window_latency_seconds", `name="limit"`, 0.1},
	{"counter", "r4c_adaptivelimit_samples_total", `name="limit"`, 3},
	{"counter", "r4c_adaptivelimit_drops_total", `name="limit"`, 1},
	{"gauge", "r4c_adaptivelimit_info", `algorithm="aimd",name="limit"`, 1},
	{"gauge", "r4c_adaptivelimit_waiting_calls", `name="limit"`, 0},
	{"counter", "r4c_adaptivelimit_wait_timeouts_total", `name="limit"`, 0},
	// "parts": a fixed limit of 4, MaxWait 1s, partitions a (0.5) and b (0.25); b holds its
	// guaranteed slot and borrows the one no guarantee reserves; a third b call waits and times
	// out; a holds one of its two.
	{"counter", "r4c_calls_rejected_total", `kind="adaptivelimit",name="parts"`, 1},
	{"gauge", "r4c_adaptivelimit_limit", `name="parts"`, 4},
	{"gauge", "r4c_adaptivelimit_concurrent_calls", `name="parts"`, 3},
	{"counter", "r4c_adaptivelimit_limit_changes_total", `name="parts"`, 0},
	{"gauge", "r4c_adaptivelimit_min_limit", `name="parts"`, 4},
	{"gauge", "r4c_adaptivelimit_max_limit", `name="parts"`, 4},
	{"counter", "r4c_adaptivelimit_windows_total", `name="parts"`, 0},
	{"gauge", "r4c_adaptivelimit_window_latency_seconds", `name="parts"`, 0},
	{"counter", "r4c_adaptivelimit_samples_total", `name="parts"`, 0},
	{"counter", "r4c_adaptivelimit_drops_total", `name="parts"`, 0},
	{"gauge", "r4c_adaptivelimit_info", `algorithm="gradient2",name="parts"`, 1},
	{"gauge", "r4c_adaptivelimit_waiting_calls", `name="parts"`, 0},
	{"counter", "r4c_adaptivelimit_wait_timeouts_total", `name="parts"`, 1},
	{"gauge", "r4c_adaptivelimit_partition_concurrent_calls", `name="parts",partition="a"`, 1},
	{"gauge", "r4c_adaptivelimit_partition_concurrent_calls", `name="parts",partition="b"`, 2},
	{"gauge", "r4c_adaptivelimit_partition_guaranteed_calls", `name="parts",partition="a"`, 2},
	{"gauge", "r4c_adaptivelimit_partition_guaranteed_calls", `name="parts",partition="b"`, 1},
	{"counter", "r4c_adaptivelimit_partition_rejected_total", `name="parts",partition="a"`, 0},
	{"counter", "r4c_adaptivelimit_partition_rejected_total", `name="parts",partition="b"`, 1},
	// "bulk": one slot, held; one call rejected.
	{"counter", "r4c_calls_rejected_total", `kind="bulkhead",name="bulk"`, 1},
	{"gauge", "r4c_bulkhead_available_concurrent_calls", `name="bulk"`, 0},
	{"gauge", "r4c_bulkhead_max_allowed_concurrent_calls", `name="bulk"`, 1},
	{"gauge", "r4c_bulkhead_waiting_calls", `name="bulk"`, 0},
	// "rate": 2 permits a minute, 3 calls.
	{"counter", "r4c_calls_rejected_total", `kind="ratelimiter",name="rate"`, 1},
	{"gauge", "r4c_ratelimiter_available_permissions", `name="rate"`, 0},
	{"gauge", "r4c_ratelimiter_waiting_calls", `name="rate"`, 0},
	// "breaker": a window of 2; a slow success and a failure open it; one call not permitted.
	{"counter", "r4c_calls_rejected_total", `kind="circuitbreaker",name="breaker"`, 1},
	{"gauge", "r4c_circuitbreaker_state", `name="breaker",state="closed"`, 0},
	{"gauge", "r4c_circuitbreaker_state", `name="breaker",state="half_open"`, 0},
	{"gauge", "r4c_circuitbreaker_state", `name="breaker",state="open"`, 1},
	{"gauge", "r4c_circuitbreaker_failure_ratio", `name="breaker"`, 0.5},
	{"gauge", "r4c_circuitbreaker_slow_call_ratio", `name="breaker"`, 0.5},
	{"gauge", "r4c_circuitbreaker_buffered_calls", `name="breaker"`, 2},
	{"counter", "r4c_circuitbreaker_calls_total", `name="breaker",outcome="failed"`, 1},
	{"counter", "r4c_circuitbreaker_calls_total", `name="breaker",outcome="ignored"`, 0},
	{"counter", "r4c_circuitbreaker_calls_total", `name="breaker",outcome="successful"`, 1},
	{"counter", "r4c_circuitbreaker_slow_calls_total", `name="breaker"`, 1},
	{"counter", "r4c_circuitbreaker_state_changes_total", `name="breaker"`, 1},
	// "retry": at most 2 attempts; a success, a success at the second attempt, an exhausted call.
	{"counter", "r4c_retry_calls_total", `name="retry",outcome="failed_with_retry"`, 1},
	{"counter", "r4c_retry_calls_total", `name="retry",outcome="failed_without_retry"`, 0},
	{"counter", "r4c_retry_calls_total", `name="retry",outcome="successful_with_retry"`, 1},
	{"counter", "r4c_retry_calls_total", `name="retry",outcome="successful_without_retry"`, 1},
	{"counter", "r4c_retry_retries_total", `name="retry"`, 2},
	// "timeout": 1s; one call of 2s.
	{"counter", "r4c_timeout_expired_total", `name="timeout"`, 1},
	// "hedge": one call whose extra attempt, launched after 100ms, ended first.
	{"counter", "r4c_hedge_calls_total", `name="hedge"`, 1},
	{"counter", "r4c_hedge_launched_total", `name="hedge"`, 1},
	{"counter", "r4c_hedge_won_total", `name="hedge"`, 1},
	{"counter", "r4c_observer_panics_total", "", 0},
}

// NewRegistry returns a registry on a manual clock, without instances.
func NewRegistry(t testing.TB) (*r4c.Registry, *r4ctest.ManualClock) {
	t.Helper()
	clock := r4ctest.NewManualClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	return reg, clock
}

// Drive creates one instance of every policy in reg and runs the calls that Expected describes.
// It returns when every call it started has settled, except those it holds on purpose: one
// call in the adaptive limit "limit" and one in the bulkhead "bulk".
func Drive(t testing.TB, reg *r4c.Registry, clock *r4ctest.ManualClock) {
	t.Helper()
	ctx := context.Background()
	boom := errors.New("boom")
	pipeline := func(id string, cfg r4c.PolicyConfig) *r4c.Pipeline[int] {
		p, err := r4c.NewPipeline[int](reg, id, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// taking returns a function that takes d on the clock and returns err.
	taking := func(d time.Duration, err error) func(context.Context) (int, error) {
		return func(context.Context) (int, error) {
			clock.Advance(d)
			return 1, err
		}
	}

	pipeline("limit", r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, InitialLimit: 2, MinWindowSamples: 1})
	limit, err := reg.AdaptiveLimit("limit")
	if err != nil {
		t.Fatal(err)
	}
	a, errA := limit.Acquire()
	b, errB := limit.Acquire()
	if _, err := limit.Acquire(); !errors.Is(err, r4c.ErrLimitExceeded) || errA != nil || errB != nil {
		t.Fatalf("limit: %v, %v, %v", errA, errB, err)
	}
	clock.Advance(100 * time.Millisecond)
	a.Success()
	b.Drop()
	clock.Advance(800 * time.Millisecond)
	c, _ := limit.Acquire()
	if _, err := limit.Acquire(); err != nil { // held to the end: in flight at the scrape
		t.Fatal(err)
	}
	clock.Advance(100 * time.Millisecond)
	c.Success() // 100ms, at the end of the window: it ends the window

	pipeline("parts", r4c.AdaptiveLimitConfig{InitialLimit: 4, MinLimit: 4, MaxLimit: 4, MaxWait: time.Second,
		Partitions: map[string]float64{"a": 0.5, "b": 0.25}})
	parts, err := reg.AdaptiveLimit("parts")
	if err != nil {
		t.Fatal(err)
	}
	inA, inB := r4c.WithPartition(ctx, "a"), r4c.WithPartition(ctx, "b")
	for _, c := range []context.Context{inB, inB, inA} { // b: its guarantee, then the free slot; a: one of its two
		if _, err := parts.AcquireContext(c); err != nil {
			t.Fatal(err)
		}
	}
	waited := make(chan error, 1)
	go func() { _, err := parts.AcquireContext(inB); waited <- err }() // a's second slot is reserved
	if err := clock.WaitPending(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := <-waited; !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("parts: %v", err)
	}

	bulk := pipeline("bulk", r4c.BulkheadConfig{MaxConcurrent: 1})
	bulk.ExecuteAsync(ctx, func(context.Context) *r4c.Future[int] { return r4c.NewFuture[int]() }) // never completes
	if _, err := bulk.Execute(ctx, taking(0, nil)); !errors.Is(err, r4c.ErrBulkheadFull) {
		t.Fatalf("bulk: %v", err)
	}

	rate := pipeline("rate", r4c.RateLimiterConfig{Limit: 2, Period: time.Minute})
	for i := range 3 {
		if _, err := rate.Execute(ctx, taking(0, nil)); (err != nil) != (i == 2) {
			t.Fatalf("rate, call %d: %v", i, err)
		}
	}

	breaker := pipeline("breaker", r4c.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, SlowCallDuration: time.Second})
	breaker.Execute(ctx, taking(2*time.Second, nil))
	breaker.Execute(ctx, taking(0, boom))
	if _, err := breaker.Execute(ctx, taking(0, nil)); !errors.Is(err, r4c.ErrCircuitOpen) {
		t.Fatalf("breaker: %v", err)
	}

	retry := pipeline("retry", r4c.RetryConfig{MaxAttempts: 2, Wait: r4c.NoWait})
	retry.Execute(ctx, taking(0, nil))
	n := 0
	retry.Execute(ctx, func(context.Context) (int, error) {
		if n++; n == 1 {
			return 0, boom
		}
		return n, nil
	})
	retry.Execute(ctx, taking(0, boom))

	timeout := pipeline("timeout", r4c.TimeoutConfig{Timeout: time.Second})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := timeout.Execute(ctx, func(context.Context) (int, error) { <-release; return 1, nil })
		done <- err
	}()
	if err := clock.WaitPending(ctx, 1); err != nil { // the deadline's timer
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := <-done; !errors.Is(err, r4c.ErrCallTimeout) {
		t.Fatalf("timeout: %v", err)
	}
	close(release)

	hedge := pipeline("hedge", r4c.HedgeConfig{Delay: 100 * time.Millisecond, MaxHedges: 1})
	var attempts []*r4c.Future[int]
	f := hedge.ExecuteAsync(ctx, func(context.Context) *r4c.Future[int] {
		f := r4c.NewFuture[int]()
		attempts = append(attempts, f)
		return f
	})
	clock.Advance(100 * time.Millisecond) // launches the extra attempt
	if len(attempts) != 2 {
		t.Fatalf("hedge: %d attempts", len(attempts))
	}
	attempts[1].Complete(2, nil)
	if v, err := f.Get(ctx); v != 2 || err != nil {
		t.Fatalf("hedge: %v, %v", v, err)
	}
}

// Text renders samples in the Prometheus text format, with the HELP of each metric from the
// metric table and the TYPE given by the sample, families sorted by name, as a registry's
// Gather and testutil write them.
func Text(samples []Sample) string {
	help := map[string]string{}
	for _, m := range metrics.All {
		help[m.Prom] = m.Help
	}
	byName := map[string][]Sample{}
	var names []string
	for _, s := range samples {
		if _, ok := byName[s.Name]; !ok {
			names = append(names, s.Name)
		}
		byName[s.Name] = append(byName[s.Name], s)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		ss := byName[name]
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help[name], name, ss[0].Type)
		sort.SliceStable(ss, func(i, j int) bool { return ss[i].Labels < ss[j].Labels })
		for _, s := range ss {
			labels := ""
			if s.Labels != "" {
				labels = "{" + s.Labels + "}"
			}
			fmt.Fprintf(&b, "%s%s %v\n", name, labels, s.Value)
		}
	}
	return b.String()
}
