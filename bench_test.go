package r4c_test

// Benchmarks of the per-call cost (docs/performance.md). Run them with
//
//	go test -run '^$' -bench . -benchmem -count 10 -cpu 1,2 .
//
// and compare medians with benchstat. The targets are ratios measured in the same run:
// BenchmarkEngine <= 1.3x BenchmarkFloor, BenchmarkPipeline <= 1.5x BenchmarkEngine, and 0
// allocs/op for all three and for BenchmarkEngineReject. The peer comparison (failsafe-go,
// x/sync/semaphore) lives in the separate module under benchmarks/ so that this module keeps
// no dependencies. docs/performance.md records the numbers.

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/benchfloor"
)

// Sinks keep results alive so that nothing under measurement is optimised away.
var (
	sinkInt  int64
	sinkAtom atomic.Int64
	sinkTime time.Time
	sinkStr  string
)

// benchLimit is large enough that no benchmark of an admitted call is ever rejected, and is
// also the limit's minimum and maximum, so the limit never moves during a run.
const benchLimit = 1000

var benchCfg = r4c.AdaptiveLimitConfig{InitialLimit: benchLimit, MinLimit: benchLimit, MaxLimit: benchLimit}

func okCall(context.Context) (string, error) { return "ok", nil }

// ---------- Floor ----------

// BenchmarkFloor is the floor of an admitted call: two monotonic clock reads plus the atomics
// of taking and returning a slot (internal/benchfloor, shared with the peer benchmarks).
func BenchmarkFloor(b *testing.B) {
	b.Run("seq", benchfloor.Seq)
	b.Run("parallel", benchfloor.Parallel)
}

// ---------- Engine ----------

// newBenchLimit builds a registry on the system clock with one adaptive limit, through a
// pipeline (instances exist once a pipeline uses them), and returns both.
func newBenchLimit(b *testing.B, cfg r4c.AdaptiveLimitConfig, opts ...r4c.Option) (*r4c.Pipeline[string], *r4c.AdaptiveLimitHandle) {
	b.Helper()
	reg, err := r4c.NewRegistry(opts...)
	if err != nil {
		b.Fatal(err)
	}
	p, err := r4c.NewPipeline[string](reg, "bench", cfg)
	if err != nil {
		b.Fatal(err)
	}
	h, err := reg.AdaptiveLimit("bench")
	if err != nil {
		b.Fatal(err)
	}
	return p, h
}

func benchEngine(b *testing.B, opts ...r4c.Option) {
	b.Run("seq", func(b *testing.B) {
		_, h := newBenchLimit(b, benchCfg, opts...)
		b.ReportAllocs()
		for b.Loop() {
			p, err := h.Acquire()
			if err != nil {
				b.Fatal(err)
			}
			p.Success()
		}
		if h.InFlight() != 0 {
			b.Fatalf("%d slots leaked", h.InFlight())
		}
	})
	b.Run("parallel", func(b *testing.B) {
		_, h := newBenchLimit(b, benchCfg, opts...)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, err := h.Acquire()
				if err != nil {
					panic(err)
				}
				p.Success()
			}
		})
		if h.InFlight() != 0 {
			b.Fatalf("%d slots leaked", h.InFlight())
		}
	})
}

// BenchmarkEngine is an admitted call through the engine: Acquire, then Success (a sample), on
// the system clock.
func BenchmarkEngine(b *testing.B) { benchEngine(b) }

// wrappedClock is the system clock behind a type the registry does not recognise, so that the
// engine reads it through the Clock interface instead of its system-clock fast path.
type wrappedClock struct{ r4c.Clock }

// BenchmarkEngineClockInterface is BenchmarkEngine with the clock read through the Clock
// interface: the difference is what the system-clock fast path saves.
func BenchmarkEngineClockInterface(b *testing.B) {
	benchEngine(b, r4c.WithClock(wrappedClock{r4c.SystemClock()}))
}

// BenchmarkEngineReject is a rejection: the only slot is taken, so Acquire returns the
// instance's *LimitExceededError.
func BenchmarkEngineReject(b *testing.B) {
	cfg := r4c.AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1, MaxLimit: 1}
	b.Run("seq", func(b *testing.B) {
		_, h := newBenchLimit(b, cfg)
		held, err := h.Acquire()
		if err != nil {
			b.Fatal(err)
		}
		defer held.Success()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := h.Acquire(); err == nil {
				b.Fatal("admitted")
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		_, h := newBenchLimit(b, cfg)
		held, err := h.Acquire()
		if err != nil {
			b.Fatal(err)
		}
		defer held.Success()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := h.Acquire(); err == nil {
					panic("admitted")
				}
			}
		})
	})
}

// BenchmarkEngineDrop is an admitted call that ends as a drop (a timeout, say), under Knee: a
// drop is recorded under the lock, where the engine also asks Knee whether the window ends
// early (docs/knee-design.md, "timeouts end the window"). Its loops repeat benchEngine's
// with Drop for Success: passing the end as a function would put an indirect call in the path
// that BenchmarkEngine measures, and move its recorded figures.
func BenchmarkEngineDrop(b *testing.B) {
	cfg := benchCfg
	cfg.Algorithm = r4c.Knee
	b.Run("seq", func(b *testing.B) {
		_, h := newBenchLimit(b, cfg)
		b.ReportAllocs()
		for b.Loop() {
			p, err := h.Acquire()
			if err != nil {
				b.Fatal(err)
			}
			p.Drop()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		_, h := newBenchLimit(b, cfg)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, err := h.Acquire()
				if err != nil {
					panic(err)
				}
				p.Drop()
			}
		})
	})
}

// ---------- Pipeline ----------

// BenchmarkPipeline is an admitted call through Pipeline.Execute with only an AdaptiveLimit.
func BenchmarkPipeline(b *testing.B) {
	ctx := context.Background()
	b.Run("seq", func(b *testing.B) {
		p, h := newBenchLimit(b, benchCfg)
		b.ReportAllocs()
		var v string
		for b.Loop() {
			var err error
			if v, err = p.Execute(ctx, okCall); err != nil {
				b.Fatal(err)
			}
		}
		sinkStr = v
		if h.InFlight() != 0 {
			b.Fatalf("%d slots leaked", h.InFlight())
		}
	})
	b.Run("parallel", func(b *testing.B) {
		p, h := newBenchLimit(b, benchCfg)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := p.Execute(ctx, okCall); err != nil {
					panic(err)
				}
			}
		})
		if h.InFlight() != 0 {
			b.Fatalf("%d slots leaked", h.InFlight())
		}
	})
	b.Run("seq-reject", func(b *testing.B) {
		p, h := newBenchLimit(b, r4c.AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1, MaxLimit: 1})
		held, err := h.Acquire()
		if err != nil {
			b.Fatal(err)
		}
		defer held.Success()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Execute(ctx, okCall); err == nil {
				b.Fatal("admitted")
			}
		}
		if _, err := p.Execute(ctx, okCall); !errors.Is(err, r4c.ErrLimitExceeded) {
			b.Fatalf("err = %v, want ErrLimitExceeded", err)
		}
	})
}

// ---------- Clock reads ----------

// clockIface is the system clock held in a package variable, so that the compiler cannot see
// its dynamic type and must call Nanotime through the interface.
var clockIface = r4c.SystemClock()

// BenchmarkClock measures one read of each way of getting the time. time.Since on a fixed start
// reads only the monotonic clock; time.Now reads the wall clock too.
func BenchmarkClock(b *testing.B) {
	b.Run("time.Now", func(b *testing.B) {
		b.ReportAllocs()
		var t time.Time
		for b.Loop() {
			t = time.Now()
		}
		sinkTime = t
	})
	b.Run("time.Since", func(b *testing.B) {
		base := time.Now()
		b.ReportAllocs()
		var sum time.Duration
		for b.Loop() {
			sum += time.Since(base)
		}
		sinkInt = int64(sum)
	})
	b.Run("SystemClock.Nanotime", func(b *testing.B) {
		b.ReportAllocs()
		var sum int64
		for b.Loop() {
			sum += clockIface.Nanotime()
		}
		sinkInt = sum
	})
}

// ---------- Asynchronous calls ----------

// completedCall is an asynchronous function whose future is complete when it returns.
func completedCall(context.Context) *r4c.Future[string] {
	f := r4c.NewFuture[string]()
	f.Complete("ok", nil)
	return f
}

// BenchmarkAsync is one asynchronous call awaited to its end: Go (fn in a goroutine) and
// ExecuteAsync (fn returns its future completed), through an adaptive limit alone and through
// the realistic stack (retry, breaker, limit, timeout); and, for comparison, Execute through
// the stack and through a timeout alone.
func BenchmarkAsync(b *testing.B) {
	ctx := context.Background()
	stack := []r4c.PolicyConfig{r4c.RetryConfig{MaxAttempts: 3},
		r4c.CircuitBreakerConfig{FailureRateThreshold: 50, SlidingWindowSize: 100, MinimumCalls: 100, WaitInOpen: time.Minute},
		benchCfg, r4c.TimeoutConfig{Timeout: time.Second}}
	for _, c := range []struct {
		name string
		cfgs []r4c.PolicyConfig
	}{{"limit", []r4c.PolicyConfig{benchCfg}}, {"stack", stack}, {"timeout", []r4c.PolicyConfig{r4c.TimeoutConfig{Timeout: time.Second}}}} {
		p, err := r4c.NewPipeline[string](mustRegistry(b), "async", c.cfgs...)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/Go", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Go(ctx, okCall).Get(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/ExecuteAsync", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.ExecuteAsync(ctx, completedCall).Get(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/Execute", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Execute(ctx, okCall); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func mustRegistry(tb testing.TB) *r4c.Registry {
	reg, err := r4c.NewRegistry()
	if err != nil {
		tb.Fatal(err)
	}
	return reg
}
