package r4c

import (
	"math"
	"math/big"
	"testing"
	"time"
)

// newTestGradient2 returns Gradient2 with cfg over the built-in defaults.
func newTestGradient2(t *testing.T, cfg AdaptiveLimitConfig) *gradient2Limit {
	t.Helper()
	cfg.Algorithm = Gradient2
	alg, err := NewAdaptiveAlgorithm(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return alg.(*gradient2Limit)
}

// floorStep is the drop guard's step computed by hand, with math/big: every operation is
// rounded to float64 on its own, as Java does (no fused multiply-add), in Java's order.
func floorStep(est, smoothing, queue, lo, hi float64) float64 {
	f := func(x float64) *big.Float { return new(big.Float).SetPrec(53).SetMode(big.ToNearestEven).SetFloat64(x) }
	r := func(x *big.Float) float64 { v, _ := x.Float64(); return v }
	mul := func(a, b float64) float64 { return r(new(big.Float).SetPrec(53).Mul(f(a), f(b))) }
	add := func(a, b float64) float64 { return r(new(big.Float).SetPrec(53).Add(f(a), f(b))) }
	sub := func(a, b float64) float64 { return r(new(big.Float).SetPrec(53).Sub(f(a), f(b))) }
	n := add(mul(est, 0.5), queue)                          // est*gradient + queue
	n = add(mul(est, sub(1, smoothing)), mul(n, smoothing)) // est*(1-s) + n*s
	return max(lo, min(hi, n))
}

// The guard's step is Gradient2's own with the gradient at its floor: checked against a hand
// computation, from a first value worked out on paper.
func TestGradient2OverloadedStepByHand(t *testing.T) {
	g := newTestGradient2(t, AdaptiveLimitConfig{}) // initial 20, smoothing 0.2, queue 4
	// 20*0.5 + 4 = 14; 20*0.8 + 14*0.2 = 16 + 2.8000000000000003 = 18.8 (rounded).
	if got := Gradient2Overloaded(g, WindowSummary{AvgLatency: time.Second, MaxInFlight: 20}); got != 18 || g.Estimate() != 18.8 {
		t.Fatalf("first step: limit %d, estimate %v; want 18, 18.8", got, g.Estimate())
	}
	if g.LongLatency() != 0 || g.longCount != 0 {
		t.Fatalf("the step touched the long-term average: %v (%d windows)", g.LongLatency(), g.longCount)
	}
	// Then step after step towards the floor of 2 x QueueSize (0.9 x est + 0.8 -> 8), by hand.
	for i := 0; i < 200; i++ {
		want := floorStep(g.est, 0.2, 4, 1, 200)
		Gradient2Overloaded(g, WindowSummary{MaxInFlight: 200})
		if math.Float64bits(g.est) != math.Float64bits(want) {
			t.Fatalf("step %d: estimate %v, want %v", i+2, g.est, want)
		}
	}
	if g.Limit() != 8 && g.Limit() != 7 {
		t.Fatalf("limit %d after 200 overloaded windows, want about 2 x QueueSize", g.Limit())
	}

	// Other settings: the clamps and the smoothing come from the configuration.
	g = newTestGradient2(t, AdaptiveLimitConfig{InitialLimit: 150, MinLimit: 30, MaxLimit: 150, Smoothing: 0.7, QueueSize: 9})
	for i := 0; i < 50; i++ {
		want := floorStep(g.est, 0.7, 9, 30, 150)
		Gradient2Overloaded(g, WindowSummary{MaxInFlight: 150})
		if math.Float64bits(g.est) != math.Float64bits(want) {
			t.Fatalf("step %d: estimate %v, want %v", i+1, g.est, want)
		}
	}
	if g.Limit() != 30 {
		t.Fatalf("limit %d, want MinLimit 30", g.Limit())
	}
}

// The guard's step is what Update computes when the gradient clamps at its floor, bit for bit,
// from any state (also under GOAMD64=v3, where the compiler may fuse multiply-adds); only the
// long-term average differs: Update adds the window, the guard leaves it alone.
func TestGradient2OverloadedMatchesUpdateAtTheFloor(t *testing.T) {
	for _, cfg := range []AdaptiveLimitConfig{{}, {Smoothing: 0.3, QueueSize: 7, RTTTolerance: 2, LongWindow: 50}, {QueueSize: NoQueue, Smoothing: 1}} {
		a, b := newTestGradient2(t, cfg), newTestGradient2(t, cfg)
		x := uint64(42)
		for w := 1; w <= 600; w++ {
			x = x*6364136223846793005 + 1442695040888963407
			rtt := time.Duration(10_000_000 + int64(x>>11)%6_000_001 - 3_000_000)
			in := max(1, a.Limit()-int(x>>60)) // 0 to 15 slots idle: app-limited at times
			if w%5 != 0 {
				// An ordinary window, fed to both.
				s := WindowSummary{AvgLatency: rtt, MaxInFlight: in}
				if a.Update(s) != b.Update(s) {
					t.Fatal("diverged")
				}
				continue
			}
			// A window far slower than the long-term average: Update's gradient clamps at 0.5.
			longBefore := b.LongLatency()
			slow := time.Duration(100 * a.LongLatency())
			la := a.Update(WindowSummary{AvgLatency: slow, MaxInFlight: in, Dropped: true})
			if (a.tolerance*a.LongLatency())/float64(slow) >= gradientFloor {
				t.Fatalf("window %d: Update's gradient did not clamp", w)
			}
			lb := Gradient2Overloaded(b, WindowSummary{AvgLatency: slow, MaxInFlight: in, Dropped: true})
			if la != lb || math.Float64bits(a.est) != math.Float64bits(b.est) {
				t.Fatalf("window %d: Update %d (%v), guard %d (%v)", w, la, a.est, lb, b.est)
			}
			if b.LongLatency() != longBefore {
				t.Fatalf("window %d: the guard moved the long-term latency", w)
			}
			// Line the long-term averages up again for the next comparison.
			b.long, b.longSum, b.longCount = a.long, a.longSum, a.longCount
		}
	}
}

// App-limited windows (fewer than half of the slots in use) change nothing, as in Update.
func TestGradient2OverloadedAppLimited(t *testing.T) {
	g := newTestGradient2(t, AdaptiveLimitConfig{})
	if got := Gradient2Overloaded(g, WindowSummary{AvgLatency: time.Second, MaxInFlight: 9, Dropped: true}); got != 20 || g.Estimate() != 20 {
		t.Fatalf("app-limited window moved the limit to %d (%v)", got, g.Estimate())
	}
	if got := Gradient2Overloaded(g, WindowSummary{AvgLatency: time.Second, MaxInFlight: 10, Dropped: true}); got != 18 {
		t.Fatalf("half of the slots in use: limit %d, want 18", got)
	}
}

func TestDropGuardThreshold(t *testing.T) {
	for _, tc := range []struct {
		samples, drops int64
		want           bool
	}{
		{1, 0, false}, {1, 1, true}, {2, 1, true}, {9, 1, true},
		{10, 1, false}, {10, 2, true}, // the default minimum window: one drop is not enough
		{20, 2, false}, {20, 3, true},
		{500, 1, false}, {500, 50, false}, {500, 51, true}, {500, 500, true},
		{1 << 40, 1<<40/10 + 1, true},
	} {
		if got := dropGuarded(tc.samples, tc.drops); got != tc.want {
			t.Errorf("%d drops of %d samples: guarded %v, want %v", tc.drops, tc.samples, got, tc.want)
		}
	}
}
