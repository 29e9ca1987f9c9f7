package r4c

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// trendRun feeds a Knee's base a drain's measurement every ten windows of a no-load latency
// that grows by growth (log) a window from 50ms, while the estimate moves by estStep a window,
// and returns the largest error (log) of the base it expects, over the windows from the fortieth.
func trendRun(growth, estStep float64) float64 {
	k := &kneeLimit{est: 40, min: 1, max: 200, noise: 0.1, noiseN: 8, step: 1}
	worst := 0.0
	for w := range 120 {
		k.age()
		lat := 50e6 * math.Exp(growth*float64(w))
		if w%10 == 0 {
			k.observe(lat, 0, 500, true)
		}
		if w >= 40 {
			worst = max(worst, math.Abs(math.Log(k.expected()/lat)))
		}
		k.est += estStep
	}
	return worst
}

// Calls that get heavier at a steady pace: the drains' measurements teach base the trend, and
// between drains base follows it (within 2%; a base that lags by the tolerance cuts the limit
// below the knee).
func TestKneeBaseFollowsASteadyTrend(t *testing.T) {
	for _, growth := range []float64{0.005, 0.01, 0.015, -0.01} {
		if worst := trendRun(growth, 0); worst > 0.02 {
			t.Errorf("latency moving by %+.1f%% a window: base off by up to %.1f%%, want 2%% at most", 100*growth, 100*worst)
		}
	}
	if worst := trendRun(0, 0); worst > 0.005 {
		t.Errorf("steady latency: base off by up to %.2f%%", 100*worst)
	}
}

// Latency that rises while the limit grows may be a queue the drains still see (replicas of a
// service, each draining a limit that others' queues fill): it does not teach base a rising
// trend, which would let the limits grow further.
func TestKneeTrendIgnoresRisingLatencyWhileTheLimitGrows(t *testing.T) {
	if worst := trendRun(0.01, 0.5); worst < 0.05 {
		t.Errorf("latency rising by 1%% a window while the limit grows: base followed it (off by %.1f%% at most)", 100*worst)
	}
}

// A base moved along its trend since it was measured must be checked by a drain, even while
// latency looks like base: a base too high makes any latency look like base (once the calls
// stop getting heavier, base goes on rising and a queue grows under it).
func TestKneeDrainsWhileBaseIsExtrapolated(t *testing.T) {
	drains := func(trend float64) bool {
		k := &kneeLimit{est: 40, min: 1, max: 200, window: time.Second, noise: 0.1, noiseN: 8, step: 1,
			base: 50e6, trend: trend, since: 9, confirmed: true, started: true, calm: 1, clear: 1}
		k.prev = kneeWindow{lat: 50e6, n: 800, binding: true, limit: 40}
		// A window that ends half a second before the drain grid's line (every 10s): the
		// next one is cut short to end on the line, and the drain starts there.
		k.plan(WindowSummary{Duration: time.Second, End: time.Unix(1000*10+9, 5e8)})
		if k.drainOf > 0 || k.alignAt == 0 {
			return k.drainOf > 0
		}
		k.plan(WindowSummary{Duration: k.next, End: time.Unix(1000*10+10, 1e6)})
		return k.drainOf > 0
	}
	if drains(0) {
		t.Error("drained with latency at a base that has no trend: nothing to learn")
	}
	if !drains(0.01) {
		t.Error("no drain with base moved by 9% along its trend since its last measurement")
	}
}

// A drain whose latency fell with the limit bounds base from above: when that latency lies
// between base as last measured and base moved along its trend since, the trend went past the
// no-load latency (calls stopped getting heavier), and base is brought down to that bound, its
// trend kept. The bound is the drained latency itself while base is unconfirmed, and that
// latency plus three standard deviations of its window's mean once base is confirmed.
func TestKneeElasticDrainBoundsTheExtrapolatedBase(t *testing.T) {
	for _, confirmed := range []bool{false, true} {
		k := &kneeLimit{est: 34, min: 1, max: 200, window: time.Second, noise: 0.1, noiseN: 8, step: 1,
			base: 50e6, varb: kneePrior * kneePrior, trend: 0.01, since: 9, confirmed: confirmed, started: true, calm: 1.1,
			drainOf: 40, depth: kneeDrainDepth} // the recent windows about as high as the last (see drained)
		before := k.expected() // about 54.7ms
		prev := kneeWindow{lat: 60e6, n: 700, binding: true, limit: 40}
		lat := 52e6 // fell by 13.3% for a drain of 15%: elasticity 0.88, a queue
		cur := kneeWindow{lat: lat, n: 650, binding: true, drain: true, limit: 34}
		k.drained(prev, cur, WindowSummary{Samples: 650, Rejected: 200, Duration: time.Second, End: time.Unix(10010, 0)}, 0.1)
		want := lat
		if confirmed {
			want *= math.Exp(3 * math.Sqrt(0.1*0.1/650+kneeFloor*kneeFloor)) // about 53ms
		}
		if got := k.expected(); math.Abs(got-want) > 1 || before <= want {
			t.Errorf("confirmed %v: expected base %.0f after a drain read %.0f (it was %.0f), want %.0f", confirmed, got, lat, before, want)
		}
		if k.trend != 0.01 {
			t.Errorf("confirmed %v: trend %v after the drain, want 0.01 kept", confirmed, k.trend)
		}
	}
}

// A confirmed base is not pulled down by a drain whose latency, though it fell with the limit,
// reads below base by less than the noise of its window's mean: with 200 samples of noisy calls
// (a spread of 0.5 per call, 3.5% for the mean) a drain that reads 3% low would otherwise set base
// below the no-load latency, and make it suspect. Nor is an unconfirmed base known four times
// more precisely than that mean (measured over many windows of light load), nor one that
// kneeLightBase windows of light load measured, however long ago (its uncertainty has grown with
// age), unless the drain reads below it beyond that noise. An unconfirmed base as uncertain as a
// first measurement, and not measured by enough windows of light load, takes the drained latency.
func TestKneeConfirmedBaseIgnoresADrainThatReadsLowWithinTheNoise(t *testing.T) {
	for _, tc := range []struct {
		what      string
		confirmed bool
		varb      float64
		light     int
		lat       float64
		moves     bool
	}{
		{"confirmed", true, kneePrior * kneePrior, 0, 48.5e6, false},
		{"unconfirmed, precise", false, 0.0002, 0, 48.5e6, false},
		{"unconfirmed, as a first measurement", false, kneePrior * kneePrior, 0, 48.5e6, true},
		{"unconfirmed, measured by light load", false, kneePrior * kneePrior, kneeLightBase, 48.5e6, false},
		{"unconfirmed, measured by too little light load", false, kneePrior * kneePrior, kneeLightBase - 1, 48.5e6, true},
		// 16% low: beyond three standard deviations of the drained window's mean (10.7%).
		{"unconfirmed, measured by light load, the drain far below", false, kneePrior * kneePrior, kneeLightBase, 42e6, true},
	} {
		k := &kneeLimit{est: 17, min: 1, max: 200, window: time.Second, noise: 0.5, noiseN: 8, step: 1,
			base: 50e6, varb: tc.varb, confirmed: tc.confirmed, started: true, calm: 1.16, drainOf: 20, depth: kneeDrainDepth,
			lightBase: tc.light} // the recent windows about as high as the last (see drained)
		prev := kneeWindow{lat: 58e6, n: 340, binding: true, limit: 20}
		lat := tc.lat // fell by 16.4% (or 28%) for a drain of 15%: a queue, by this pair of windows
		cur := kneeWindow{lat: lat, n: 200, binding: true, drain: true, limit: 17}
		k.drained(prev, cur, WindowSummary{Samples: 200, Rejected: 200, Duration: time.Second, End: time.Unix(10010, 0)}, 0.1)
		want := 50e6
		if tc.moves {
			want = lat
		}
		if got := k.expected(); math.Abs(got-want) > 1 {
			t.Errorf("%s: base %.0f after a drain read %.0f, want %.0f", tc.what, got, lat, want)
		}
	}
}

// The windows of light load that measure base count towards kneeLightBase, and a base set anew
// (a rebase, or two surprises the same way) starts the count again.
func TestKneeCountsTheLightLoadThatMeasuredBase(t *testing.T) {
	k := &kneeLimit{est: 40, min: 1, max: 200, window: time.Second, noise: 0.1, noiseN: 8, step: 1, moved: 1,
		base: 100e6, varb: kneePrior * kneePrior, calm: 1}
	end := time.Unix(10, 0) // the windows end before the grid's next boundary, where a drain (or a watch) would begin
	for range kneeLightBase {
		end = end.Add(time.Second)
		// A limit that does not bind, far above the calls in flight, latency at base.
		k.Update(WindowSummary{AvgLatency: 100 * time.Millisecond, MaxInFlight: 10, Samples: 100, Duration: time.Second, End: end})
	}
	if k.lightBase != kneeLightBase {
		t.Fatalf("%d windows of light load at base: %d counted, want %d", kneeLightBase, k.lightBase, kneeLightBase)
	}
	k.rebase(90e6, 0.01)
	if k.lightBase != 0 {
		t.Errorf("after a rebase: %d windows of light load counted, want 0", k.lightBase)
	}
}

// The tolerance: 10%, or three standard deviations of the window's mean, at most 25%; or one
// call of queue over the limit, whatever the cap: a share squeezed to two calls tolerates one.
func TestKneeToleranceHoldsOneCallWhateverTheCap(t *testing.T) {
	for _, tc := range []struct {
		est, noise, n, want float64
	}{
		{40, 0.1, 800, kneeTolerance},   // little noise, many calls
		{40, 1, 100, kneeMaxTolerance},  // noisy: 3 x 0.1, capped
		{9, 0.1, 800, 1.0 / 9},          // one call of nine
		{4, 0.1, 800, kneeMaxTolerance}, // one call of four: the cap itself
		{2, 0.1, 800, 0.5},              // one call of two, above the cap
		{2, 1, 100, 0.5},                // the same under noise
		{3, 1, 100, 1.0 / 3},            // noise capped, one call of three more
		{20, 0.8, 300, 3 * math.Sqrt(0.64/300+kneeFloor*kneeFloor)}, // noise, within the cap
	} {
		k := &kneeLimit{est: tc.est, noise: tc.noise, noiseN: 8, wander: tc.noise, wanderN: 8}
		if got := k.tolerance(kneeWindow{n: tc.n, binding: true}); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("limit %v, spread %v, %v calls: tolerance %.4f, want %.4f", tc.est, tc.noise, tc.n, got, tc.want)
		}
	}
}

// A drain window starts at the grid's boundary, for every replica alike: a window that would
// cross the boundary is cut short to end at it, and the drain is decided there. Within a
// quarter of a window of the boundary, or where the next window ends on it, the next window
// drains at once.
func TestKneeDrainStartsAtTheGridsBoundary(t *testing.T) {
	grid := time.Unix(1000*10+10, 0) // a boundary of the drain grid (every 10s)
	for _, tc := range []struct {
		before  time.Duration // how long before the boundary the window ends
		cut     time.Duration // the length of the next window, cut short (0: not cut)
		drainAt time.Duration // when the drain starts, from the boundary
	}{
		{500 * time.Millisecond, 500 * time.Millisecond, time.Millisecond},
		{900 * time.Millisecond, 900 * time.Millisecond, time.Millisecond},
		{200 * time.Millisecond, 0, -200 * time.Millisecond},
		{time.Second, 0, -time.Second},
	} {
		// Latency in the upper half of the tolerance, under a limit that binds: a drain is due.
		k := &kneeLimit{est: 40, min: 1, max: 200, window: time.Second, noise: 0.1, noiseN: 8, step: 1,
			base: 50e6, since: 9, started: true, calm: 1.08}
		k.prev = kneeWindow{lat: 54e6, n: 800, binding: true, limit: 40}
		end := grid.Add(-tc.before)
		k.plan(WindowSummary{Duration: time.Second, End: end})
		if k.next != tc.cut {
			t.Errorf("window ending %v before the boundary: next window %v, want %v", tc.before, k.next, tc.cut)
		}
		if k.next > 0 {
			if k.drainOf > 0 {
				t.Errorf("window ending %v before the boundary: drained before it", tc.before)
			}
			end = end.Add(k.next + time.Millisecond) // the window ends on the call that completes just after the boundary
			k.next = 0
			k.plan(WindowSummary{Duration: tc.cut, End: end})
			if k.next != 0 {
				t.Errorf("window ending %v before the boundary: cut short again (%v)", tc.before, k.next)
			}
		}
		if k.drainOf == 0 || end.Sub(grid) != tc.drainAt {
			t.Errorf("window ending %v before the boundary: drain from %v, want from %v (drained: %v)", tc.before, end.Sub(grid), tc.drainAt, k.drainOf > 0)
		}
	}
}

// A drain costs goodput while it lasts: a drain window under a limit that binds lasts only as long
// as it needs, fifteen latencies or the samples that read base within the tolerance for
// exponential calls (about 400), whichever is longer, and never longer than the configured
// window. Once base is confirmed, calls of little spread need fewer samples, those that read the
// drain's elasticity to within a quarter; before, the drain is cut short only to half a window
// or less. A small share (a limit below 10) drains for a whole window.
func TestKneeDrainWindowIsOnlyAsLongAsItNeeds(t *testing.T) {
	grid := time.Unix(1000*10+10, 0) // a boundary of the drain grid (every 10s)
	for _, tc := range []struct {
		what      string
		est       float64
		noise     float64
		lat       float64 // the window's latency (ns)
		confirmed bool
		want      time.Duration // the drain window's length; 0: the configured window
	}{
		{"calls of ±10%, 54ms", 40, 0.06, 54e6, true, 810 * time.Millisecond},
		{"calls of ±10%, 20ms", 40, 0.06, 20e6, true, 300 * time.Millisecond},
		{"calls of ±10%, 80ms (fifteen latencies are more than the window)", 40, 0.06, 80e6, true, 0},
		{"exponential calls: fifteen latencies", 40, 1, 54e6, true, 810 * time.Millisecond},
		{"exponential calls, a limit of 20: the samples for half the tolerance", 20, 1, 20e6, true, 475341651},
		{"exponential calls, 80ms (fifteen latencies are more than the window)", 40, 1, 80e6, true, 0},
		{"base not confirmed: the samples for exponential calls, whatever the spread learned", 20, 0.06, 10e6, false, 237670825},
		{"base not confirmed, 4ms calls: fifteen latencies", 40, 0.06, 4e6, false, 60 * time.Millisecond},
		{"base not confirmed, more than half a window", 40, 0.06, 54e6, false, 0},
		{"a small share", 9, 0.06, 54e6, true, 0},
		{"a limit of 10", 10, 0.06, 54e6, true, 810 * time.Millisecond},
	} {
		// Latency in the upper half of the tolerance, under a limit that binds: a drain is due,
		// at the end of a window that ends one window before the boundary (the next ends on it).
		k := &kneeLimit{est: tc.est, min: 1, max: 200, window: time.Second, noise: tc.noise, noiseN: 8, step: 1,
			base: tc.lat / 1.08, since: 9, started: true, calm: 1.08, confirmed: tc.confirmed}
		rate := tc.est / tc.lat * 1e9
		k.prev = kneeWindow{lat: tc.lat, n: rate, rate: rate, binding: true, limit: tc.est}
		k.plan(WindowSummary{Duration: time.Second, End: grid.Add(-time.Second)})
		if k.drainOf == 0 {
			t.Fatalf("%s: no drain", tc.what)
		}
		if got := k.nextWindow(); got != tc.want {
			t.Errorf("%s: drain window %v, want %v", tc.what, got, tc.want)
		}
	}
}

// The window cut short before a drain decides nothing where latency lags it: its latency is
// mostly that of calls admitted before it, and the drain's window reads any change made now.
// A window that does not lag, or one that was not cut short, decides as any other.
func TestKneeLaggingWindowBeforeADrainDecidesNothing(t *testing.T) {
	grid := time.Unix(1000*10+10, 0)
	for _, tc := range []struct {
		aligned bool
		length  time.Duration // the window's length: ten latencies of 75ms are 750ms
		cut     bool
	}{{true, 500 * time.Millisecond, false}, {true, 800 * time.Millisecond, true}, {false, 500 * time.Millisecond, true}} {
		k := &kneeLimit{est: 40, min: 1, max: 200, window: time.Second, noise: 0.1, noiseN: 8, step: 1, moved: 1,
			base: 50e6, since: 1, started: true, confirmed: true, calm: 1}
		k.prev = kneeWindow{lat: 50e6, n: 800, binding: true, limit: 40}
		if tc.aligned {
			k.alignAt = grid.UnixNano()
		}
		n := int(40 / 0.075 * tc.length.Seconds())
		k.Update(WindowSummary{AvgLatency: 75 * time.Millisecond, Samples: n, Rejected: n, MaxInFlight: 40, Duration: tc.length, End: grid.Add(time.Millisecond)})
		if cut := k.est < 40; cut != tc.cut {
			t.Errorf("cut short %v, %v long, latency 1.5 times base: estimate %v, want a cut: %v", tc.aligned, tc.length, k.est, tc.cut)
		}
	}
}

// A window ends early only after a growth, with enough samples, and drops far above the share
// seen without load.
func TestKneeEndsEarlyOnlyOnDropsAfterAGrowth(t *testing.T) {
	for _, c := range []struct {
		name           string
		step, baseDrop float64
		samples, drops int
		want           bool
	}{
		{"after a growth, most calls dropped", 2, 0, 30, 25, true},
		{"after a growth, many calls dropped", 1.25, 0.05, 200, 120, true},
		{"no growth", 1, 0, 30, 25, false},
		{"after a cut", 0.8, 0, 30, 25, false},
		{"too few samples", 2, 0, kneeEarly - 1, kneeEarly - 1, false},
		{"drops about base's share", 2, 0.3, 100, 40, false},
		{"a quarter dropped", 2, 0, 100, 25, false},
		{"after a growth, twice the limit dropped after 2000 calls served", 2, 0, 2040, 40, true},
		{"after a growth, fewer than twice the limit dropped", 2, 0, 2039, 39, false},
		{"after a growth, twice the limit dropped, within the noise of base's share", 2, 0.05, 2040, 142, false},
		{"after a growth, twice the limit over base's share, beyond its noise", 2, 0.05, 2040, 190, true},
	} {
		k := &kneeLimit{est: 20, step: c.step, baseDrop: c.baseDrop}
		if got := k.watchesDrops() && k.endsEarly(c.samples, c.drops); got != c.want {
			t.Errorf("%s: watchesDrops() && endsEarly(%d, %d) = %v, want %v", c.name, c.samples, c.drops, got, c.want)
		}
	}
}

// A drain is read against the whole calls it ran at once base is confirmed: from an estimate of
// 11.2 a drain of 15% runs at 9 after 11, 18%. Latency that fell by 8% (a knee of 10, one call
// of queue) then reads as a drain across the knee, which restores the limit; read against 15%
// it was a queue, and the limit stayed below the knee. So for a small share: from 9.05, at 7
// after 9 (22%) across a knee of 8, latency falls by its one call of queue, 11%, which read
// against 15% was a queue too. Not while base is unconfirmed.
func TestKneeDrainIsReadAgainstTheLimitsItRanAt(t *testing.T) {
	for _, tc := range []struct {
		what      string
		est       float64
		confirmed bool
		before    float64 // the latency before the drain; 50ms after it
		depth     float64
		restored  bool
	}{
		{"confirmed", 11.2, true, 54.5e6, 2.0 / 11, true},
		{"unconfirmed", 11.2, false, 54.5e6, kneeDrainDepth, false},
		{"a small share", 9.05, true, 50e6 * 9 / 8, 2.0 / 9, true},
	} {
		end := time.Unix(1000*10+9, 0) // a second before the grid's boundary: the next window drains
		k := &kneeLimit{est: tc.est, min: 1, max: 200, window: time.Second, noise: 0.1, noiseN: 8, step: 1, moved: 1,
			base: 50e6, since: 9, confirmed: tc.confirmed, started: true, calm: 1.09}
		k.prev = kneeWindow{lat: tc.before, n: 220, binding: true, limit: tc.est}
		k.plan(WindowSummary{Duration: time.Second, End: end})
		if k.drainOf != tc.est || math.Abs(k.depth-tc.depth) > 1e-12 {
			t.Errorf("%s: drain from %v of depth %.4f, want from %v of depth %.4f", tc.what, k.drainOf, k.depth, tc.est, tc.depth)
			continue
		}
		cur := kneeWindow{lat: 50e6, n: 200, binding: true, drain: true, limit: k.est}
		// The drained window binds with few rejections (one call in twenty) under a light load
		// (5.3 calls of base latency), for which the tolerance of losses asks less than 10% (see
		// lossTolerance): it does not widen the target the drain aims at.
		k.drained(k.prev, cur, WindowSummary{Samples: 200, Rejected: 11, Duration: 2 * time.Second, End: end.Add(2 * time.Second)}, 0.1)
		if restored := k.est == tc.est; restored != tc.restored {
			t.Errorf("%s: estimate %.2f after the drain, want it restored to %v: %v", tc.what, k.est, tc.est, tc.restored)
		}
	}
}

// A drain that crossed the knee and found base where it was expected spaces the next drains out
// (to every second boundary of the grid, then every fourth), for a limit below 10 as for any
// other: a lone small limit that drains on every boundary spends about a point of goodput on
// it. A drain whose latency fell with it, or found base elsewhere, keeps every boundary.
func TestKneeSmallLimitDrainsSpaceOutWhenTheyAgree(t *testing.T) {
	for _, tc := range []struct {
		what        string
		before, lat float64 // the latency of the window before the drain, and of the drain
		spacing     int64
	}{
		{"agrees: latency fell by a third of the drain, to base", 52.5e6, 50e6, 2},
		{"a queue: latency fell with the drain", 57.5e6, 50e6, 1},
		{"base elsewhere: latency 8% above it", 56e6, 54e6, 1},
	} {
		k := &kneeLimit{est: 9.2 * (1 - kneeDrainDepth), min: 1, max: 200, window: time.Second, noise: 0.1, noiseN: 8, step: 1,
			base: 50e6, varb: 0.0001, confirmed: true, started: true, calm: 1, drainOf: 9.2, depth: kneeDrainDepth, spacing: 1}
		prev := kneeWindow{lat: tc.before, n: 180, binding: true, limit: 9.2}
		cur := kneeWindow{lat: tc.lat, n: 160, binding: true, drain: true, limit: k.est}
		k.drained(prev, cur, WindowSummary{Samples: 160, Rejected: 160, Duration: time.Second, End: time.Unix(10011, 0)}, kneeSlack/9.2)
		if k.spacing != tc.spacing {
			t.Errorf("%s: drains every %d boundaries after it, want %d", tc.what, k.spacing, tc.spacing)
		}
	}
}

// lightThenTouched feeds a fresh Knee twenty windows of light load (a dozen calls each, the
// limit of 20 never reached, their mean latency light, each window a third above or below it:
// noisy), then one window that reaches the limit with touched latency, and returns the base it
// measures.
func lightThenTouched(light, touched time.Duration) float64 {
	k := newKnee(AdaptiveLimitConfig{InitialLimit: 20, MinLimit: 1, MaxLimit: 200, Window: time.Second}).(*kneeLimit)
	end := time.Unix(0, 0)
	for i := range 20 {
		end = end.Add(2 * time.Second)
		lat := light * 2 / 3
		if i%2 == 1 {
			lat = light * 4 / 3
		}
		k.Update(WindowSummary{AvgLatency: lat, MaxInFlight: 6, Samples: 12, Duration: 2 * time.Second, End: end})
	}
	end = end.Add(time.Second)
	k.Update(WindowSummary{AvgLatency: touched, MaxInFlight: 20, Samples: 15, Rejected: 3, Duration: time.Second, End: end})
	return k.base
}

// A slow dependency under light load: too few calls a window for one window to measure base,
// so base is first measured when the limit is reached. That one window read 47% low in the
// bench (15 exponential calls of 700ms), every later window read as a queue, and the limit fell
// to 1 for good. The windows of light load before it, pooled, measure base instead when they
// read higher (a base too high is brought down by the drains; one too low is not brought up).
func TestKneeFirstBaseTakesThePooledLightLoadWhenHigher(t *testing.T) {
	// Within 5%: the windows before ten latencies have passed read short and are not pooled.
	if base := lightThenTouched(700*time.Millisecond, 370*time.Millisecond); math.Abs(base/700e6-1) > 0.05 {
		t.Errorf("light load at 700ms, then a window at 370ms that reached the limit: base %.0fms, want 700ms", base/1e6)
	}
	if base := lightThenTouched(600*time.Millisecond, 900*time.Millisecond); math.Abs(base/900e6-1) > 0.01 {
		t.Errorf("light load at 600ms, then a window at 900ms that reached the limit: base %.0fms, want 900ms (the higher)", base/1e6)
	}
}

// Calls that got lighter (or a base measured through a queue): under a limit that binds,
// latency clearly below base (beyond three standard deviations of the window's mean) twice in a
// row bounds base from above. Once is noise; and latency within the noise of base moves nothing.
func TestKneeLatencyClearlyBelowBaseBoundsIt(t *testing.T) {
	run := func(lats ...time.Duration) float64 {
		k := &kneeLimit{est: 40, min: 1, max: 200, window: time.Second, noise: 0.1, noiseN: 8, step: 1, moved: 1,
			base: 100e6, confirmed: true, started: true, calm: 1}
		end := time.Unix(3, 0) // off the drain grid's boundaries
		for _, lat := range lats {
			end = end.Add(time.Second)
			k.Update(WindowSummary{AvgLatency: lat, MaxInFlight: 40, Samples: 800, Rejected: 100, Duration: time.Second, End: end})
		}
		return k.base
	}
	// A window of 800 calls with a spread of 0.1: its mean is uncertain by about 0.6% (0.35%
	// and the floor), three standard deviations 1.9%.
	if base := run(80*time.Millisecond, 80*time.Millisecond); base > 82e6 || base < 80e6 {
		t.Errorf("two windows at 80ms under a base of 100ms: base %.1fms, want 80ms plus three standard deviations (81.6ms)", base/1e6)
	}
	if base := run(80*time.Millisecond, 100*time.Millisecond); base != 100e6 {
		t.Errorf("one window at 80ms, then one at base: base %.1fms, want 100ms", base/1e6)
	}
	if base := run(99*time.Millisecond, 99*time.Millisecond, 99*time.Millisecond); base < 99.9e6 {
		t.Errorf("windows 1%% below base (within the noise): base %.1fms, want 100ms", base/1e6)
	}
}

// A drain whose latency fell by more than half of it but less than all of it, beyond the noise,
// crossed the knee: its window ran below the knee. Where its latency is base (within a quarter
// of the tolerance), that confirms base, as a drain whose latency did not follow does. Under
// heavy overload the limit holds a little above the knee, every drain reads this way, and base
// stayed unconfirmed for a minute: a capacity that rose fourfold was then climbed by probes
// near the last queue, for ten seconds, rather than by growth.
func TestKneeDrainAcrossTheKneeAtBaseConfirmsIt(t *testing.T) {
	for _, tc := range []struct {
		what      string
		before    float64 // the latency of the window before the drain; the drain's is 30ms
		base      float64
		confirmed bool
	}{
		{"latency fell by 60% of the drain, to base", 33e6, 30e6, true},
		{"latency fell with the drain: a queue", 35.3e6, 30e6, false},
		{"latency fell by 60% of the drain, 5% below base", 33e6, 31.5e6, false},
	} {
		k := &kneeLimit{est: 22 * (1 - kneeDrainDepth), min: 1, max: 200, window: time.Second, noise: 0.1, noiseN: 8, step: 1,
			base: tc.base, varb: 0.0001, started: true, calm: 1, drainOf: 22, depth: kneeDrainDepth, spacing: 1}
		prev := kneeWindow{lat: tc.before, n: 660, binding: true, limit: 22}
		cur := kneeWindow{lat: 30e6, n: 600, binding: true, drain: true, limit: k.est}
		k.drained(prev, cur, WindowSummary{Samples: 600, Rejected: 2800, Duration: time.Second, End: time.Unix(1000*10+1, 0)}, 0.1)
		if k.confirmed != tc.confirmed {
			t.Errorf("%s: confirmed %v, want %v", tc.what, k.confirmed, tc.confirmed)
		}
	}
}

// A drain whose latency did not follow it measures base; it confirms base too, unless it ran a
// small share (a limit below 10) on a window too noisy to tell a queue from none. A replica's
// share drained by a slot or two moves a shared dependency too little for its latency to follow,
// so such a drain says nothing of the queue; confirmed, the base it measured (by chance a little
// high) let the replica grow fast on windows that read about it and take more than its share.
func TestKneeNoisyDrainOfASmallShareDoesNotConfirmBase(t *testing.T) {
	for _, tc := range []struct {
		what      string
		drainOf   float64
		n         float64 // the drained window's samples (a spread of 0.5 a call)
		confirmed bool
	}{
		{"a share of 6, 100 samples", 6, 100, false},
		{"a share of 6, 3000 samples", 6, 3000, true},
		{"a limit of 40, 100 samples", 40, 100, true},
	} {
		k := &kneeLimit{est: tc.drainOf * (1 - kneeDrainDepth), min: 1, max: 200, window: time.Second, noise: 0.5, noiseN: 8, step: 1,
			base: 50e6, varb: kneePrior * kneePrior, started: true, calm: 1, drainOf: tc.drainOf, depth: kneeDrainDepth, spacing: 1}
		prev := kneeWindow{lat: 55e6, n: tc.n, binding: true, limit: tc.drainOf}
		cur := kneeWindow{lat: 54.5e6, n: tc.n, binding: true, drain: true, limit: k.est} // fell by 6% of the drain
		k.drained(prev, cur, WindowSummary{Samples: int(tc.n), Rejected: int(tc.n), Duration: time.Second, End: time.Unix(1000*10+1, 0)}, 0.2)
		if k.confirmed != tc.confirmed {
			t.Errorf("%s: confirmed %v, want %v", tc.what, k.confirmed, tc.confirmed)
		}
		if b := k.expected(); b <= 50e6 {
			t.Errorf("%s: base %.1fms after a drain that read 54.5ms against 50ms: not measured", tc.what, b/1e6)
		}
		if k.est != tc.drainOf {
			t.Errorf("%s: limit %.2f after the drain, want %.0f restored", tc.what, k.est, tc.drainOf)
		}
	}
}

// A drain of a small share where latency lags, too noisy to tell a queue from none, whose
// latency did not follow it and lies above base, teaches nothing: the limit is restored and base
// stays (a replica's drain of a slot reads the others' queue). But from a limit that held back
// three calls or more for each one it served it measures base: such a limit is far below the
// knee or its share, most likely cut there by a base read low, which nothing else raises where
// latency lags and windows are noisy.
func TestKneeNoisyDrainFromAHeavilyRejectingLimitMeasuresBase(t *testing.T) {
	for _, heavy := range []bool{false, true} {
		k := &kneeLimit{est: 5 * (1 - kneeDrainDepth), min: 1, max: 200, window: time.Second, noise: 0.9, noiseN: 8, step: 1,
			base: 240e6, varb: kneePrior * kneePrior, started: true, calm: 1.2, drainOf: 5, depth: kneeDrainDepth, spacing: 1}
		if k.resolves(20, kneeDrainDepth) {
			t.Fatal("a drain of 15% over 20 samples of a spread of 0.9 resolves: the test does not test what it says")
		}
		prev := kneeWindow{lat: 295e6, n: 20, binding: true, limit: 5, lags: true, heavy: heavy}
		cur := kneeWindow{lat: 293e6, n: 20, binding: true, drain: true, limit: k.est, lags: true} // did not follow
		k.drained(prev, cur, WindowSummary{Samples: 20, Rejected: 70, Duration: time.Second, End: time.Unix(1000*10+1, 0)}, 0.25)
		if k.est != 5 {
			t.Errorf("heavy %v: limit %.2f after the drain, want 5 restored", heavy, k.est)
		}
		moved := k.expected() > 241e6
		if moved != heavy {
			t.Errorf("heavy %v: base %.1fms after a drain that read 293ms against 240ms (moved %v, want %v)", heavy, k.expected()/1e6, moved, heavy)
		}
		if k.confirmed {
			t.Errorf("heavy %v: a small share's noisy drain confirmed base", heavy)
		}
	}
}

// Drains too noisy to resolve whether latency followed them (a share of 6 calls, 100 samples a
// window), each finding latency about base (within the tolerance's lower half) and none followed
// by latency in full, confirm base once kneeAgreed of them come in a row; a drain that latency
// followed in full (a queue), or one that found latency off base, starts the count again.
func TestKneeDrainsThatAgreeInARowConfirmBase(t *testing.T) {
	k := &kneeLimit{est: 6, min: 1, max: 200, window: time.Second, noise: 0.5, noiseN: 8, step: 1,
		base: 50e6, varb: kneePrior * kneePrior, started: true, calm: 1, spacing: 1}
	drain := func(before, during float64) {
		k.drainOf, k.depth, k.est = 6, kneeDrainDepth, 6*(1-kneeDrainDepth)
		prev := kneeWindow{lat: before, n: 100, binding: true, limit: 6}
		cur := kneeWindow{lat: during, n: 100, binding: true, drain: true, limit: k.est}
		k.drained(prev, cur, WindowSummary{Samples: 100, Rejected: 100, Duration: time.Second, End: time.Unix(1000*10+1, 0)}, 0.2)
	}
	if k.resolves(100, kneeDrainDepth) {
		t.Fatal("a drain of 15% over 100 samples of a spread of 0.5 resolves: the test does not test what it says")
	}
	agree := func() { drain(k.expected()*1.01, k.expected()*1.005) } // latency at base, barely following
	for i := 1; i < kneeAgreed; i++ {
		agree()
	}
	if k.confirmed {
		t.Fatalf("confirmed after %d drains that agree with base, want %d", kneeAgreed-1, kneeAgreed)
	}
	drain(k.expected()*1.18, k.expected()) // latency fell with the drain in full: a queue
	for i := 1; i < kneeAgreed; i++ {
		agree()
	}
	if k.confirmed {
		t.Fatalf("confirmed after a drain that read a queue and %d that agree, want %d in a row", kneeAgreed-1, kneeAgreed)
	}
	drain(k.expected()*1.16, k.expected()*1.15) // latency did not follow, but 15% above base (the tolerance is 20%)
	for i := 1; i < kneeAgreed; i++ {
		agree()
	}
	if k.confirmed {
		t.Fatalf("confirmed after a drain that read latency off base and %d that agree, want %d in a row", kneeAgreed-1, kneeAgreed)
	}
	drain(k.expected()*1.075, k.expected()*1.07) // 7% above base: within the tolerance's lower half
	if !k.confirmed {
		t.Errorf("not confirmed after %d drains in a row that agree with base", kneeAgreed)
	}
}

// sinkEnds keeps BenchmarkKneeEndsEarly's result alive.
var sinkEnds bool

// BenchmarkKneeEndsEarly is what a drop in a window that watches its drops adds to the drop's
// path (see AdaptiveLimitHandle.recordLocked): Knee's endsEarly, called through the
// windowSizer interface, under the lock the drop already holds. A window watches its drops after
// a growth and, once a drain has confirmed Knee's base, always.
func BenchmarkKneeEndsEarly(b *testing.B) {
	var s windowSizer = &kneeLimit{baseDrop: 0.01, confirmed: true}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		sinkEnds = s.endsEarly(20+n&63, n&7)
	}
}

// A small limit probes by half a call (5% or more of it) most windows, so the spread learned
// only from windows within 3% of each other came from a handful of them, and could sit far off:
// in the bench, 0.36 for exponential calls whose spread is about 0.86, the tolerance at one call
// instead of about 22%, and a base read 7% low by one drain held the limit at half the knee.
// Windows a probe apart teach the spread the tolerance uses; those 3% apart still teach the one
// a window's mean is measured with.
func TestKneeSmallLimitLearnsItsSpreadFromWindowsAProbeApart(t *testing.T) {
	k := &kneeLimit{est: 8, min: 1, max: 200, window: time.Second, noise: 0.36, noiseN: 3, step: 1, moved: 1}
	// Windows of 150 calls whose means spread as exponential calls do (cv 0.9), under limits
	// that probe up and back by half a call: 8, 8.5, 9, 8.5, 8, ...
	limits := []float64{8, 8.5, 9, 8.5}
	var prev kneeWindow
	rng := rand.New(rand.NewPCG(7, 0))
	for i := range 200 {
		cur := kneeWindow{lat: 50e6 * math.Exp(0.9/math.Sqrt(150)*rng.NormFloat64()), n: 150, limit: limits[i%len(limits)], binding: true}
		k.learnNoise(prev, cur)
		prev = cur
	}
	if k.noiseN != 3 || k.noise != 0.36 {
		t.Fatalf("noise %.3f from %d measurements, want 0.36 from 3 (no windows within 3%%)", k.noise, k.noiseN)
	}
	if k.wanderN != 8 || math.Abs(k.wander/0.9-1) > 0.25 {
		t.Fatalf("wander %.3f from %d measurements, want about 0.9 from 8", k.wander, k.wanderN)
	}
	// The tolerance holds three standard deviations of the window's mean (0.9/sqrt(150): 22%),
	// not one call (12.5%).
	if tol := k.tolerance(kneeWindow{n: 150, binding: true}); tol < 0.17 {
		t.Errorf("tolerance %.3f, want three standard deviations of the learned spread (about 0.22)", tol)
	}
	// And the noise of a window's mean, for measurements, is still the one from windows 3% apart.
	if sd := k.spread(150); math.Abs(sd-math.Sqrt(0.36*0.36/150+kneeFloor*kneeFloor)) > 1e-12 {
		t.Errorf("spread of a window's mean %.4f, want the one from noise", sd)
	}
}

// A limit reached before the first window held enough latencies to measure base (calls of 120ms
// in a window of 1s: ten latencies and a quarter make 1.5s) ends the next window as soon as the
// windows hold them, not a whole window later: the calls over the initial limit are rejected
// until base is measured and the startup's doubling begins. A limit not reached has nothing to
// hurry: its next window is whole.
func TestKneeFirstBaseIsNotAWholeWindowLate(t *testing.T) {
	for _, tc := range []struct {
		what     string
		rejected int
		inFlight int
		want     time.Duration
	}{
		{"reached", 40, 20, 500 * time.Millisecond},
		{"not reached", 0, 12, 0},
	} {
		k := newKnee(AdaptiveLimitConfig{InitialLimit: 20, MinLimit: 1, MaxLimit: 200, Window: time.Second}).(*kneeLimit)
		k.Update(WindowSummary{AvgLatency: 120 * time.Millisecond, Samples: 160, Rejected: tc.rejected, MaxInFlight: tc.inFlight,
			Duration: time.Second, End: time.Unix(1000, 0)})
		if k.base != 0 {
			t.Fatalf("%s: base measured on %v of 120ms calls", tc.what, time.Second)
		}
		if got := k.nextWindow(); got != tc.want {
			t.Errorf("%s: next window %v, want %v", tc.what, got, tc.want)
		}
		if tc.want == 0 {
			continue
		}
		k.Update(WindowSummary{AvgLatency: 120 * time.Millisecond, Samples: 80, Rejected: 20, MaxInFlight: 20,
			Duration: tc.want, End: time.Unix(1000, 0).Add(tc.want)})
		if k.base == 0 || k.Limit() <= 20 {
			t.Errorf("%s: after the short window, base %v and limit %d: want base measured and the limit grown", tc.what, k.base, k.Limit())
		}
	}
}

// Light load from a cold start with a few drops too many (13.5% of the calls, as when calls
// outlast the timeout at any load): the first window only notes them, the second cuts the limit
// by their excess, and when the window under that cut does not show whether they are the
// dependency's own (the calls in flight fell too little to tell), it halves the calls in flight
// for a window shorter than the configured one: a test. Drops that did not follow the cut then
// restore the limit after that one window; a queue's drops, which fell with it, keep it down.
func TestKneeTestsOwnDropsInOneShortWindow(t *testing.T) {
	const lat = 42 * time.Millisecond
	for _, own := range []bool{true, false} {
		k := newKnee(AdaptiveLimitConfig{InitialLimit: 20, MinLimit: 1, MaxLimit: 200, Window: time.Second}).(*kneeLimit)
		end := time.Unix(0, 0)
		window := func(d time.Duration, samples, drops, rejected, maxFlight int) {
			end = end.Add(d)
			k.Update(WindowSummary{AvgLatency: lat, Samples: samples, Drops: drops, Rejected: rejected,
				MaxInFlight: maxFlight, Duration: d, End: end})
		}
		// 220 calls a second of 42ms: 9.24 calls in flight, at most 17, under a limit of 20.
		// The first window reads 15% short (38ms; the one after it does not), too far for the
		// two to show drops that are steady from the start (see steadyDrops).
		k.Update(WindowSummary{AvgLatency: lat * 100 / 115, Samples: 220, Drops: 30, MaxInFlight: 17, Duration: time.Second, End: end.Add(time.Second)})
		end = end.Add(time.Second)
		if got := k.Estimate(); got != 20 {
			t.Fatalf("own %v: one window of light load with 13.6%% drops: estimate %v, want 20 (the next one decides)", own, got)
		}
		window(time.Second, 220, 30, 0, 17)
		first := k.Estimate()
		if first >= 20 || first < 9 {
			t.Fatalf("own %v: the second such window: estimate %v, want a cut by the excess", own, first)
		}
		if d := k.nextWindow(); d != 0 {
			t.Fatalf("own %v: the window after the first cut lasts %v, want a whole one", own, d)
		}
		// Under that cut, 8.8 calls in flight: too few fewer to tell.
		window(time.Second, 210, 28, 10, int(first))
		cut := k.Estimate()
		if half := 9.24 / 2; cut < half || cut > half*1.25 {
			t.Fatalf("own %v: the window under the first cut, drops unchanged: estimate %v, want half the calls in flight with the tolerance (%v to %v)", own, cut, half, half*1.25)
		}
		d := k.nextWindow()
		if d < 20*lat || d >= time.Second {
			t.Fatalf("own %v: the test window lasts %v, want 20 latencies (%v) or more, less than the configured window", own, d, 20*lat)
		}
		// Under half the limit, half as many calls complete; the others are rejected.
		samples := int(110 * d.Seconds())
		drops := samples * 135 / 1000
		if !own {
			drops = 1
		}
		window(d, samples, drops, samples, int(cut))
		if got := k.Estimate(); own && got < 20 {
			t.Fatalf("own %v: the test window's drops did not follow the cut: estimate %v, want the limit of 20 back", own, got)
		} else if !own && got > cut+kneeProbe {
			t.Fatalf("own %v: the test window's drops fell with the cut: estimate %v, want it kept near %v", own, got, cut)
		}
	}
}

// Calls of half a window (500ms): a startup that doubled a limit that bound (40 to 80) past
// what the load needs stops binding, and the window after it reads the calls admitted before the
// growth and the growth's own queue together (14% above base, within a tolerance at its widest
// while the spread of latency is unknown). That is not the no-load latency: base stays. A window
// that lags after a growth of a limit that did not bind (light load keeping room above its calls
// in flight) is light load, and teaches base.
func TestKneeLaggingWindowAfterAGrowthFromABindingLimitDoesNotTeachBase(t *testing.T) {
	for _, tc := range []struct {
		what      string
		bound     bool
		wantMoved bool
	}{
		{"grown from a limit that bound", true, false},
		{"grown from a limit that did not bind", false, true},
	} {
		k := newKnee(AdaptiveLimitConfig{InitialLimit: 80, MinLimit: 1, MaxLimit: 200, Window: time.Second}).(*kneeLimit)
		k.base, k.varb, k.calm, k.flow, k.step = 500e6, 0.01, 1, 80, 2
		k.prev = kneeWindow{lat: 500e6, n: 80, rate: 80, binding: tc.bound, touched: true, limit: 40, lags: true}
		k.Update(WindowSummary{AvgLatency: 570 * time.Millisecond, Samples: 80, Rejected: 1, MaxInFlight: 78,
			Duration: time.Second, End: time.Unix(1000, 0)})
		if moved := k.base != 500e6; moved != tc.wantMoved {
			t.Errorf("%s: base %.0fms after a lagging window at 570ms, want it moved: %v", tc.what, k.base/1e6, tc.wantMoved)
		}
	}
}

// The first window, read every twentieth of the window, ends once it has read the no-load
// latency (12.5 latencies, and the samples for a standard deviation of its mean of half the
// tolerance with exponential calls: about 400) where the limit holds back as many calls as it
// serves; not where it holds back fewer, and no window after the first is read early.
func TestKneeFirstWindowEndsOnceItHasRead(t *testing.T) {
	k := newKnee(AdaptiveLimitConfig{InitialLimit: 20, MinLimit: 1, MaxLimit: 200, Window: time.Second}).(*kneeLimit)
	if got := k.readsEvery(); got != 50*time.Millisecond {
		t.Fatalf("the first window is read every %v, want 50ms", got)
	}
	lat := 10 * time.Millisecond
	for _, tc := range []struct {
		what     string
		samples  int
		rejected int
		elapsed  time.Duration
		want     bool
	}{
		{"read, half the calls held back", 405, 405, 200 * time.Millisecond, true},
		{"too few samples", 400, 400, 200 * time.Millisecond, false},
		{"too few latencies", 405, 405, 120 * time.Millisecond, false},
		{"fewer calls held back than served", 405, 404, 200 * time.Millisecond, false},
	} {
		w := WindowSummary{AvgLatency: lat, Samples: tc.samples, Rejected: tc.rejected, MaxInFlight: 20, Duration: tc.elapsed}
		if got := k.endsAt(w); got != tc.want {
			t.Errorf("%s: ends %v, want %v", tc.what, got, tc.want)
		}
	}
	k.Update(WindowSummary{AvgLatency: lat, Samples: 405, Rejected: 405, MaxInFlight: 20, Duration: 200 * time.Millisecond, End: time.Unix(1000, 0)})
	if got := k.readsEvery(); got != 0 {
		t.Errorf("the second window is read every %v, want never (0)", got)
	}
}

// erlangB is the Erlang B formula by its textbook recursion: the share of calls a loss system
// of c workers and no queue rejects at a load of a (in calls of one service time).
func erlangB(c int, a float64) float64 {
	b := 1.0
	for n := 1; n <= c; n++ {
		b = a * b / (float64(n) + a*b)
	}
	return b
}

// The loss model's states: without a queue (the limit at the workers) it rejects what Erlang B
// says; one worker and a queue reject what M/M/1/K does; and a heavy load over many states
// neither overflows nor loses its ratios.
func TestKneeLossModelRejectsAsErlangB(t *testing.T) {
	for _, tc := range []struct {
		c int
		a float64
	}{{1, 0.5}, {10, 10}, {24, 31.2}, {40, 60}, {200, 1000}} {
		if got, want := lossRejected(tc.c, tc.c, tc.a), erlangB(tc.c, tc.a); math.Abs(got-want) > 1e-9*max(1, want) {
			t.Errorf("c=%d a=%v: rejected %v, want Erlang B %v", tc.c, tc.a, got, want)
		}
	}
	for _, k := range []int{1, 3, 10} {
		rho := 0.8
		want := (1 - rho) * math.Pow(rho, float64(k)) / (1 - math.Pow(rho, float64(k+1)))
		if got := lossRejected(1, k, rho); math.Abs(got-want) > 1e-12 {
			t.Errorf("M/M/1/%d at 0.8: rejected %v, want %v", k, got, want)
		}
	}
	if got := lossRejected(200, 800, 1000); math.IsNaN(got) || got < 0.79 || got > 0.81 {
		t.Errorf("200 workers, limit 800, load 1000: rejected %v, want about 0.8", got)
	}
}

// The loss model infers the workers from the share the limit rejected and asks for the queue
// that keeps them busy: 1.3 times a knee of 24 needs 5 calls of queue for 98% of the goodput,
// at 11.5% of latency; 1.5 times a knee of 40 needs 2 or 3, at 2% to 4%; 3 times
// it almost none. A limit below the workers cannot see past itself: it is read as the
// workers, and asked to grow. The limit it asks for is capped at 1.3 times the workers.
func TestKneeLossModelAsksForTheQueueThatKeepsWorkersBusy(t *testing.T) {
	for _, tc := range []struct {
		c, limit   int
		load       float64
		atLo, atHi int
		latHi      float64
	}{
		{24, 24, 1.3 * 24, 28, 29, 1.12},
		{24, 30, 1.3 * 24, 28, 29, 1.12}, // read from a limit above the knee
		{24, 20, 1.3 * 24, 23, 26, 1.11}, // below it: the limit is read as the workers
		{40, 40, 1.5 * 40, 42, 43, 1.04},
		{40, 40, 3 * 40, 40, 41, 1.01},
		{10, 10, 3 * 10, 10, 12, 1.07},
		{24, 24, 0.5 * 24, 24, 24, 1.01}, // light load: the limit already carries it
	} {
		rejected := lossRejected(tc.c, tc.limit, tc.load)
		at, lat := lossModel(tc.limit, tc.load, rejected)
		if at < tc.atLo || at > tc.atHi || lat < 1 || lat > tc.latHi {
			t.Errorf("%d workers under limit %d, load %v (%.1f%% rejected): asks for %d at %.3f times base, want %d to %d at up to %v",
				tc.c, tc.limit, tc.load, 100*rejected, at, lat, tc.atLo, tc.atHi, tc.latHi)
		}
	}
	// Small workers need much queue: the cap holds the limit asked for to 1.3 times them.
	c := 12
	load, reach := 1.3*float64(c), int(kneeLossReach*float64(c))
	if at, _ := lossModel(c, load, lossRejected(c, c, load)); at == 0 || at > reach {
		t.Errorf("%d workers at 1.3 times: asks for %d, want %d to %d", c, at, c+1, reach)
	}
	// A window that reads fewer than kneeLossFewest workers (a replica's share of a few slots
	// looks like that) asks for nothing; one that reads that many does.
	for c := kneeLossFewest - 2; c <= kneeLossFewest; c++ {
		load := 2 * float64(c)
		at, lat := lossModel(c, load, lossRejected(c, c, load))
		if few := c < kneeLossFewest; few && (at != 0 || lat != 1) || !few && at <= c {
			t.Errorf("%d workers under 2x overload: asks for %d at %.3f times base, want nothing below %d workers, more than %d from there",
				c, at, lat, kneeLossFewest, c)
		}
	}
}

// The tolerance of losses applies only where a window tells the dependency's workers: a limit
// that binds, whose latency does not lag a window, that reads at least kneeLossFewest workers,
// and whose base a drain confirmed and no later drain made suspect. Here a limit of 24 at base,
// with one call in five rejected (1.25 times the load it serves): the model asks for a queue of
// 6 calls, at 14% of latency (a tolerance of 20%); each guard alone turns it off, and so does
// heavy overload, under which a slot that frees up is refilled at once. At the limit the model
// asks for, the tolerance stays, so that the limit holds there; above it, it goes.
func TestKneeLossToleranceOnlyWhereTheWindowTellsTheWorkers(t *testing.T) {
	window := func() (kneeWindow, WindowSummary) {
		w := WindowSummary{AvgLatency: 50 * time.Millisecond, MaxInFlight: 24, Samples: 480, Rejected: 120, Duration: time.Second}
		return kneeWindow{lat: 50e6, n: 480, binding: true, limit: 24}, w
	}
	limit := func() *kneeLimit {
		return &kneeLimit{est: 24, min: 1, max: 200, base: 50e6, confirmed: true, step: 1, moved: 1}
	}
	cur, w := window()
	if got := limit().lossTolerance(cur, w); got < 0.15 || got > kneeMaxTolerance {
		t.Fatalf("a lone limit of 24 under 1.25 times its load: tolerance %v, want 0.15 to %v", got, kneeMaxTolerance)
	}
	for _, tc := range []struct {
		what  string
		guard func(k *kneeLimit, cur *kneeWindow, w *WindowSummary)
	}{
		{"a limit that does not bind", func(k *kneeLimit, cur *kneeWindow, w *WindowSummary) { cur.binding = false }},
		{"latency that lags a window", func(k *kneeLimit, cur *kneeWindow, w *WindowSummary) { cur.lags = true }},
		{"a replica's share of a few slots", func(k *kneeLimit, cur *kneeWindow, w *WindowSummary) {
			k.est, cur.limit = 5, 5
			w.Samples, w.Rejected = 100, 100 // 5 slots under twice the load they serve
		}},
		{"a base no drain confirmed", func(k *kneeLimit, cur *kneeWindow, w *WindowSummary) { k.confirmed = false }},
		{"a suspect base", func(k *kneeLimit, cur *kneeWindow, w *WindowSummary) { k.suspect = true }},
		{"a window of no duration", func(k *kneeLimit, cur *kneeWindow, w *WindowSummary) { w.Duration = 0 }},
		{"a limit above kneeLossMost", func(k *kneeLimit, cur *kneeWindow, w *WindowSummary) {
			k.est, cur.limit = kneeLossMost+1, kneeLossMost+1
			w.Samples, w.Rejected = 20*(kneeLossMost+1), kneeLossMost+1 // 1.05 times the load it serves
		}},
		{"heavy overload, the limit above the workers", func(k *kneeLimit, cur *kneeWindow, w *WindowSummary) { w.Rejected = 1400 }},
	} {
		k := limit()
		cur, w := window()
		tc.guard(k, &cur, &w)
		if got := k.lossTolerance(cur, w); got != 0 {
			t.Errorf("%s: tolerance %v, want none", tc.what, got)
		}
	}
	// The same load and workers read from the limit the model asks for, then from one above it.
	// The window's rejections are the model's own at that limit, so that it reads 24 workers.
	const offered = 600.0   // calls a second, admitted and rejected
	load := offered * 50e-3 // in calls of base latency: 30
	at, lat := lossModel(24, load, lossRejected(24, 24, load))
	for _, lim := range []int{at, at + 2} {
		k := limit()
		cur, w := window()
		k.est, cur.limit = float64(lim), float64(lim)
		w.Duration = 100 * time.Second                                           // counts large enough to read the model's share
		w.Rejected = int(math.Ceil(100 * offered * lossRejected(24, lim, load))) // not fewer than 24 workers reject
		w.Samples = int(100*offered) - w.Rejected
		got := k.lossTolerance(cur, w)
		if want := min(kneeMaxTolerance, (lat-1)/kneeCutTarget); lim == at && math.Abs(got-want) > 0.03 || lim > at && got != 0 {
			t.Errorf("limit %d, the model asking for %d at %.3f times base: tolerance %v, want %v at it and none above",
				lim, at, lat, got, want)
		}
	}
}

// Under heavy overload (four calls offered for each one admitted) the bands narrow to the
// tolerance's lower half only where that half stands above the noise. Calls that vary little
// (a tolerance at its floor of 10%, a window's mean known to half a percent) narrow; 300
// exponential calls a window (a tolerance of three standard deviations, 17%) keep the whole
// tolerance, whose half would be a standard deviation and a half of the window's mean.
func TestKneeHeavyOverloadNarrowsOnlyAboveTheNoise(t *testing.T) {
	for _, tc := range []struct {
		what   string
		cv     float64
		n      int
		narrow bool
	}{
		{"calls of ±10%", 0.06, 800, true},
		{"exponential calls", 1, 300, false},
	} {
		k := &kneeLimit{est: 50, min: 1, max: 200, base: 100e6, noise: tc.cv, noiseN: 8, wander: tc.cv, wanderN: 8, step: 1}
		cur := kneeWindow{lat: 100e6, n: float64(tc.n), binding: true, limit: 50, heavy: true}
		w := WindowSummary{Samples: tc.n, Rejected: 4 * tc.n, Duration: time.Second}
		tol := k.tolerance(cur)
		hold, queue, _ := k.bands(cur, w, tol)
		if narrowed := queue < 1+tol; narrowed != tc.narrow {
			t.Errorf("%s: tolerance %.3f, bands hold %.3f and cut %.3f: narrowed %v, want %v", tc.what, tol, hold, queue, narrowed, tc.narrow)
		}
	}
}

// The window after a doubling in the startup, where latency lags a window: one of eight
// latencies (calls of 120ms, a window of 1s) holds few calls admitted before the doubling, and
// at base the startup doubles again; one of three (calls of 300ms) is mostly theirs, and waits.
func TestKneeStartupGrowsAgainOnAWindowOfMostlyNewCalls(t *testing.T) {
	k := func(lat time.Duration, samples int) float64 {
		kl := &kneeLimit{est: 40, min: 1, max: 1000, window: time.Second, base: float64(lat), varb: 0.001,
			noise: 1, noiseN: 8, wander: 1, wanderN: 8, step: 2, moved: 1, confirmed: true}
		kl.Update(WindowSummary{AvgLatency: lat, Samples: samples, Rejected: 4 * samples, MaxInFlight: 40,
			Duration: time.Second, End: time.Unix(1000, 5e8)})
		return kl.Estimate()
	}
	if got := k(120*time.Millisecond, 330); got != 80 {
		t.Errorf("a window of 8 latencies at base after a doubling: estimate %v, want 80", got)
	}
	if got := k(300*time.Millisecond, 130); got != 40 {
		t.Errorf("a window of 3 latencies at base after a doubling: estimate %v, want 40 (it waits a window)", got)
	}
}

// A base first measured on a window of fewer than four latencies reads short, as one measured
// on the first window does: calls of 120ms (exponential), a first window that reached the limit
// too soon to measure base, a second of 0.39s (3.6 latencies) that measured it 9% low. The next
// window, of eight latencies after the startup's doubling, within the tolerance and above base,
// measures it again; one as short as the second does not.
func TestKneeBaseReadOnAShortWindowIsMeasuredAgain(t *testing.T) {
	for _, tc := range []struct {
		what  string
		third time.Duration
		moves bool
	}{
		{"a third window of eight latencies", time.Second, true},
		{"a third window as short as the second", 390 * time.Millisecond, false},
	} {
		k := newKnee(AdaptiveLimitConfig{InitialLimit: 20, MinLimit: 1, MaxLimit: 1000, Window: time.Second}).(*kneeLimit)
		end := time.Unix(1000, 0)
		window := func(lat, d time.Duration, samples, rejected int) {
			end = end.Add(d)
			k.Update(WindowSummary{AvgLatency: lat, Samples: samples, Rejected: rejected, MaxInFlight: k.Limit(), Duration: d, End: end})
		}
		window(102*time.Millisecond, 1010*time.Millisecond, 179, 1526)
		if k.base != 0 {
			t.Fatalf("%s: base measured on the first window", tc.what)
		}
		window(107*time.Millisecond, k.nextWindow(), 69, 545)
		if k.base != 107e6 || k.Limit() != 40 {
			t.Fatalf("%s: after the second window base %.1fms and limit %d, want 107ms and 40", tc.what, k.base/1e6, k.Limit())
		}
		window(113*time.Millisecond, tc.third, int(330*tc.third.Seconds()), int(1290*tc.third.Seconds()))
		if moved := k.base > 108e6; moved != tc.moves {
			t.Errorf("%s at 113ms: base %.1fms, want it measured again: %v", tc.what, k.base/1e6, tc.moves)
		}
	}
}

// Base moves along a trend learned from two measurements off it the same way, the second further,
// at most kneeMaxTrend a window: a drift of calls getting lighter by 2% a window is followed as
// measured, but two windows that read 15% and 26% low one after the other (a queue that swung
// under a limit that did not bind) do not teach 14% a window, which ran base from 106ms to 18ms
// in twelve windows and took the limit to 1 for a knee of 6.
func TestKneeTrendIsAtMostAFewPercentAWindow(t *testing.T) {
	for _, tc := range []struct {
		what          string
		first, second float64 // the two measurements, as a share of base
		apart         int     // windows between them
		trend         float64
	}{
		{"calls getting lighter by 2% a window", 0.86, 0.827, 2, math.Log(0.827/0.86) / 2},
		{"a swing of 15% then 26% low", 0.85, 0.736, 1, -kneeMaxTrend},
	} {
		k := &kneeLimit{base: 100e6, varb: 0.001, noise: 1, noiseN: 8, est: 20, min: 1, max: 200}
		k.observe(tc.first*100e6, 0, 1000, false)
		if k.surprise == 0 {
			t.Fatalf("%s: the first measurement was not a surprise: the test does not test what it says", tc.what)
		}
		for range tc.apart {
			k.age()
		}
		k.observe(tc.second*100e6, 0, 1000, false)
		if math.Abs(k.trend-tc.trend) > 1e-9 {
			t.Errorf("%s: trend %.4f a window, want %.4f", tc.what, k.trend, tc.trend)
		}
		for range 12 {
			k.age()
		}
		if low := tc.second * 100e6 * math.Exp(-0.3); k.expected() < low*0.999 {
			t.Errorf("%s: base %.1fms twelve windows later, want %.1fms or more", tc.what, k.expected()/1e6, low/1e6)
		}
	}
}

// A first window whose calls began with it reads short by as much as its calls in flight at its
// end say it may (exponential calls: the whole of latency over the window), and base keeps that
// uncertainty until a drain measures it: the first drain then sets base where it reads, rather
// than halfway. Calls that end together leave nothing in flight to say so, and base keeps the
// confidence of its samples.
func TestKneeFirstBaseReadShortIsMeasuredAnewByTheFirstDrain(t *testing.T) {
	full := func(lat time.Duration, samples, limit int) (kneeWindow, WindowSummary) {
		w := WindowSummary{AvgLatency: lat, Samples: samples, Rejected: 5 * samples, MaxInFlight: limit, Duration: time.Second}
		return kneeWindow{lat: float64(lat), limit: float64(limit)}, w
	}
	// 20 slots busy for a second: 200 calls of 100ms left nothing in flight to speak of, 180
	// calls of 100ms left 2s of ages, a tenth of a second a slot (a whole call: exponential).
	if b := readsShort(full(100*time.Millisecond, 200, 20)); b != 0 {
		t.Errorf("calls that ended with the window: reads short by %.3f, want 0", b)
	}
	if b := readsShort(full(100*time.Millisecond, 180, 20)); math.Abs(b-0.1222) > 0.001 {
		t.Errorf("a call of age left in every slot: reads short by %.4f, want 2x(2/18) - 0.1 = 0.1222", b)
	}
	cur, w := full(100*time.Millisecond, 180, 20)
	w.Rejected = w.Samples - 1
	if b := readsShort(cur, w); b != 0 {
		t.Errorf("a limit that did not stay full: reads short by %.3f, want 0", b)
	}

	for _, tc := range []struct {
		what               string
		samples1, samples2 int
		anew               bool
	}{
		{"calls still in flight at the windows' ends", 183, 355, true},
		{"calls that ended with the windows", 200, 376, false},
	} {
		k := newKnee(AdaptiveLimitConfig{InitialLimit: 20, MinLimit: 1, MaxLimit: 1000, Window: time.Second}).(*kneeLimit)
		end := time.Unix(1000, 0)
		window := func(lat, d time.Duration, samples int) {
			end = end.Add(d)
			k.Update(WindowSummary{AvgLatency: lat, Samples: samples, Rejected: 4 * samples, MaxInFlight: k.Limit(), Duration: d, End: end})
		}
		window(97*time.Millisecond, 1020*time.Millisecond, tc.samples1)
		window(106*time.Millisecond, time.Second, tc.samples2)
		if k.base < 97e6 || k.base > 106e6 || k.Limit() != 80 {
			t.Fatalf("%s: after two windows base %.1fms and limit %d, want 97ms to 106ms and 80", tc.what, k.base/1e6, k.Limit())
		}
		k.observe(119e6, 0, 600, true) // a drain below the knee: the no-load latency
		if anew := k.base > 115e6; anew != tc.anew {
			t.Errorf("%s: a drain at 119ms moved base to %.1fms; measured anew: %v, want %v", tc.what, k.base/1e6, anew, tc.anew)
		}
	}
}

// A drain's response is read against the recent windows' average where the window before it read
// high by chance, once base is known and the limit is no small share: latency that fell from an
// outlier back to about base is no queue emptied, and the limit is restored. Where base may have
// been measured through a cold start's queue, or for a small share, the window before the drain
// still decides, as it did.
func TestKneeDrainAfterAnOutlierIsReadAgainstRecentLatency(t *testing.T) {
	for _, tc := range []struct {
		what      string
		est       float64
		confirmed bool
		restored  bool
	}{
		{"a confirmed base", 21, true, true},
		{"a cold start's base", 21, false, false},
		{"a small share", 8, true, false},
	} {
		end := time.Unix(1000*10+9, 0) // a second before the grid's boundary: the next window drains
		k := &kneeLimit{est: tc.est, min: 1, max: 200, window: time.Second, noise: 0.1, noiseN: 8, step: 1, moved: 1,
			base: 100e6, since: 9, confirmed: tc.confirmed, started: true, calm: 1.07}
		k.prev = kneeWindow{lat: 142e6, n: 80, binding: true, limit: tc.est} // 1.42 times base: an outlier
		k.plan(WindowSummary{Duration: time.Second, End: end})
		if k.drainOf != tc.est {
			t.Fatalf("%s: no drain from %v (drain of %v)", tc.what, tc.est, k.drainOf)
		}
		cur := kneeWindow{lat: 99e6, n: 80, binding: true, drain: true, limit: k.est}
		k.drained(k.prev, cur, WindowSummary{Samples: 80, Rejected: 40, Duration: time.Second, End: end.Add(time.Second)}, 0.1)
		if restored := k.est == tc.est; restored != tc.restored {
			t.Errorf("%s: estimate %.2f after a drain that read 0.99 of base, want it restored to %v: %v", tc.what, k.est, tc.est, tc.restored)
		}
	}
}
