package benchmarks

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/benchfloor"
	"golang.org/x/sync/semaphore"
)

// limit is the fixed limit of every contender: far above the in-flight count of any benchmark,
// so every call is admitted, and the minimum and maximum too, so no limit moves during a run.
const limit = 1000

// Sinks keep results alive so that nothing under measurement is optimised away.
var (
	sinkInt  int64
	sinkAtom atomic.Int64
	sinkStr  string
)

// work is the empty call every contender runs, in the two signatures the libraries take.
func work(context.Context) (string, error) { return "ok", nil }
func workNoCtx() (string, error)           { return "ok", nil }

// ---------- contenders ----------

// newR4C returns a pipeline with only an adaptive limit, fixed at limit, on the system clock,
// and the limit's handle.
func newR4C(tb testing.TB) (*r4c.Pipeline[string], *r4c.AdaptiveLimitHandle) {
	tb.Helper()
	reg, err := r4c.NewRegistry()
	if err != nil {
		tb.Fatal(err)
	}
	p, err := r4c.NewPipeline[string](reg, "bench", r4c.AdaptiveLimitConfig{InitialLimit: limit, MinLimit: limit, MaxLimit: limit})
	if err != nil {
		tb.Fatal(err)
	}
	h, err := reg.AdaptiveLimit("bench")
	if err != nil {
		tb.Fatal(err)
	}
	return p, h
}

func newSemaphore() *semaphore.Weighted { return semaphore.NewWeighted(limit) }

// newFailsafe returns failsafe-go's adaptive limiter with min = initial = max = limit. Without
// the minimum it lowers its limit towards maxLimitFactor (default 5) times the peak in-flight
// count, and a run could see rejections.
func newFailsafe() adaptivelimiter.AdaptiveLimiter[string] {
	return adaptivelimiter.NewBuilder[string]().WithLimits(limit, limit, limit).Build()
}

// ---------- benchmarks ----------

// BenchmarkAdmitted measures one admitted empty call of each contender, sequentially ("seq")
// and from GOMAXPROCS goroutines sharing one instance ("parallel"). The loop bodies are
// written out per contender so that no contender pays for an extra indirect call.
func BenchmarkAdmitted(b *testing.B) {
	ctx := context.Background()

	b.Run("floor/seq", benchfloor.Seq)
	b.Run("floor/parallel", benchfloor.Parallel)

	b.Run("r4c-engine/seq", func(b *testing.B) {
		_, h := newR4C(b)
		b.ReportAllocs()
		for b.Loop() {
			p, err := h.Acquire()
			if err != nil {
				b.Fatal(err)
			}
			p.Success()
		}
	})
	b.Run("r4c-engine/parallel", func(b *testing.B) {
		_, h := newR4C(b)
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
	})

	b.Run("r4c-pipeline/seq", func(b *testing.B) {
		p, _ := newR4C(b)
		b.ReportAllocs()
		var v string
		for b.Loop() {
			var err error
			if v, err = p.Execute(ctx, work); err != nil {
				b.Fatal(err)
			}
		}
		sinkStr = v
	})
	b.Run("r4c-pipeline/parallel", func(b *testing.B) {
		p, _ := newR4C(b)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := p.Execute(ctx, work); err != nil {
					panic(err)
				}
			}
		})
	})

	b.Run("semaphore/seq", func(b *testing.B) {
		s := newSemaphore()
		b.ReportAllocs()
		for b.Loop() {
			if !s.TryAcquire(1) {
				b.Fatal("rejected")
			}
			s.Release(1)
		}
	})
	b.Run("semaphore/parallel", func(b *testing.B) {
		s := newSemaphore()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if !s.TryAcquire(1) {
					panic("rejected")
				}
				s.Release(1)
			}
		})
	})

	b.Run("failsafe-permit/seq", func(b *testing.B) {
		l := newFailsafe()
		b.ReportAllocs()
		for b.Loop() {
			p, ok := l.TryAcquirePermit()
			if !ok {
				b.Fatal("rejected")
			}
			p.Record()
		}
	})
	b.Run("failsafe-permit/parallel", func(b *testing.B) {
		l := newFailsafe()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, ok := l.TryAcquirePermit()
				if !ok {
					panic("rejected")
				}
				p.Record()
			}
		})
	})

	b.Run("failsafe-executor/seq", func(b *testing.B) {
		exec := failsafe.With[string](newFailsafe())
		b.ReportAllocs()
		var v string
		for b.Loop() {
			var err error
			if v, err = exec.Get(workNoCtx); err != nil {
				b.Fatal(err)
			}
		}
		sinkStr = v
	})
	b.Run("failsafe-executor/parallel", func(b *testing.B) {
		exec := failsafe.With[string](newFailsafe())
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := exec.Get(workNoCtx); err != nil {
					panic(err)
				}
			}
		})
	})
}
