package r4c_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// TestHammerEveryPipelineShape runs 64 goroutines of calls through every pipeline shape (every subset of retry,
// hedge, breaker, rate limiter, timeout and bulkhead around a fixed adaptive limit, some with a
// fallback), on the system clock and on a manual clock moved by its own goroutine, with every
// kind of call (Execute, Go, ExecuteAsync) and every fault: errors, panics, functions that
// ignore their context, cancelled contexts, cancelled futures. It checks that the limit and the
// bulkhead are never exceeded, that every future completes exactly once, and that afterwards no
// slot is held, no waiter queued, no timer pending (manual clock) and no goroutine left.
//
// Short by default (20 calls a goroutine); R4C_LONG=1 (bash .ci/run --long) runs 5000 calls a
// goroutine, and R4C_HAMMER_CALLS=n n calls; every shape each time.
func TestHammerEveryPipelineShape(t *testing.T) {
	calls, shapes := 20, hammerShapes()
	if n, err := strconv.Atoi(os.Getenv("R4C_HAMMER_CALLS")); err == nil && n > 0 {
		calls = n // every shape, n calls a goroutine
	} else if os.Getenv("R4C_LONG") != "" {
		calls = 5000
	}
	for _, clock := range []string{"system", "manual"} {
		for _, s := range shapes {
			t.Run(clock+"/"+s.name, func(t *testing.T) { hammer(t, s, clock == "manual", calls) })
		}
	}
}

type hammerShape struct {
	name string
	cfgs []r4c.PolicyConfig
}

const hammerLimit = 8

// hammerShapes lists every subset of the policies around a fixed limit.
func hammerShapes() []hammerShape {
	optional := []struct {
		name string
		cfg  r4c.PolicyConfig
	}{
		{"retry", r4c.RetryConfig{MaxAttempts: 2, Wait: 50 * time.Microsecond}},
		{"hedge", r4c.HedgeConfig{Delay: 200 * time.Microsecond}},
		{"breaker", r4c.CircuitBreakerConfig{SlidingWindowSize: 20, MinimumCalls: 20, WaitInOpen: time.Millisecond, PermittedCallsInHalfOpen: 2}},
		{"rate", r4c.RateLimiterConfig{Limit: 200, Period: time.Millisecond, MaxWait: time.Millisecond}},
		{"timeout", r4c.TimeoutConfig{Timeout: time.Millisecond}},
		{"bulkhead", r4c.BulkheadConfig{MaxConcurrent: hammerLimit / 2, MaxWait: 100 * time.Microsecond}},
	}
	var shapes []hammerShape
	for mask := range 1 << len(optional) {
		limit := r4c.AdaptiveLimitConfig{InitialLimit: hammerLimit, MinLimit: hammerLimit, MaxLimit: hammerLimit}
		name := "limit"
		switch mask % 4 {
		case 2: // calls wait for a slot, by priority
			limit.MaxWait, limit.MaxWaiting, name = 200*time.Microsecond, hammerLimit, "limit(wait)"
		case 3: // and half of them in a partition with a guaranteed half of the limit
			limit.MaxWait, limit.MaxWaiting, name = 200*time.Microsecond, hammerLimit, "limit(wait,partition)"
			limit.Partitions = map[string]float64{"a": 0.5}
		}
		s := hammerShape{name: name, cfgs: []r4c.PolicyConfig{limit}}
		for i, o := range optional {
			if mask&(1<<i) != 0 {
				s.name += "+" + o.name
				s.cfgs = append(s.cfgs, o.cfg)
			}
		}
		if mask%3 == 1 {
			s.name += "+fallback"
			s.cfgs = append(s.cfgs, r4c.Fallback(func(context.Context, error) (int, error) { return -1, nil }, errOverloaded))
		}
		shapes = append(shapes, s)
	}
	return shapes
}

func hammer(t *testing.T, s hammerShape, manual bool, calls int) {
	before := runtime.NumGoroutine()
	opts := []r4c.Option{r4c.WithDefaults(r4c.AdaptiveLimitConfig{MinWindowSamples: 1, Window: time.Millisecond})}
	var clock *r4ctest.ManualClock
	if manual {
		clock = r4ctest.NewManualClock()
		opts = append(opts, r4c.WithClock(clock))
	}
	reg, err := r4c.NewRegistry(opts...)
	if err != nil {
		t.Fatal(err)
	}
	p := newPipeline[int](t, reg, "hammer", s.cfgs...)
	limit := handle(t, reg, "hammer")
	bulkhead, _ := reg.Bulkhead("hammer")

	stop := make(chan struct{})
	var mover sync.WaitGroup
	if manual {
		mover.Add(1)
		go func() { // the manual clock moves on its own: its timers fire on this goroutine
			defer mover.Done()
			for {
				select {
				case <-stop:
					return
				default:
					clock.Advance(50 * time.Microsecond)
					runtime.Gosched()
				}
			}
		}()
	}
	var over atomic.Value
	check := func() {
		// The limit adds a call before it compares, and takes it back when over: a reading may
		// count, for an instant, the calls being rejected. Only a count over the limit that
		// stays while other goroutines run is an admission too many.
		if n := limit.InFlight(); n > hammerLimit {
			for range 100 {
				runtime.Gosched()
				if n = min(n, limit.InFlight()); n <= hammerLimit {
					break
				}
			}
			if n > hammerLimit {
				over.Store(fmt.Sprintf("%d calls in flight through a limit of %d", n, hammerLimit))
			}
		}
		if bulkhead != nil && bulkhead.InFlight() > hammerLimit/2 {
			over.Store(fmt.Sprintf("%d calls in a bulkhead of %d", bulkhead.InFlight(), hammerLimit/2))
		}
	}
	fn := func(g, i int) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			check()
			switch (g*7 + i) % 8 {
			case 0:
				return 0, errOverloaded
			case 1:
				panic(errNotFound)
			case 2:
				for range 500 { // ignores its context while other goroutines (the clock's) run
					runtime.Gosched()
				}
				return 2, nil
			case 3:
				for range 500 { // ends with its context, or after a while when nothing cancels it
					select {
					case <-ctx.Done():
						return 0, ctx.Err()
					default:
						runtime.Gosched()
					}
				}
				return 3, nil
			}
			return i, nil
		}
	}
	var wg sync.WaitGroup
	var completions atomic.Int64
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				// Half the calls in partition "a" (where the limit has it), every priority.
				base := r4c.WithPriority(context.Background(), r4c.Priority(i%4-1))
				if i%2 == 0 {
					base = r4c.WithPartition(base, "a")
				}
				ctx, cancel := context.WithCancel(base)
				if (g+i)%5 == 0 {
					cancel() // a cancelled context
				}
				f := fn(g, i)
				switch (g + i) % 3 {
				case 0:
					func() {
						defer func() { _ = recover() }() // a panic is re-raised by Execute
						_, _ = p.Execute(ctx, f)
					}()
				case 1:
					hammerWait(p.Go(ctx, f), i, cancel, &completions)
				case 2:
					var fut *r4c.Future[int]
					func() {
						defer func() { _ = recover() }() // the first attempt's panic is re-raised
						fut = p.ExecuteAsync(ctx, func(ctx context.Context) *r4c.Future[int] { return p.Go(ctx, f) })
					}()
					if fut != nil {
						hammerWait(fut, i, cancel, &completions)
					}
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	close(stop)
	mover.Wait()
	if msg := over.Load(); msg != nil {
		t.Fatal(msg)
	}
	// Afterwards: nothing held, nothing queued, nothing scheduled, no goroutine left.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if manual {
			clock.Advance(time.Second)
		}
		idle := limit.InFlight() == 0 && limit.Snapshot().Waiting == 0 && (bulkhead == nil || bulkhead.InFlight() == 0 && bulkhead.Snapshot().Waiting == 0) &&
			(!manual || clock.Pending() == 0) && runtime.NumGoroutine() <= before
		if idle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not idle afterwards: limit %d in flight, bulkhead %v, timers %v, goroutines %d (before %d)",
				limit.InFlight(), bulkhead.Snapshot(), pendingOf(clock), runtime.NumGoroutine(), before)
		}
		runtime.Gosched() // waiting for goroutines to end, not for a behaviour to happen
	}
}

func pendingOf(c *r4ctest.ManualClock) int {
	if c == nil {
		return 0
	}
	return c.Pending()
}

// hammerWait waits for f to complete, cancelling it first for some calls, and checks that it
// completes once and stays completed with the same result.
func hammerWait(f *r4c.Future[int], i int, cancel context.CancelFunc, completions *atomic.Int64) {
	if i%4 == 0 {
		f.Cancel()
	}
	if i%7 == 0 {
		cancel()
	}
	v, err := f.Get(context.Background())
	v2, err2 := f.Get(context.Background())
	if v != v2 || !errors.Is(err2, err) && err2 != err {
		panic(fmt.Sprintf("a future changed its result: %v, %v then %v, %v", v, err, v2, err2))
	}
	if f.Complete(99, nil) {
		panic("a completed future completed again")
	}
	completions.Add(1)
}
