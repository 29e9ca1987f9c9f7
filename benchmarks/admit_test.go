package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/failsafe-go/failsafe-go"

	"github.com/resilience4cata/r4c/internal/benchfloor"
)

// TestContendersAdmit checks what BenchmarkAdmitted relies on: every contender, set up as the
// benchmark sets it up, admits and completes many calls, runs the function, leaves no slot
// taken and keeps its limit.
func TestContendersAdmit(t *testing.T) {
	const calls = 10_000 // enough for failsafe-go to recompute its limit (50 samples a window)
	ctx := context.Background()

	t.Run("floor", func(t *testing.T) {
		f := benchfloor.New()
		for range calls {
			if f.Call() < 0 {
				t.Fatal("rejected")
			}
		}
		if n := f.InFlight(); n != 0 {
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

// TestPolicyContenders checks what BenchmarkPolicies relies on: every contender, set up as the
// benchmark sets it up, runs fn exactly once per call and returns "ok", nil (so nothing was
// rejected, retried or hedged and no timeout fired), or, for a rejection, fails every call with
// its rejection without calling fn; sequentially and from several goroutines at once.
func TestPolicyContenders(t *testing.T) {
	const (
		goroutines = 4
		calls      = 250 // per goroutine, and sequentially
	)
	ctx := context.Background()
	for _, pc := range policyCases {
		t.Run(pc.name, func(t *testing.T) {
			c := pc.setup(t)
			if c.r4c != nil && c.fs != nil {
				t.Fatal("both an r4c pipeline and a failsafe-go executor")
			}
			var ran atomic.Int64
			fn := func(context.Context) (string, error) { ran.Add(1); return "ok", nil }
			fnNoCtx := func() (string, error) { ran.Add(1); return "ok", nil }
			call := func() (string, error) {
				switch {
				case c.r4c != nil:
					return c.r4c.Execute(ctx, fn)
				case c.fs != nil:
					return c.fs.Get(fnNoCtx)
				}
				return fn(ctx)
			}
			check := func(v string, err error) error {
				if c.reject == nil {
					if err != nil || v != "ok" {
						return fmt.Errorf("call = %q, %v; want \"ok\", nil", v, err)
					}
				} else if !errors.Is(err, c.reject) {
					return fmt.Errorf("call = %q, %v; want %v", v, err, c.reject)
				}
				return nil
			}
			for range calls {
				if err := check(call()); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			errs := make(chan error, goroutines)
			for range goroutines {
				wg.Go(func() {
					for range calls {
						if err := check(call()); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			want := int64(calls * (goroutines + 1))
			if c.reject != nil {
				want = 0
			}
			if n := ran.Load(); n != want {
				t.Fatalf("fn ran %d times, want %d", n, want)
			}
		})
	}
}
