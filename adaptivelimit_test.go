package r4c_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
)

// aimd is a configuration whose moves are easy to predict: one window per call that ends after
// at least a second, AIMD with a backoff of one half.
var aimd = r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, InitialLimit: 4, MaxLimit: 100, BackoffRatio: 0.5, MinWindowSamples: 1, Window: time.Second}

func TestSlotsAndImmediateRejection(t *testing.T) {
	reg, _ := newRegistry(t)
	p := newPipeline[string](t, reg, "search", r4c.AdaptiveLimitConfig{InitialLimit: 2})
	h := handle(t, reg, "search")
	a, b := acquire(t, h), acquire(t, h)
	if h.InFlight() != 2 {
		t.Fatalf("in flight %d", h.InFlight())
	}
	called := false
	_, err := p.Execute(context.Background(), func(context.Context) (string, error) { called = true; return "", nil })
	expectRejected(t, err, "search")
	if called {
		t.Fatal("a rejected call ran its function")
	}
	_, err2 := h.Acquire()
	expectRejected(t, err2, "search")
	if err != err2 {
		t.Fatal("each rejection should return the instance's one preallocated error")
	}
	if got := err.Error(); got != `r4c: adaptive limit "search" exceeded: every slot is taken` {
		t.Fatalf("message %q", got)
	}
	a.Success()
	b.Ignore()
	if h.InFlight() != 0 {
		t.Fatalf("in flight %d after both ended", h.InFlight())
	}
	mustExecute(t, p, func(context.Context) (string, error) { return "ok", nil })
	if s := h.Snapshot(); s.Rejected != 2 {
		t.Fatalf("rejected %d, want 2", s.Rejected)
	}
}

func TestRejectionReadsNoClockAndAllocatesNothing(t *testing.T) {
	clock := newCountingClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	p := newPipeline[string](t, reg, "x", r4c.AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1})
	h := handle(t, reg, "x")
	held := acquire(t, h)
	before := clock.reads.Load()
	ctx := context.Background()
	fn := func(context.Context) (string, error) { return "", nil }
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := p.Execute(ctx, fn); !errors.Is(err, r4c.ErrLimitExceeded) {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("a rejection allocates %v times", allocs)
	}
	if got := clock.reads.Load() - before; got != 0 {
		t.Fatalf("rejections read the clock %d times", got)
	}
	held.Success()
	if got := clock.reads.Load() - before; got != 1 {
		t.Fatalf("ending an admitted call read the clock %d times, want 1", got)
	}
}

func TestAdmittedCallAllocatesNothing(t *testing.T) {
	reg, _ := newRegistry(t)
	p := newPipeline[string](t, reg, "x", r4c.AdaptiveLimitConfig{})
	h := handle(t, reg, "x")
	ctx := context.Background()
	fn := func(context.Context) (string, error) { return "ok", nil }
	if a := testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, fn) }); a != 0 {
		t.Fatalf("Execute allocates %v times per call", a)
	}
	if a := testing.AllocsPerRun(1000, func() {
		pm, _ := h.Acquire()
		pm.Release(ctx, nil)
	}); a != 0 {
		t.Fatalf("a permit allocates %v times per call", a)
	}
}

func TestOutcomes(t *testing.T) {
	// AIMD from 10, halving on a drop; windows of at least 1s and 2 samples.
	cfg := r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, InitialLimit: 10, BackoffRatio: 0.5, MinWindowSamples: 2, DropOn: []error{errOverloaded}}
	for _, tc := range []struct {
		name    string
		run     func(p *r4c.Pipeline[string], ctx context.Context, cancel context.CancelFunc, advance func())
		samples int64
		dropped bool
	}{
		{"success is a sample", func(p *r4c.Pipeline[string], ctx context.Context, _ context.CancelFunc, advance func()) {
			_, _ = p.Execute(ctx, func(context.Context) (string, error) { advance(); return "ok", nil })
		}, 1, false},
		{"a DropOn failure is a drop", func(p *r4c.Pipeline[string], ctx context.Context, _ context.CancelFunc, advance func()) {
			_, _ = p.Execute(ctx, func(context.Context) (string, error) { advance(); return "", fmt.Errorf("wrapped: %w", errOverloaded) })
		}, 1, true},
		{"another failure only frees the slot", func(p *r4c.Pipeline[string], ctx context.Context, _ context.CancelFunc, advance func()) {
			_, _ = p.Execute(ctx, func(context.Context) (string, error) { advance(); return "", errNotFound })
		}, 0, false},
		{"a caller's cancellation only frees the slot", func(p *r4c.Pipeline[string], ctx context.Context, cancel context.CancelFunc, advance func()) {
			_, _ = p.Execute(ctx, func(ctx context.Context) (string, error) { advance(); cancel(); return "", ctx.Err() })
		}, 0, false},
		{"a drop after the caller cancelled is a cancellation", func(p *r4c.Pipeline[string], ctx context.Context, cancel context.CancelFunc, advance func()) {
			_, _ = p.Execute(ctx, func(ctx context.Context) (string, error) { advance(); cancel(); return "", errOverloaded })
		}, 0, false},
		{"a panic only frees the slot", func(p *r4c.Pipeline[string], ctx context.Context, _ context.CancelFunc, advance func()) {
			defer func() {
				if r := recover(); r != "boom" {
					panic(fmt.Sprintf("recovered %v, want the function's own panic", r))
				}
			}()
			_, _ = p.Execute(ctx, func(context.Context) (string, error) { advance(); panic("boom") })
		}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, clock := newRegistry(t)
			p := newPipeline[string](t, reg, "x", cfg)
			h := handle(t, reg, "x")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tc.run(p, ctx, cancel, func() { clock.Advance(1500 * time.Millisecond) })
			if h.InFlight() != 0 {
				t.Fatalf("slot not freed: in flight %d", h.InFlight())
			}
			// Two more samples: the window (over since t = 1s) ends with the second one, holding
			// ours, if it was a sample, and these two.
			mustExecute(t, p, taking(clock, 400*time.Millisecond, nil)) // t = 1.9s
			mustExecute(t, p, taking(clock, 400*time.Millisecond, nil)) // t = 2.3s
			s := h.Snapshot()
			if s.Windows != 1 || s.WindowSamples != tc.samples+2 {
				t.Fatalf("windows %d with %d samples, want 1 window with %d", s.Windows, s.WindowSamples, tc.samples+2)
			}
			wantLatency := 400 * time.Millisecond
			if tc.samples == 1 {
				wantLatency = 2300 * time.Millisecond / 3
			}
			if s.WindowLatency != wantLatency {
				t.Fatalf("window latency %v, want %v", s.WindowLatency, wantLatency)
			}
			wantLimit := 10 // one call in flight at most: AIMD does not grow
			if tc.dropped {
				wantLimit = 5
			}
			if s.Limit != wantLimit {
				t.Fatalf("limit %d, want %d (dropped: %v)", s.Limit, wantLimit, tc.dropped)
			}
		})
	}
}

func TestDropBacksOffAIMDAndSuccessGrowsIt(t *testing.T) {
	reg, clock := newRegistry(t)
	cfg := aimd
	cfg.DropOn = []error{errOverloaded}
	p := newPipeline[string](t, reg, "x", cfg)
	h := handle(t, reg, "x")
	mustExecute(t, p, taking(clock, time.Second, nil)) // 1 in flight of 4: 1*2 < 4, no growth
	if h.Limit() != 4 {
		t.Fatalf("limit %d after an app-limited window, want 4", h.Limit())
	}
	// Two in flight, both finishing after a second: the first ends the window at 2 in flight.
	a, b := acquire(t, h), acquire(t, h)
	clock.Advance(time.Second)
	a.Success()
	b.Success()
	if h.Limit() != 5 {
		t.Fatalf("limit %d after a window with max in flight 2 of 4, want 5", h.Limit())
	}
	_, err := p.Execute(context.Background(), taking(clock, time.Second, errOverloaded))
	if !errors.Is(err, errOverloaded) {
		t.Fatal(err)
	}
	if h.Limit() != 2 {
		t.Fatalf("limit %d after a drop, want int(5*0.5) = 2", h.Limit())
	}
	s := h.Snapshot()
	if s.Windows != 3 || s.LimitChanges != 2 {
		t.Fatalf("windows %d, changes %d", s.Windows, s.LimitChanges)
	}
}

func TestWindowNeedsDurationAndSamples(t *testing.T) {
	reg, clock := newRegistry(t)
	cfg := aimd
	cfg.MinWindowSamples = 3
	p := newPipeline[string](t, reg, "x", cfg)
	h := handle(t, reg, "x")

	// Two samples in the first second: the window is not over.
	mustExecute(t, p, taking(clock, 100*time.Millisecond, nil))
	mustExecute(t, p, taking(clock, 300*time.Millisecond, nil))
	clock.Advance(700 * time.Millisecond) // t = 1.1s: over, but no call has finished since
	if s := h.Snapshot(); s.Windows != 0 {
		t.Fatalf("%d windows before any call finished after the window", s.Windows)
	}
	// A third sample after the window is over: 3 samples, the window ends.
	mustExecute(t, p, taking(clock, 200*time.Millisecond, nil))
	s := h.Snapshot()
	if s.Windows != 1 || s.WindowSamples != 3 || s.WindowLatency != 200*time.Millisecond {
		t.Fatalf("windows %d, samples %d, latency %v; want 1, 3, 200ms", s.Windows, s.WindowSamples, s.WindowLatency)
	}

	// The next window starts at t = 1.3s and ends at 2.3s. One sample by 2.5s: too few, the
	// window is extended to 3.3s and keeps it.
	clock.Advance(time.Second)
	mustExecute(t, p, taking(clock, 200*time.Millisecond, nil)) // t = 2.5s
	if s := h.Snapshot(); s.Windows != 1 {
		t.Fatal("a window with too few samples ended")
	}
	mustExecute(t, p, taking(clock, 400*time.Millisecond, nil)) // t = 2.9s, 2 samples
	mustExecute(t, p, taking(clock, 300*time.Millisecond, nil)) // t = 3.2s, 3 samples, not over
	if s := h.Snapshot(); s.Windows != 1 {
		t.Fatal("the extended window ended before its new end")
	}
	mustExecute(t, p, taking(clock, 300*time.Millisecond, nil)) // t = 3.5s: over, 4 samples
	s = h.Snapshot()
	if s.Windows != 2 || s.WindowSamples != 4 || s.WindowLatency != 300*time.Millisecond {
		t.Fatalf("windows %d, samples %d, latency %v; want 2, 4, 300ms (the kept samples count)", s.Windows, s.WindowSamples, s.WindowLatency)
	}
}

func TestNoTrafficNoMove(t *testing.T) {
	reg, clock := newRegistry(t)
	newPipeline[string](t, reg, "x", aimd)
	h := handle(t, reg, "x")
	clock.Advance(time.Hour)
	if s := h.Snapshot(); s.Windows != 0 || s.Limit != 4 {
		t.Fatalf("limit moved without traffic: %+v", s)
	}
	if clock.Pending() != 0 {
		t.Fatalf("the adaptive limit scheduled %d timers", clock.Pending())
	}
}

func TestZeroLatencyIsRaisedToOneNanosecond(t *testing.T) {
	reg, clock := newRegistry(t)
	newPipeline[string](t, reg, "g2", r4c.AdaptiveLimitConfig{MinWindowSamples: 1, InitialLimit: 2})
	h := handle(t, reg, "g2")
	for i := 0; i < 20; i++ {
		clock.Advance(time.Second)
		a, b := acquire(t, h), acquire(t, h) // two calls of 0ns, at full use of the limit
		a.Success()                          // ends the window: average 0ns, raised to 1ns
		b.Success()
	}
	s := h.Snapshot()
	if s.Windows != 20 || s.WindowLatency != time.Nanosecond {
		t.Fatalf("windows %d, latency %v; want 20 windows of 1ns", s.Windows, s.WindowLatency)
	}
	if math.IsNaN(s.Estimate) || math.IsInf(s.Estimate, 0) || s.Limit <= 2 {
		t.Fatalf("Gradient2 over 1ns windows: estimate %v, limit %d; want finite and grown", s.Estimate, s.Limit)
	}
}

func TestLowerLimitInterruptsNothing(t *testing.T) {
	reg, clock := newRegistry(t)
	cfg := aimd
	cfg.DropOn = []error{errOverloaded}
	newPipeline[string](t, reg, "x", cfg)
	h := handle(t, reg, "x")
	permits := []r4c.AdaptiveLimitPermit{acquire(t, h), acquire(t, h), acquire(t, h), acquire(t, h)}
	clock.Advance(time.Second)
	permits[0].Drop() // limit 4 -> 2 with 3 still in flight
	if h.Limit() != 2 || h.InFlight() != 3 {
		t.Fatalf("limit %d, in flight %d", h.Limit(), h.InFlight())
	}
	if _, err := h.Acquire(); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatal("admitted a call above the lowered limit")
	}
	permits[1].Ignore()
	if _, err := h.Acquire(); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatal("admitted with 2 in flight and limit 2")
	}
	permits[2].Ignore()
	acquire(t, h).Ignore()
	permits[3].Ignore()
	if h.InFlight() != 0 {
		t.Fatalf("in flight %d", h.InFlight())
	}
}

func TestDisabledPassesEverythingAndMeasuresNothing(t *testing.T) {
	clock := newCountingClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock), r4c.WithInstance("x", r4c.AdaptiveLimitConfig{Enabled: r4c.Off}))
	if err != nil {
		t.Fatal(err)
	}
	p := newPipeline[string](t, reg, "x", r4c.AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1, MinWindowSamples: 1})
	h := handle(t, reg, "x")
	var held []r4c.AdaptiveLimitPermit
	for i := 0; i < 5; i++ {
		held = append(held, acquire(t, h))
	}
	mustExecute(t, p, func(context.Context) (string, error) { clock.Advance(time.Minute); return "", nil })
	for _, pm := range held {
		pm.Success()
	}
	if n := clock.reads.Load(); n != 0 {
		t.Fatalf("a disabled limit read the clock %d times", n)
	}
	if s := h.Snapshot(); s.Enabled || s.InFlight != 0 || s.Windows != 0 || s.Rejected != 0 {
		t.Fatalf("disabled snapshot %+v", s)
	}
}

// TestNoSampleLostOrInvented runs many goroutines through one window: the window must hold
// exactly the calls made, with exactly the latency they took.
func TestNoSampleLostOrInvented(t *testing.T) {
	const goroutines, perG = 8, 2000
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "x", r4c.AdaptiveLimitConfig{InitialLimit: 100, MaxLimit: 100, MinWindowSamples: goroutines * perG, Window: time.Millisecond})
	h := handle(t, reg, "x")
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perG; i++ {
				mustExecute(t, p, func(context.Context) (string, error) { return "", nil })
			}
		}()
	}
	wg.Wait()
	clock.Advance(time.Millisecond)
	pm := acquire(t, h)
	clock.Advance(time.Duration(goroutines*perG+1) * time.Microsecond)
	pm.Success()
	s := h.Snapshot()
	if s.Windows != 1 || s.WindowSamples != goroutines*perG+1 {
		t.Fatalf("windows %d with %d samples, want 1 with %d", s.Windows, s.WindowSamples, goroutines*perG+1)
	}
	if s.WindowLatency != time.Microsecond {
		t.Fatalf("average %v, want 1µs (one call of (n)µs among n 0ns calls)", s.WindowLatency)
	}
}

// TestLongLatenciesAndManySamplesStayExact drives the engine past the capacity of its packed
// window word, both in latency sum and in sample count, and past the latency above which
// samples are recorded under the lock: averages and counts must stay exact.
func TestLongLatenciesAndManySamplesStayExact(t *testing.T) {
	t.Run("latency sum", func(t *testing.T) {
		reg, clock := newRegistry(t)
		p := newPipeline[string](t, reg, "x", r4c.AdaptiveLimitConfig{MaxLimit: 200, MinWindowSamples: 300, Window: time.Millisecond})
		h := handle(t, reg, "x")
		for i := 0; i < 300; i++ { // 300 x 43s: 2^43ns of sum are crossed after ~205 samples
			mustExecute(t, p, taking(clock, 43*time.Second, nil))
		}
		if s := h.Snapshot(); s.Windows != 1 || s.WindowSamples != 300 || s.WindowLatency != 43*time.Second {
			t.Fatalf("%+v", s)
		}
		for i := 0; i < 300; i++ { // above 2^43/200 ns each: recorded under the lock
			mustExecute(t, p, taking(clock, 50*time.Second, nil))
		}
		if s := h.Snapshot(); s.Windows != 2 || s.WindowSamples != 300 || s.WindowLatency != 50*time.Second {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("sample count", func(t *testing.T) {
		const n = 1<<20 + 10 // more than the packed count field holds
		reg, clock := newRegistry(t)
		newPipeline[string](t, reg, "x", r4c.AdaptiveLimitConfig{MinWindowSamples: n, Window: time.Millisecond})
		h := handle(t, reg, "x")
		for i := 0; i < n-1; i++ {
			acquire(t, h).Success()
		}
		pm := acquire(t, h)
		clock.Advance(time.Duration(n) * time.Millisecond)
		pm.Success()
		if s := h.Snapshot(); s.Windows != 1 || s.WindowSamples != n || s.WindowLatency != time.Millisecond {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("huge max limit", func(t *testing.T) {
		reg, clock := newRegistry(t)
		p := newPipeline[string](t, reg, "x", r4c.AdaptiveLimitConfig{MaxLimit: math.MaxInt32, MinWindowSamples: 3})
		h := handle(t, reg, "x")
		for _, d := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
			mustExecute(t, p, taking(clock, d, nil))
		}
		if s := h.Snapshot(); s.Windows != 1 || s.WindowSamples != 3 || s.WindowLatency != 2*time.Second {
			t.Fatalf("%+v", s)
		}
	})
}

// TestHammer runs many goroutines against a small limit that moves, under -race: the number of
// functions running at once never exceeds the limit in force when they were admitted (at most
// MaxLimit), and no slot leaks.
func TestHammer(t *testing.T) {
	const goroutines, calls = 32, 3000
	reg, clock := newRegistry(t)
	cfg := r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, InitialLimit: 5, MaxLimit: 8, MinWindowSamples: 5, Window: time.Millisecond, DropOn: []error{errOverloaded}}
	p := newPipeline[string](t, reg, "hammer", cfg)
	h := handle(t, reg, "hammer")
	var running, peak, admitted, rejected atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				_, err := p.Execute(context.Background(), func(context.Context) (string, error) {
					n := running.Add(1)
					defer running.Add(-1)
					for {
						m := peak.Load()
						if n <= m || peak.CompareAndSwap(m, n) {
							break
						}
					}
					if lim := int64(h.Limit()); n > 8 {
						t.Errorf("%d calls running, limit %d, max 8", n, lim)
					}
					clock.Advance(time.Duration(n) * 50 * time.Microsecond)
					if i%101 == 0 {
						return "", errOverloaded
					}
					return "ok", nil
				})
				if errors.Is(err, r4c.ErrLimitExceeded) {
					rejected.Add(1)
				} else {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	s := h.Snapshot()
	if s.InFlight != 0 {
		t.Fatalf("%d slots leaked", s.InFlight)
	}
	if admitted.Load()+rejected.Load() != goroutines*calls || s.Rejected != rejected.Load() {
		t.Fatalf("admitted %d + rejected %d; snapshot rejected %d", admitted.Load(), rejected.Load(), s.Rejected)
	}
	if s.Windows == 0 || s.LimitChanges == 0 {
		t.Fatalf("the limit never moved: %+v", s)
	}
	t.Logf("peak %d, admitted %d, rejected %d, %+v", peak.Load(), admitted.Load(), rejected.Load(), s)
}

// TestHammerFixedLimit pins the limit (min = initial = max) so that "never more than the limit
// at once" is exact, and checks that the limit is reached and no slot leaks.
func TestHammerFixedLimit(t *testing.T) {
	const goroutines, calls, limit = 16, 5000, 3
	reg, _ := newRegistry(t)
	p := newPipeline[int](t, reg, "fixed", r4c.AdaptiveLimitConfig{InitialLimit: limit, MinLimit: limit, MaxLimit: limit, MinWindowSamples: 1, Window: time.Millisecond})
	h := handle(t, reg, "fixed")
	var running, peak atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				_, _ = p.Execute(context.Background(), func(context.Context) (int, error) {
					n := running.Add(1)
					if n > limit {
						t.Errorf("%d calls running with a limit of %d", n, limit)
					}
					for m := peak.Load(); n > m && !peak.CompareAndSwap(m, n); m = peak.Load() {
					}
					for j := 0; j < 3; j++ { // hold the slot while others try to take one
						runtime.Gosched()
					}
					running.Add(-1)
					return i, nil
				})
			}
		}()
	}
	wg.Wait()
	if h.InFlight() != 0 {
		t.Fatalf("%d slots leaked", h.InFlight())
	}
	if peak.Load() != limit {
		t.Fatalf("peak %d: the test never filled the limit of %d", peak.Load(), limit)
	}
}
