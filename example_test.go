package r4c_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

func ExampleNewPipeline() {
	reg, err := r4c.NewRegistry()
	if err != nil {
		panic(err)
	}
	search, err := r4c.NewPipeline[string](reg, "search", r4c.AdaptiveLimitConfig{MaxLimit: 100})
	if err != nil {
		panic(err)
	}
	s, err := search.Execute(context.Background(), func(ctx context.Context) (string, error) {
		return "results for go", nil // call the dependency here, with ctx
	})
	fmt.Println(s, err)

	limit, _ := reg.AdaptiveLimit("search") // the pipeline's id is the instance id
	fmt.Println(limit.Limit(), limit.InFlight())
	// Output:
	// results for go <nil>
	// 20 0
}

// A full limit rejects at once with an error that names the instance; the function is not called.
func ExampleLimitExceededError() {
	reg, _ := r4c.NewRegistry()
	p, _ := r4c.NewPipeline[string](reg, "inventory", r4c.AdaptiveLimitConfig{InitialLimit: 1})
	limit, _ := reg.AdaptiveLimit("inventory")
	held, _ := limit.Acquire() // somebody holds the only slot
	defer held.Success()

	_, err := p.Execute(context.Background(), func(context.Context) (string, error) { return "unreachable", nil })
	var le *r4c.LimitExceededError
	fmt.Println(errors.Is(err, r4c.ErrLimitExceeded), errors.As(err, &le) && le.InstanceID() == "inventory")
	fmt.Println(err)
	// Output:
	// true true
	// r4c: adaptive limit "inventory" exceeded: every slot is taken
}

// Per-call permits serve code that cannot hand over a closure, here a queue consumer; reg.Build
// makes the instance without a pipeline. (For HTTP and gRPC, r4chttp and r4cgrpc do this, with
// status codes and Retry-After.)
func ExampleAdaptiveLimitHandle_Acquire() {
	reg, _ := r4c.NewRegistry()
	if err := reg.Build("jobs", r4c.AdaptiveLimitConfig{MaxLimit: 50}); err != nil {
		panic(err)
	}
	limit, _ := reg.AdaptiveLimit("jobs")

	process := func(ctx context.Context, job string) error { return nil }
	consume := func(ctx context.Context, job string) (err error) {
		permit, err := limit.Acquire()
		if err != nil {
			return err // full: leave the job in the queue for later
		}
		defer func() {
			if v := recover(); v != nil {
				permit.Drop() // a panic is a drop; re-raised with the slot free
				panic(v)
			}
			// nil: a sample; DropOn or r4c.Dropped: a drop; ctx done or r4c.Ignored: no sample.
			permit.Release(ctx, err)
		}()
		return process(ctx, job)
	}

	fmt.Println(consume(context.Background(), "resize"), limit.InFlight())
	// Output: <nil> 0
}

// Configuration resolves in layers: built-in defaults < WithDefaults < the named configuration <
// the call site < WithInstance.
func ExampleNewRegistry() {
	reg, err := r4c.NewRegistry(
		r4c.WithDefaults(r4c.AdaptiveLimitConfig{MaxLimit: 100}),
		r4c.WithConfig("backend", r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, BackoffRatio: 0.8, MinWindowSamples: 20}),
		r4c.WithInstance("orders", r4c.AdaptiveLimitConfig{InitialLimit: 5}),
	)
	if err != nil {
		panic(err)
	}
	if _, err := r4c.NewPipeline[string](reg, "orders", r4c.AdaptiveLimitConfig{Config: "backend", InitialLimit: 10}); err != nil {
		panic(err)
	}
	orders, _ := reg.AdaptiveLimit("orders")
	c := orders.Config()
	fmt.Println(c.Algorithm, c.BackoffRatio, c.MinWindowSamples, c.MaxLimit, c.InitialLimit)

	_, err = r4c.NewPipeline[string](reg, "orders", r4c.AdaptiveLimitConfig{Config: "backend", MaxLimit: 50})
	fmt.Println(err)
	// Output:
	// aimd 0.8 20 100 5
	// R4C-REG-008: instance "orders" already exists with different adaptiveLimit settings: maxLimit 100 vs 50
}

func ExampleErrorCode() {
	_, err := r4c.NewRegistry(r4c.WithDefaults(r4c.AdaptiveLimitConfig{Smoothing: 1.5}))
	fmt.Println(r4c.ErrorCode(err))
	fmt.Println(err)
	// Output:
	// R4C-REG-001
	// R4C-REG-001: registry defaults: adaptiveLimit.smoothing = 1.5 is invalid: want in (0, 1]
}

// The algorithms work on their own, one window at a time.
func ExampleNewAdaptiveAlgorithm() {
	alg, err := r4c.NewAdaptiveAlgorithm(r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, InitialLimit: 10, MaxLimit: 100, BackoffRatio: 0.8})
	if err != nil {
		panic(err)
	}
	fmt.Println(alg.Update(r4c.WindowSummary{AvgLatency: 10 * time.Millisecond, MaxInFlight: 10}))
	fmt.Println(alg.Update(r4c.WindowSummary{AvgLatency: 10 * time.Millisecond, MaxInFlight: 11, Dropped: true}))

	g2, _ := r4c.NewAdaptiveAlgorithm(r4c.AdaptiveLimitConfig{})
	g2.Update(r4c.WindowSummary{AvgLatency: 10 * time.Millisecond, MaxInFlight: 20})
	fmt.Println(g2.Limit(), g2.Estimate())
	// Output:
	// 11
	// 8
	// 20 20.8
}

// Vegas on its own: the first window gives the no-load latency; a window at that latency has no
// queue and the limit grows by beta (6 x log10(20) = 6); a window twice as slow has a queue of
// ceil(26 x (1 - 10/20)) = 13, above beta, and the limit falls by log10(26) = 1. Vegas and Knee
// also report the no-load latency they measured.
func ExampleNewAdaptiveAlgorithm_vegas() {
	vegas, err := r4c.NewAdaptiveAlgorithm(r4c.AdaptiveLimitConfig{Algorithm: r4c.Vegas, InitialLimit: 20, MaxLimit: 200})
	if err != nil {
		panic(err)
	}
	noLoad := vegas.(interface{ NoLoadLatency() time.Duration })
	for _, latency := range []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond} {
		limit := vegas.Update(r4c.WindowSummary{AvgLatency: latency, MaxInFlight: vegas.Limit()})
		fmt.Println(limit, noLoad.NoLoadLatency())
	}
	// Output:
	// 20 10ms
	// 26 10ms
	// 25 10ms
}

// With a manual clock, latencies are what the clock says and windows end when it passes them;
// pending futures hold their slots.
func ExamplePipeline_ExecuteAsync() {
	clock := r4ctest.NewManualClock()
	reg, _ := r4c.NewRegistry(r4c.WithClock(clock), r4c.WithDefaults(r4c.AdaptiveLimitConfig{MinWindowSamples: 1}))
	p, _ := r4c.NewPipeline[string](reg, "orders-async", r4c.AdaptiveLimitConfig{InitialLimit: 2})
	ctx := context.Background()

	var pending []*r4c.Future[string]
	place := func(order string) *r4c.Future[string] {
		return p.ExecuteAsync(ctx, func(context.Context) *r4c.Future[string] {
			f := r4c.NewFuture[string]()
			pending = append(pending, f)
			return f
		})
	}
	a, _ := place("a"), place("b")
	_, err := place("c").Get(ctx)
	fmt.Println(errors.Is(err, r4c.ErrLimitExceeded))

	clock.Advance(time.Second)
	pending[0].Complete("placed a", nil) // ends the window
	pending[1].Complete("placed b", nil)
	v, _ := a.Get(ctx)
	limit, _ := reg.AdaptiveLimit("orders-async")
	s := limit.Snapshot()
	fmt.Println(v, s.Windows, s.WindowLatency, s.InFlight)
	// Output:
	// true
	// placed a 1 1s 0
}

func ExamplePipeline_Go() {
	reg, _ := r4c.NewRegistry()
	p, _ := r4c.NewPipeline[int](reg, "compute", r4c.AdaptiveLimitConfig{})
	f := p.Go(context.Background(), func(ctx context.Context) (int, error) { return 6 * 7, nil })
	v, err := f.Get(context.Background())
	fmt.Println(v, err)
	// Output: 42 <nil>
}

func ExampleWithObserver() {
	clock := r4ctest.NewManualClock()
	reg, _ := r4c.NewRegistry(
		r4c.WithClock(clock),
		r4c.WithObserver(func(e r4c.Event) {
			fmt.Println(e.Type, e.Kind, e.Instance, e.OldLimit, "->", e.Limit)
		}),
	)
	p, _ := r4c.NewPipeline[string](reg, "pay", r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, InitialLimit: 2, MinWindowSamples: 1})
	limit, _ := reg.AdaptiveLimit("pay")
	a, _ := limit.Acquire()
	b, _ := limit.Acquire()
	_, _ = p.Execute(context.Background(), func(context.Context) (string, error) { return "", nil }) // rejected
	clock.Advance(time.Second)
	a.Success() // ends a window with both slots in use: AIMD grows by one
	b.Success()
	// Output:
	// rejected adaptivelimit pay 0 -> 2
	// limit_changed adaptivelimit pay 2 -> 3
}

// External configuration uses flat keys; the same layers as WithDefaults, WithConfig and
// WithInstance, the later option winning.
func ExampleWithProperties() {
	reg, err := r4c.NewRegistry(r4c.WithProperties(map[string]string{
		"defaults.adaptiveLimit.maxLimit":            "100",
		"configs.backend.adaptiveLimit.algorithm":    "aimd",
		"configs.backend.adaptiveLimit.backoffRatio": "0.8",
		"instances.orders.adaptiveLimit.config":      "backend",
		"instances.orders.timeout.timeout":           "2s",
	}))
	if err != nil {
		panic(err)
	}
	if _, err := r4c.NewPipeline[string](reg, "orders", r4c.AdaptiveLimitConfig{}, r4c.TimeoutConfig{}); err != nil {
		panic(err)
	}
	limit, _ := reg.AdaptiveLimit("orders")
	timeout, _ := reg.Timeout("orders")
	c := limit.Config()
	fmt.Println(c.Algorithm, c.BackoffRatio, c.MaxLimit, timeout.Config().Timeout)

	_, err = r4c.NewRegistry(r4c.WithProperties(map[string]string{"defaults.adaptiveLimit.maxLimt": "100"}))
	fmt.Println(err)
	// Output:
	// aimd 0.8 100 2s
	// R4C-CFG-001: WithProperties: unknown key "defaults.adaptiveLimit.maxLimt": did you mean "defaults.adaptiveLimit.maxLimit"?
}
