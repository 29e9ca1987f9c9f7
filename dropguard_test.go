package r4c_test

import (
	"math"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/directive"
	"github.com/resilience4cata/r4c/r4ctest"
)

// The drop guard's tests drive windows of 100ms through permits on a manual clock.
const (
	guardWindow  = 100 * time.Millisecond
	guardNormal  = 10 * time.Millisecond // a call's latency when the dependency is well
	guardTimeout = 90 * time.Millisecond // a call cut short by a timeout inside the limit
)

// guardWindowSummary runs one window of n calls, all in flight together, starting at the
// window's start: n-1 of them end after lat, the last one when the window is over, which
// ends the window with n samples (so the window's average is ((n-1)*lat + guardWindow)/n).
// The first drops calls are drops (the last call too when drops == n). It returns the
// summary the engine fed the algorithm, as far as Gradient2 reads it.
func guardWindowSummary(t *testing.T, h *r4c.AdaptiveLimitHandle, clock *r4ctest.ManualClock, n, drops int, lat time.Duration) r4c.WindowSummary {
	t.Helper()
	before := h.Snapshot()
	permits := make([]r4c.AdaptiveLimitPermit, n)
	for i := range permits {
		permits[i] = acquire(t, h)
	}
	end := func(i int) {
		if i < drops {
			permits[i].Drop()
		} else {
			permits[i].Success()
		}
	}
	clock.Advance(lat)
	for i := 0; i < n-1; i++ {
		end(i)
	}
	clock.Advance(guardWindow - lat)
	if drops == n {
		permits[n-1].Drop()
	} else {
		permits[n-1].Success()
	}
	s := h.Snapshot()
	if s.Windows != before.Windows+1 || s.WindowSamples != int64(n) {
		t.Fatalf("windows %d -> %d, samples %d: want one more window of %d samples", before.Windows, s.Windows, s.WindowSamples, n)
	}
	want := (time.Duration(n-1)*lat + guardWindow) / time.Duration(n)
	if s.WindowLatency != want {
		t.Fatalf("window latency %v, want %v", s.WindowLatency, want)
	}
	return r4c.WindowSummary{AvgLatency: s.WindowLatency, MaxInFlight: n, Dropped: drops > 0, Samples: n, Drops: drops}
}

// guardedG2 returns an adaptive limit with Gradient2 and cfg, and a standalone Gradient2 with
// the same settings to mirror it window by window.
func guardedG2(t *testing.T, cfg r4c.AdaptiveLimitConfig) (*r4c.AdaptiveLimitHandle, *r4ctest.ManualClock, gradient2Alg) {
	t.Helper()
	cfg.Algorithm, cfg.Window = r4c.Gradient2, guardWindow
	reg, clock := newRegistry(t)
	newPipeline[string](t, reg, "g2", cfg)
	mirrorCfg := cfg
	mirrorCfg.Window, mirrorCfg.MinWindowSamples, mirrorCfg.DropOn, mirrorCfg.DropGuard = 0, 0, nil, 0
	alg, err := r4c.NewAdaptiveAlgorithm(mirrorCfg)
	if err != nil {
		t.Fatal(err)
	}
	return handle(t, reg, "g2"), clock, alg.(gradient2Alg)
}

// sameState fails unless the engine's Gradient2 and the mirror agree bit for bit.
func sameState(t *testing.T, h *r4c.AdaptiveLimitHandle, mirror gradient2Alg, what string) {
	t.Helper()
	s := h.Snapshot()
	if s.Limit != mirror.Limit() || math.Float64bits(s.Estimate) != math.Float64bits(mirror.Estimate()) ||
		math.Float64bits(r4c.LongLatencyOf(h)) != math.Float64bits(mirror.LongLatency()) {
		t.Fatalf("%s: engine limit %d, estimate %v, long %v; mirror %d, %v, %v", what,
			s.Limit, s.Estimate, r4c.LongLatencyOf(h), mirror.Limit(), mirror.Estimate(), mirror.LongLatency())
	}
}

// warmUp runs windows of healthy calls, every slot in use, mirrored through Update.
func warmUp(t *testing.T, h *r4c.AdaptiveLimitHandle, clock *r4ctest.ManualClock, mirror gradient2Alg, windows int) {
	t.Helper()
	for range windows {
		mirror.Update(guardWindowSummary(t, h, clock, h.Limit(), 0, guardNormal))
		sameState(t, h, mirror, "healthy window")
	}
}

// (a) A window whose calls all time out lowers the limit as Gradient2 does at its floor
// gradient, and leaves the long-term latency where it was.
func TestDropGuardWindowOfTimeouts(t *testing.T) {
	h, clock, mirror := guardedG2(t, r4c.AdaptiveLimitConfig{})
	warmUp(t, h, clock, mirror, 30)
	long, limit := r4c.LongLatencyOf(h), h.Limit()
	if long <= 0 || limit <= 20 {
		t.Fatalf("after warming up: long latency %v, limit %d", long, limit)
	}
	w := guardWindowSummary(t, h, clock, limit, limit, guardTimeout)
	if got := h.Limit(); got >= limit {
		t.Fatalf("limit %d after a window of timeouts, was %d", got, limit)
	}
	if got := r4c.LongLatencyOf(h); math.Float64bits(got) != math.Float64bits(long) {
		t.Fatalf("long-term latency %v after a window of timeouts, was %v", got, long)
	}
	r4c.Gradient2Overloaded(mirror, w)
	sameState(t, h, mirror, "window of timeouts")
	if s := h.Snapshot(); s.GuardedWindows != 1 {
		t.Fatalf("guarded windows %d, want 1", s.GuardedWindows)
	}
	// Healthy windows go through Update again, from a long-term latency that never saw the
	// timeouts.
	warmUp(t, h, clock, mirror, 5)
}

// (b) Sustained timeouts: guarded, the limit falls and stays low, the long-term latency never
// moves. Without the guard (Netflix's behaviour), the long-term latency learns the timeouts
// and the limit grows back, far above where it was.
func TestDropGuardSustainedTimeouts(t *testing.T) {
	const overloaded = 200
	cfg := r4c.AdaptiveLimitConfig{MinWindowSamples: 1, LongWindow: 20} // a short memory, to learn within the test
	run := func(t *testing.T, guard r4c.Toggle) (before, after int, longBefore, longAfter float64) {
		cfg.DropGuard = guard
		h, clock, mirror := guardedG2(t, cfg)
		warmUp(t, h, clock, mirror, 30)
		before, longBefore = h.Limit(), r4c.LongLatencyOf(h)
		for range overloaded {
			// Every slot is taken by a call that times out.
			w := guardWindowSummary(t, h, clock, h.Limit(), h.Limit(), guardTimeout)
			if guard == r4c.Off {
				mirror.Update(w)
			} else {
				r4c.Gradient2Overloaded(mirror, w)
			}
			sameState(t, h, mirror, "window of timeouts")
		}
		s := h.Snapshot()
		want := int64(overloaded)
		if guard == r4c.Off {
			want = 0
		}
		if s.GuardedWindows != want {
			t.Fatalf("guarded windows %d, want %d", s.GuardedWindows, want)
		}
		return before, h.Limit(), longBefore, r4c.LongLatencyOf(h)
	}
	t.Run("guarded", func(t *testing.T) {
		before, after, longBefore, longAfter := run(t, r4c.On)
		t.Logf("guarded: limit %d -> %d, long-term latency %v -> %v", before, after, time.Duration(longBefore), time.Duration(longAfter))
		if after >= before || after > 8 {
			t.Fatalf("limit %d after %d windows of timeouts, %d before: want it down at about 2 x QueueSize", after, overloaded, before)
		}
		if longAfter != longBefore {
			t.Fatalf("long-term latency moved from %v to %v", longBefore, longAfter)
		}
	})
	t.Run("off", func(t *testing.T) {
		before, after, longBefore, longAfter := run(t, r4c.Off)
		t.Logf("off: limit %d -> %d, long-term latency %v -> %v", before, after, time.Duration(longBefore), time.Duration(longAfter))
		if after <= before {
			t.Fatalf("without the guard: limit %d after %d windows of timeouts, %d before: the failure did not reproduce", after, overloaded, before)
		}
		if longAfter < 0.9*float64(guardTimeout) {
			t.Fatalf("without the guard: long-term latency %v, want it to have learned the timeouts (%v)", time.Duration(longAfter), guardTimeout)
		}
	})
}

// (c) A window with a few drops among many samples (one in ten or fewer) is not overload: it
// goes through Update unchanged, bit for bit, its latency included in the long-term average.
// More than one in ten is.
func TestDropGuardRareDropsGoThroughUpdate(t *testing.T) {
	h, clock, mirror := guardedG2(t, r4c.AdaptiveLimitConfig{InitialLimit: 40})
	warmUp(t, h, clock, mirror, 3)
	for _, tc := range []struct {
		drops   int
		guarded bool
	}{{1, false}, {4, false}, {5, true}, {1, false}} {
		// 40 calls, the drops among them time out; the others are healthy.
		n := 40
		if h.Limit() < n {
			n = h.Limit()
		}
		drops := tc.drops
		before := h.Snapshot().GuardedWindows
		w := runMixedWindow(t, h, clock, n, drops)
		if tc.guarded {
			r4c.Gradient2Overloaded(mirror, w)
		} else {
			mirror.Update(w)
		}
		sameState(t, h, mirror, "window with drops")
		if got := h.Snapshot().GuardedWindows - before; got != map[bool]int64{false: 0, true: 1}[tc.guarded] {
			t.Fatalf("%d drops of %d samples: guarded %d windows, want guarded %v", drops, n, got, tc.guarded)
		}
	}
}

// runMixedWindow runs one window of n calls: drops of them end at guardTimeout as drops, the
// others after guardNormal, the last one when the window is over (healthy).
func runMixedWindow(t *testing.T, h *r4c.AdaptiveLimitHandle, clock *r4ctest.ManualClock, n, drops int) r4c.WindowSummary {
	t.Helper()
	permits := make([]r4c.AdaptiveLimitPermit, n)
	for i := range permits {
		permits[i] = acquire(t, h)
	}
	clock.Advance(guardNormal)
	for i := drops; i < n-1; i++ {
		permits[i].Success()
	}
	clock.Advance(guardTimeout - guardNormal)
	for i := 0; i < drops; i++ {
		permits[i].Drop()
	}
	clock.Advance(guardWindow - guardTimeout)
	permits[n-1].Success()
	s := h.Snapshot()
	want := (time.Duration(n-1-drops)*guardNormal + time.Duration(drops)*guardTimeout + guardWindow) / time.Duration(n)
	if s.WindowSamples != int64(n) || s.WindowLatency != want {
		t.Fatalf("window of %d samples, latency %v; want %d, %v", s.WindowSamples, s.WindowLatency, n, want)
	}
	return r4c.WindowSummary{AvgLatency: s.WindowLatency, MaxInFlight: n, Dropped: drops > 0}
}

// The guard is Gradient2's: AIMD and Vegas see every window through Update, whatever
// DropGuard says.
func TestDropGuardOnlyGradient2(t *testing.T) {
	for _, alg := range []r4c.LimitAlgorithm{r4c.AIMD, r4c.Vegas} {
		t.Run(alg.String(), func(t *testing.T) {
			cfg := r4c.AdaptiveLimitConfig{Algorithm: alg, Window: guardWindow, MinWindowSamples: 1}
			reg, clock := newRegistry(t)
			newPipeline[string](t, reg, "x", cfg)
			h := handle(t, reg, "x")
			cfg.Window, cfg.MinWindowSamples = 0, 0
			mirror, err := r4c.NewAdaptiveAlgorithm(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 40 {
				drops := 0
				if i%3 == 2 {
					drops = h.Limit()
				}
				w := guardWindowSummary(t, h, clock, h.Limit(), drops, guardNormal)
				if want := mirror.Update(w); h.Limit() != want {
					t.Fatalf("window %d: limit %d, want %d", i+1, h.Limit(), want)
				}
			}
			if s := h.Snapshot(); s.GuardedWindows != 0 {
				t.Fatalf("%v: %d guarded windows", alg, s.GuardedWindows)
			}
		})
	}
}

// DropGuard resolves through the layers like any setting, and reads from external keys.
func TestDropGuardSetting(t *testing.T) {
	reg, _ := newRegistry(t,
		r4c.WithProperties(map[string]string{"instances.netflix.adaptiveLimit.dropGuard": "false"}),
		r4c.WithInstance("back", r4c.AdaptiveLimitConfig{DropGuard: r4c.On}),
		r4c.WithDefaults(r4c.AdaptiveLimitConfig{DropGuard: r4c.Off}),
	)
	for id, want := range map[string]r4c.Toggle{"netflix": r4c.Off, "back": r4c.On, "plain": r4c.Off} {
		newPipeline[string](t, reg, id, r4c.AdaptiveLimitConfig{})
		if got := handle(t, reg, id).Config().DropGuard; got != want {
			t.Errorf("%s: DropGuard %v, want %v", id, got, want)
		}
	}
	reg, _ = newRegistry(t)
	newPipeline[string](t, reg, "default", r4c.AdaptiveLimitConfig{})
	if got := handle(t, reg, "default").Config().DropGuard; got != r4c.On {
		t.Errorf("default DropGuard %v, want On", got)
	}
	if got := literal(goConfig(t, "//r4c:adaptivelimit maxLimit=200 dropGuard=false")); got != "r4c.AdaptiveLimitConfig{MaxLimit: 200, DropGuard: r4c.Off}" {
		t.Errorf("directive dropGuard=false: %s, want DropGuard: r4c.Off", got)
	}
	if _, err := directive.Parse("//r4c:adaptivelimit dropGuard=maybe"); r4c.ErrorCode(err) != "R4C-ATR-002" {
		t.Errorf("dropGuard=maybe: %v, want R4C-ATR-002", err)
	}
}
