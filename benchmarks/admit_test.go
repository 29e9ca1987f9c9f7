package benchmarks

import (
	"context"
	"testing"

	"github.com/failsafe-go/failsafe-go"
)

// TestContendersAdmit checks what BenchmarkAdmitted relies on: every contender, set up as the
// benchmark sets it up, admits and completes many calls, runs the function, leaves no slot
// taken and keeps its limit.
func TestContendersAdmit(t *testing.T) {
	const calls = 10_000 // enough for failsafe-go to recompute its limit (50 samples a window)
	ctx := context.Background()

	t.Run("floor", func(t *testing.T) {
		f := newFloor()
		for range calls {
			if f.call() < 0 {
				t.Fatal("rejected")
			}
		}
		if n := f.inFlight.Load(); n != 0 {
			t.Fatalf("%d slots taken after the calls", n)
		}
	})

	t.Run("r4c-engine", func(t *testing.T) {
		_, h := newR4C(t)
		for range calls {
			p, err := h.Acquire()
			if err != nil {
				t.Fatal(err)
			}
			p.Success()
		}
		if h.InFlight() != 0 || h.Limit() != limit {
			t.Fatalf("in flight %d, limit %d; want 0, %d", h.InFlight(), h.Limit(), limit)
		}
	})

	t.Run("r4c-pipeline", func(t *testing.T) {
		p, h := newR4C(t)
		for range calls {
			if v, err := p.Execute(ctx, work); err != nil || v != "ok" {
				t.Fatalf("Execute = %q, %v", v, err)
			}
		}
		if h.InFlight() != 0 || h.Limit() != limit {
			t.Fatalf("in flight %d, limit %d; want 0, %d", h.InFlight(), h.Limit(), limit)
		}
	})

	t.Run("semaphore", func(t *testing.T) {
		s := newSemaphore()
		for range calls {
			if !s.TryAcquire(1) {
				t.Fatal("rejected")
			}
			s.Release(1)
		}
		if !s.TryAcquire(limit) { // every unit is free again
			t.Fatal("units leaked")
		}
		s.Release(limit)
	})

	t.Run("failsafe-permit", func(t *testing.T) {
		l := newFailsafe()
		for range calls {
			p, ok := l.TryAcquirePermit()
			if !ok {
				t.Fatal("rejected")
			}
			p.Record()
		}
		if l.Inflight() != 0 || l.Limit() != limit {
			t.Fatalf("in flight %d, limit %d; want 0, %d", l.Inflight(), l.Limit(), limit)
		}
	})

	t.Run("failsafe-executor", func(t *testing.T) {
		l := newFailsafe()
		exec := failsafe.With[string](l)
		for range calls {
			if v, err := exec.Get(workNoCtx); err != nil || v != "ok" {
				t.Fatalf("Get = %q, %v", v, err)
			}
		}
		if l.Inflight() != 0 || l.Limit() != limit {
			t.Fatalf("in flight %d, limit %d; want 0, %d", l.Inflight(), l.Limit(), limit)
		}
	})
}
