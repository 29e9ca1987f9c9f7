package r4c

import (
	"math"
	"testing"
)

// The fit of latency against the limit (kneeLimit.fitInelastic), window by window: it finds base
// too low when the limit fell a good deal and latency did not, and only then.

// fitWindows feeds binding windows of the given limits to the fit of a Knee whose base is 100
// (a unit of latency) and whose measured spread of one call's latency is 1, at lat(limit) each,
// with 70 samples a window: a slow dependency, whose windows are too noisy for one cut to show.
// It returns the latency the fit reports, and the window at which it did (-1: never).
func fitWindows(limits []float64, lat func(limit float64) float64) (float64, int) {
	k := &kneeLimit{base: 100, noise: 1, noiseN: 8, min: 1, max: 200}
	for i, l := range limits {
		cur := kneeWindow{lat: lat(l), n: 70, binding: true, limit: l}
		if got, ok := k.fitInelastic(cur, k.tolerance(cur)); ok {
			return got, i
		}
	}
	return 0, -1
}

func TestKneeFitFindsLatencyThatDoesNotFollowTheLimit(t *testing.T) {
	// Small cuts, one a window, from 30 to 8, and latency stays 30% above base: calls got
	// heavier, or base was set by a lucky window.
	var limits []float64
	for l := 30.0; l >= 8; l-- {
		limits = append(limits, l)
	}
	got, at := fitWindows(limits, func(float64) float64 { return 130 })
	if at < 0 || math.Abs(got-130) > 1e-9 {
		t.Fatalf("fit reports %v at window %d, want 130 at some window", got, at)
	}
	// It needs the limit to have moved enough: not before the limit fell by a fifth or so.
	if limits[at] > 24 {
		t.Errorf("fit fired at limit %v, after too small a move to tell", limits[at])
	}
}

func TestKneeFitLeavesAQueueAlone(t *testing.T) {
	var limits []float64
	for l := 30.0; l >= 8; l-- {
		limits = append(limits, l)
	}
	// A queue: latency in proportion to the limit above a knee of 8.
	if got, at := fitWindows(limits, func(l float64) float64 { return 100 * l / 8 }); at >= 0 {
		t.Fatalf("fit reports %v at window %d under a queue that follows the limit", got, at)
	}
	// Latency at base: nothing to correct.
	if got, at := fitWindows(limits, func(float64) float64 { return 100 }); at >= 0 {
		t.Fatalf("fit reports %v at window %d with latency at base", got, at)
	}
}

func TestKneeFitIgnoresGrowthIntoAQueue(t *testing.T) {
	// Growth below the knee (latency at base), then one window past it: latency jumps on the
	// largest limit. Latency did follow the limit there; the fit must not read the flat part as
	// a latency that ignores the limit.
	limits := []float64{10, 11, 12, 15, 22, 45, 90}
	lat := func(l float64) float64 { return 100 * max(1, l/60) }
	if got, at := fitWindows(limits, lat); at >= 0 {
		t.Fatalf("fit reports %v at window %d during growth", got, at)
	}
}
