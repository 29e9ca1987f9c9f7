package r4c_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// The rules of Knee (knee.go, docs/adaptive-limit.md), one test each, through the public API:
// hand-made windows fed to a standalone KneeAlgorithm with the default Window of 1s. Window k of
// a test (k = 1, 2, ...) ends at kneeEpoch + k seconds, so drains, which fall on a grid of the
// wall clock every 10 windows, fall on the windows whose k is a multiple of 10: the window
// ending at 9s plans the drain and lowers the limit for the window ending at 10s.
//
// Most tests read the latency of a window against a no-load latency (base) of 50ms. While the
// limit binds, Knee's tolerance of queueing is the larger of 10% and three standard errors of
// the window's mean latency; until it has measured the spread of latency it takes that of
// exponential service times (a spread of 1 per call), so a binding window of 800 samples (a
// limit of 40 at 50ms) has a tolerance of about 10.7%: latency up to 1.054 times base (the lower
// half) lets the limit grow, up to 1.107 times (the upper half) holds it, and more cuts it.

// kneeEpoch lies on the drain grid: a whole number of 10s periods since the Unix epoch.
var kneeEpoch = r4ctest.Epoch

const (
	kneeBase    = 50 * time.Millisecond // the no-load latency of most tests
	kneeHold    = 1.08                  // latency over base in the upper half of the tolerance: held
	kneeMaxTol  = 0.25                  // kneeMaxTolerance: the largest tolerance
	kneeProbeUp = 0.5                   // kneeProbe: the step up near the knee
)

func newKneeAlg(t *testing.T, cfg r4c.AdaptiveLimitConfig) kneeAlg {
	t.Helper()
	return newAlgorithm[kneeAlg](t, r4c.Knee, cfg)
}

// kneeModel is the dependency of the closed-loop tests: a knee of c calls and a no-load latency
// of s. Up to c calls in flight each takes s; above, they share the dependency and each takes
// s*n/c (processor sharing). demand is the concurrency the offered load would take without a
// limit.
type kneeModel struct {
	c      float64
	s      time.Duration
	demand float64
}

// depWindow returns the window a dependency of knee c and no-load latency s gives under a limit
// of limit and a demand of demand calls in flight, ending at kneeEpoch + k seconds: N = min(limit,
// demand) calls in flight, each taking s*max(1, N/c); as many samples as they complete in the
// window of 1s; the calls above the limit rejected at the same rate; MaxInFlight N rounded up.
func depWindow(limit int, c float64, s time.Duration, demand float64, k int) r4c.WindowSummary {
	n := min(float64(limit), demand)
	lat := float64(s) * max(1, n/c)
	return r4c.WindowSummary{
		AvgLatency:  time.Duration(lat),
		MaxInFlight: int(math.Ceil(n)),
		Samples:     int(n / lat * float64(time.Second)),
		Rejected:    int(max(0, demand-float64(limit)) / lat * float64(time.Second)),
		Duration:    time.Second,
		End:         kneeEpoch.Add(time.Duration(k) * time.Second),
	}
}

// kneeRun feeds windows to a Knee on consecutive seconds of the grid.
type kneeRun struct {
	alg    kneeAlg
	k      int           // windows fed so far
	offset time.Duration // window k ends at kneeEpoch + offset + k seconds
}

func newKneeRun(t *testing.T, cfg r4c.AdaptiveLimitConfig) *kneeRun {
	t.Helper()
	return &kneeRun{alg: newKneeAlg(t, cfg)}
}

// feed applies w as the next window (it sets Duration and End) and returns the new limit.
func (r *kneeRun) feed(w r4c.WindowSummary) int {
	r.k++
	w.Duration, w.End = time.Second, kneeEpoch.Add(r.offset+time.Duration(r.k)*time.Second)
	return r.alg.Update(w)
}

// bound feeds a window in which the limit binds: every slot in use all window long (as many
// samples as that gives at latency lat), and one call in two rejected: 2x overload, under
// which the queue a limit needs to keep its workers busy between random arrivals is within
// the tolerance (see TestKneeRandomArrivalsWidenTheTolerance).
func (r *kneeRun) bound(lat time.Duration) int { return r.dropping(lat, 0) }

// light feeds a window of light load: inFlight calls in flight all window long, none rejected.
func (r *kneeRun) light(lat time.Duration, inFlight int) int {
	return r.feed(r4c.WindowSummary{AvgLatency: lat, MaxInFlight: inFlight, Samples: int(float64(inFlight) / lat.Seconds())})
}

// dropping feeds a binding window of latency lat (as bound does) in which a share drops of the
// samples are drops.
func (r *kneeRun) dropping(lat time.Duration, drops float64) int {
	l := r.alg.Limit()
	n := int(float64(l) / lat.Seconds())
	return r.feed(r4c.WindowSummary{AvgLatency: lat, MaxInFlight: l, Samples: n, Drops: int(math.Round(drops * float64(n))), Dropped: drops > 0, Rejected: n})
}

// lightDrops feeds a window of light load at base (10 calls in flight, none rejected) in which
// a share of the samples are drops.
func (r *kneeRun) lightDrops(share float64) int {
	n := int(10 / kneeBase.Seconds())
	return r.feed(r4c.WindowSummary{AvgLatency: kneeBase, MaxInFlight: 10, Samples: n, Drops: int(share * float64(n)), Dropped: share > 0})
}

// model feeds the window of m under the current limit.
func (r *kneeRun) model(m kneeModel) int {
	w := depWindow(r.alg.Limit(), m.c, m.s, m.demand, r.k+1)
	return r.feed(w)
}

func scale(d time.Duration, f float64) time.Duration { return time.Duration(float64(d) * f) }

func TestKneeFirstWindowSetsBaseThenDoublesUntilAQueue(t *testing.T) {
	r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200})
	if r.alg.NoLoadLatency() != 0 || r.alg.Limit() != 20 || r.alg.Estimate() != 20 {
		t.Fatalf("before any window: base %v, limit %d, estimate %v", r.alg.NoLoadLatency(), r.alg.Limit(), r.alg.Estimate())
	}
	// Until a queue has been seen, each window at base while the limit binds doubles it
	// (a start below the knee reaches it in a few windows), up to MaxLimit.
	for i, want := range []float64{40, 80, 160, 200, 200} {
		r.bound(kneeBase)
		if got := r.alg.Estimate(); got != want {
			t.Fatalf("window %d at base, binding: estimate %v, want %v", i+1, got, want)
		}
	}
	if got := r.alg.NoLoadLatency(); got != kneeBase {
		t.Fatalf("base %v, want the first window's latency %v", got, kneeBase)
	}
}

func TestKneeAfterAQueueGrowsByProbesThenFasterUpToTheLastQueue(t *testing.T) {
	r := kneeAtBase(t, r4c.AdaptiveLimitConfig{})
	queued := r.alg.Estimate()
	r.bound(scale(kneeBase, 3)) // a deep queue: cut by half, and the startup is over
	cut := r.alg.Estimate()
	if cut != queued/2 {
		t.Fatalf("estimate %v after latency 3 times base, want %v", cut, queued/2)
	}
	// Latency back at base: the first window steps up by a constant probe; then growth is
	// 25%, then 50% (doubling each window at base, up to a doubling of the limit), until the limit nears the one
	// at which the queue was seen (0.85 of it): from there, probes again (no drain has
	// confirmed base yet, so clear windows do not mean the knee has moved).
	r.bound(kneeBase)
	if got := r.alg.Estimate(); math.Abs(got-(cut+kneeProbeUp)) > 1e-9 {
		t.Fatalf("first window at base after a queue: estimate %v, want %v", got, cut+kneeProbeUp)
	}
	for i, want := range []float64{1.25, 1.5} {
		prev := r.alg.Estimate()
		r.bound(kneeBase)
		if g := r.alg.Estimate() / prev; math.Abs(g-want) > 1e-9 {
			t.Fatalf("window %d at base: growth x%v, want x%v", i+2, g, want)
		}
	}
	for range 10 {
		prev := r.alg.Estimate()
		r.bound(kneeBase)
		if prev > 0.85*queued && math.Abs(r.alg.Estimate()-(prev+kneeProbeUp)) > 1e-9 {
			t.Fatalf("near the last queue (%v): estimate %v -> %v, want a probe of %v", queued, prev, r.alg.Estimate(), kneeProbeUp)
		}
	}
}

// kneeAtBase returns a run whose first window saw no calls (a service started before its
// traffic) and whose second, binding at kneeBase, has set base; the startup has doubled the
// limit (from InitialLimit, 20 by default). Base is not measured on the first window, which
// reads short (see TestKneeSecondWindowCorrectsAFirstBaseReadShort), so the windows that
// follow test the other rules alone.
func kneeAtBase(t *testing.T, cfg r4c.AdaptiveLimitConfig) *kneeRun {
	t.Helper()
	if cfg.InitialLimit == 0 {
		cfg.InitialLimit = 20
	}
	if cfg.MaxLimit == 0 {
		cfg.MaxLimit = 200
	}
	r := newKneeRun(t, cfg)
	r.feed(r4c.WindowSummary{})
	r.bound(kneeBase)
	if r.alg.NoLoadLatency() != kneeBase || r.alg.Estimate() != float64(2*cfg.InitialLimit) {
		t.Fatalf("base %v, estimate %v after the first window at base", r.alg.NoLoadLatency(), r.alg.Estimate())
	}
	return r
}

func TestKneeLatencyAboveToleranceCutsInProportionAtMostByHalf(t *testing.T) {
	for _, ratio := range []float64{1.4, 1.6, 2, 3, 10} {
		r := kneeAtBase(t, r4c.AdaptiveLimitConfig{})
		before := r.alg.Estimate()
		r.bound(scale(kneeBase, ratio))
		got := r.alg.Estimate() / before
		// A cut in proportion brings latency back to within the tolerance: to before/ratio
		// times at most 1+tolerance, and never below half.
		want := max(0.5, 1/ratio)
		if got < want-1e-9 || got > max(0.5, (1+kneeMaxTol)/ratio) {
			t.Errorf("latency %.1f times base: estimate %v -> %v (x%.3f), want x%.3f to x%.3f", ratio, before, r.alg.Estimate(), got, want, max(0.5, (1+kneeMaxTol)/ratio))
		}
		if ratio >= 3 && got != 0.5 {
			t.Errorf("latency %.1f times base: x%.3f, want the cut capped at half", ratio, got)
		}
	}
}

func TestKneeLatencyWithinToleranceHoldsTheLimit(t *testing.T) {
	r := kneeAtBase(t, r4c.AdaptiveLimitConfig{})
	before := r.alg.Estimate()
	for i := range 6 { // windows 3 to 8: no drain
		r.bound(scale(kneeBase, kneeHold))
		if r.alg.Estimate() != before {
			t.Fatalf("window %d at %.2f times base: estimate %v, want %v held", i+3, kneeHold, r.alg.Estimate(), before)
		}
	}
	if r.alg.NoLoadLatency() != kneeBase {
		t.Fatalf("base moved to %v", r.alg.NoLoadLatency())
	}
}

func TestKneeDropsAboveTheNoLoadShareCutTheLimit(t *testing.T) {
	// Base (and its share of drops, none) from the first window. A window at base whose drops
	// stay within 5 points of that share does not cut; more does, by the excess, at most half.
	for _, tc := range []struct {
		drops float64
		want  float64 // the factor applied to the estimate; 0: no cut
	}{
		{0.04, 0}, {0.10, 0.9}, {0.30, 0.7}, {0.9, 0.5},
	} {
		r := kneeAtBase(t, r4c.AdaptiveLimitConfig{})
		before := r.alg.Estimate()
		r.dropping(kneeBase, tc.drops)
		got := r.alg.Estimate() / before
		if tc.want == 0 && got < 1 || tc.want != 0 && math.Abs(got-tc.want) > 0.01 {
			t.Errorf("%.0f%% drops at base: estimate x%.3f, want x%v (0: no cut)", 100*tc.drops, got, tc.want)
		}
	}
	// With drops already without load (4%), the share seen without load is the reference.
	for _, tc := range []struct {
		drops float64
		cut   bool
	}{{0.06, false}, {0.15, true}} {
		r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20})
		r.dropping(kneeBase, 0.04)
		before := r.alg.Estimate()
		r.dropping(kneeBase, tc.drops)
		if cut := r.alg.Estimate() < before; cut != tc.cut {
			t.Errorf("%.0f%% drops after 4%% without load: estimate %v -> %v, want a cut: %v", 100*tc.drops, before, r.alg.Estimate(), tc.cut)
		}
	}
}

func TestKneeDropsCutEvenBeforeBase(t *testing.T) {
	r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20})
	r.dropping(kneeBase, 0.5)
	if r.alg.Estimate() != 10 {
		t.Fatalf("estimate %v after a first window with half its calls dropped, want 10", r.alg.Estimate())
	}
}

// Drops that do not follow a cut down are the dependency's own: calls whose work outlasts the
// timeout drop the same share at any limit (a timeout at twice the mean of exponential calls
// drops 13.5% of them). The cuts they caused are undone, and their share becomes the one seen
// without load, which later windows are held to. Drops that fall with the cut are a queue's,
// and the cut stays.
func TestKneeDropsThatDoNotFollowACutAreTheDependencysOwn(t *testing.T) {
	const own = 0.135
	r := kneeAtBase(t, r4c.AdaptiveLimitConfig{})
	before := r.alg.Estimate()
	r.dropping(kneeBase, own)
	if got := r.alg.Estimate(); got >= before {
		t.Fatalf("a first window with %.1f%% drops at base: estimate %v -> %v, want a cut", 100*own, before, got)
	}
	undone := false
	for i := 0; i < 4 && !undone; i++ {
		r.dropping(kneeBase, own)
		undone = r.alg.Estimate() >= before
	}
	if !undone {
		t.Fatalf("four more windows with the same share of drops, latency at base: estimate %v, want the cuts undone (%v)", r.alg.Estimate(), before)
	}
	for i := range 10 {
		r.dropping(kneeBase, own)
		if got := r.alg.Estimate(); got < before {
			t.Fatalf("window %d with the dependency's own share of drops, binding: estimate %v, want %v or more", i+1, got, before)
		}
	}

	// A queue's drops fall with the cut: the cut stays.
	r = kneeAtBase(t, r4c.AdaptiveLimitConfig{})
	r.dropping(kneeBase, 0.3)
	cut := r.alg.Estimate()
	r.dropping(kneeBase, 0.02)
	if got := r.alg.Estimate(); got > cut+kneeProbeUp {
		t.Fatalf("drops from 30%% to 2%% after a cut to %v: estimate %v, want the cut kept", cut, got)
	}
}

// Light load from a cold start (10 calls in flight on a knee of 40) with the dependency's own
// drops, 13.5% of the calls: the first windows may cut the limit below the calls in flight,
// but once the cuts are seen not to lower the share, no later window rejects any call. Before,
// the limit fell to 4 before base was measured, and windows of light load that counted their
// drops as none wore down the share learned, until a window with as many cut the limit again.
func TestKneeLightLoadWithTheDependencysOwnDropsIsNotRejected(t *testing.T) {
	const demand = 10
	r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200})
	for i := range 60 {
		w := depWindow(r.alg.Limit(), 40, kneeBase, demand, r.k+1)
		w.Drops = int(math.Round(0.135 * float64(w.Samples)))
		w.Dropped = true
		if i >= 10 && w.Rejected > 0 {
			t.Fatalf("window %d of light load with the dependency's own drops: limit %d, below the %d calls in flight", i+1, r.alg.Limit(), demand)
		}
		r.feed(w)
	}
}

func TestKneeLightLoadKeepsRoomAboveTheCallsInFlight(t *testing.T) {
	// No call rejected: the limit does not bind. When the calls in flight reach it, it makes
	// room: 1.25 times the most calls in flight, so that light load is not rejected.
	r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200})
	for _, tc := range []struct {
		inFlight int
		want     float64
	}{
		{20, 25},    // the first window also sets base
		{25, 31.25}, // reached again
		{31, 38.75},
		{10, 38.75}, // far below: the limit stays
		{38, 47.5},
	} {
		r.light(kneeBase, tc.inFlight)
		if got := r.alg.Estimate(); math.Abs(got-tc.want) > 1e-9 {
			t.Fatalf("window %d, %d calls in flight, none rejected: estimate %v, want %v", r.k, tc.inFlight, got, tc.want)
		}
	}
}

// kneeConfirmed returns a run whose base a drain has confirmed: kneeAtBase's two windows, six
// held windows at kneeHold times base (windows 3 to 8, no drain yet), the window ending at 9s,
// which plans a drain, and the drained window (10s), whose latency did not follow the limit
// down. It returns the run and the latency of those windows, which is now base.
func kneeConfirmed(t *testing.T, cfg r4c.AdaptiveLimitConfig) (*kneeRun, time.Duration) {
	t.Helper()
	r := kneeAtBase(t, cfg)
	lat := scale(kneeBase, kneeHold)
	for r.k < 10 {
		r.bound(lat)
	}
	return r, lat
}

// Once a drain has confirmed base, two clear windows in a row near the limit at which the last
// queue was seen mean the knee has moved up: the limit grows fast past that queue.
func TestKneeConfirmedBaseGrowsPastTheLastQueue(t *testing.T) {
	r, lat := kneeConfirmed(t, r4c.AdaptiveLimitConfig{})
	queued := r.alg.Estimate()
	r.bound(scale(lat, 1.5)) // a queue: cut, and the limit remembers where it was seen
	if r.alg.Estimate() >= queued {
		t.Fatalf("latency 1.5 times base: estimate %v, want a cut from %v", r.alg.Estimate(), queued)
	}
	var seen []float64
	for range 5 {
		r.bound(lat)
		seen = append(seen, r.alg.Estimate())
	}
	// A probe near the queue after the first clear window, then the knee has moved: growth
	// of 25%, then 50%, then the limit doubles each window, past the limit of the queue, up
	// to MaxLimit (200).
	for i, want := range []float64{1.25, 1.5, 2, 2} {
		if g := seen[i+1] / seen[i]; math.Abs(g-want) > 1e-9 && seen[i+1] != 200 {
			t.Fatalf("clear window %d at a confirmed base: growth x%.3f, want x%v; estimates %v", i+2, g, want, seen)
		}
	}
	if last := seen[len(seen)-1]; last < 2*queued {
		t.Fatalf("five clear windows after a queue at %v: estimate %v, want past twice that; estimates %v", queued, last, seen)
	}
}

// Near the limit at which the last queue was seen, the limit probes by constant steps: the knee
// is most likely there. Once a drain has confirmed base, the second clear window in a row
// already shows that the knee has moved up (calls got lighter, or capacity grew), and the limit
// grows by 25% in that window; an unconfirmed base (it may be too high) keeps probing.
func TestKneeConfirmedBaseGrowsAtOnceNearTheLastQueue(t *testing.T) {
	for _, confirmed := range []bool{true, false} {
		var r *kneeRun
		lat := kneeBase
		if confirmed {
			r, lat = kneeConfirmed(t, r4c.AdaptiveLimitConfig{})
		} else {
			r = kneeAtBase(t, r4c.AdaptiveLimitConfig{})
		}
		growsAtOnceNearTheLastQueue(t, r, lat, confirmed, fmt.Sprintf("confirmed %v", confirmed))
	}
}

// growsAtOnceNearTheLastQueue feeds r a small queue (latency 1.15 times lat), then two windows
// at lat, and checks the second: it grows the limit by 25% if grows, else by a probe.
func growsAtOnceNearTheLastQueue(t *testing.T, r *kneeRun, lat time.Duration, grows bool, what string) {
	t.Helper()
	queued := r.alg.Estimate()
	r.bound(scale(lat, 1.15)) // a queue: a small cut, and the limit remembers where it was seen
	if cut := r.alg.Estimate(); cut >= queued || cut < 0.85*queued {
		t.Fatalf("%s: latency 1.15 times base: estimate %v, want a small cut from %v", what, cut, queued)
	}
	first := r.bound(lat)
	before := r.alg.Estimate()
	r.bound(lat)
	got, want := r.alg.Estimate(), before+kneeProbeUp
	if grows {
		want = before * 1.25
	}
	if math.Abs(got-want) > 1e-9 {
		t.Fatalf("%s: second clear window near the last queue: estimate %v -> %v, want %v (limit %d after the first)", what, before, got, want, first)
	}
}

// A queue that vanishes under the limit it was seen at means the knee rose past that limit (the
// dependency serves more at once): the first clear window doubles the limit, as the fourth of a
// row would, rather than probing and then growing by 25%. Latency that falls because the limit
// was cut is the cut's answer, and so is a queue read in the window right after a cut (calls
// admitted above the new limit may still be in flight): neither counts.
func TestKneeQueueThatVanishesUnderItsLimitDoublesIt(t *testing.T) {
	for _, c := range []struct {
		what    string
		queue   func(r *kneeRun, held time.Duration) // the windows before the clear one
		doubles bool
	}{
		{"a held queue, then base under the same limit", func(r *kneeRun, held time.Duration) { r.bound(held) }, true},
		{"a queue cut, then base under the lower limit", func(r *kneeRun, held time.Duration) { r.bound(scale(held, 1.5)) }, false},
		{"a queue cut, the window after it still queued, then base", func(r *kneeRun, held time.Duration) {
			r.bound(scale(held, 1.5))
			r.bound(held)
		}, false},
	} {
		r, base := kneeConfirmed(t, r4c.AdaptiveLimitConfig{}) // the drain at 10s found base
		held := scale(base, kneeHold)                          // the upper half of the tolerance: the limit holds
		r.bound(scale(base, 1.5))                              // a queue: a cut ends the startup's doubling
		r.bound(held)                                          // right after the cut: not a queue to compare with
		c.queue(r, held)
		before := r.alg.Estimate()
		r.bound(base)
		after := r.alg.Estimate()
		if c.doubles && math.Abs(after-2*before) > 1e-9 || !c.doubles && math.Abs(after-(before+kneeProbeUp)) > 1e-9 {
			t.Errorf("%s: estimate %v -> %v (x%.3f), want doubled: %v, else a probe of %v", c.what, before, after, after/before, c.doubles, kneeProbeUp)
		}
	}
}

// A queue that vanishes under its limit also puts the last queue behind the knee: near it, an
// unconfirmed base would otherwise probe by a constant step a window (base may be too high, see
// TestKneeConfirmedBaseGrowsAtOnceNearTheLastQueue), and a knee that rose would take many
// windows to reach. Here the limit climbs back past the one that queued, one window there reads
// a little above base (neither clear nor a queue: it ends the row of clear windows), and the
// next is at base: the queue vanished under a limit as high as the one it was seen at.
func TestKneeQueueThatVanishesNearItsLimitForgetsIt(t *testing.T) {
	r := kneeAtBase(t, r4c.AdaptiveLimitConfig{}) // base unconfirmed: no drain yet
	queued := r.alg.Estimate()
	r.bound(scale(kneeBase, 1.3)) // a queue: a cut, and the limit remembers where it was seen
	for i := 0; r.alg.Estimate() < queued; i++ {
		before := r.alg.Estimate()
		r.bound(kneeBase)
		if got := r.alg.Estimate(); i > 0 && math.Abs(got-(before+kneeProbeUp)) > 1e-9 && got < queued {
			t.Fatalf("clear window %d below the last queue, base unconfirmed: estimate %v -> %v, want a probe of %v", i+1, before, got, kneeProbeUp)
		}
	}
	r.bound(scale(kneeBase, 1.04)) // within the tolerance, not clear: ends the row
	before := r.alg.Estimate()
	r.bound(kneeBase)
	if after := r.alg.Estimate(); math.Abs(after-2*before) > 1e-9 {
		t.Fatalf("the queue vanished under its limit: estimate %v -> %v, want doubled, not a probe of %v", before, after, kneeProbeUp)
	}
	doubled := r.alg.Estimate()
	r.bound(kneeBase)
	if after := r.alg.Estimate(); after < 1.25*doubled-1e-9 {
		t.Fatalf("a second clear window after the queue vanished: estimate %v -> %v, want growth of 25%% or more, not a probe", doubled, after)
	}
}

// A growth of the limit that latency did not follow, from a window at base to one at base,
// confirms base as a drain would: the window before was below the knee. Here the startup's
// doubling from 20 to 40 keeps latency at base; after a queue, the second clear window near it
// grows the limit by 25%, as after a drain that found base (see the test above), not by a probe.
func TestKneeGrowthThatLatencyDidNotFollowConfirmsBase(t *testing.T) {
	for _, flat := range []bool{true, false} {
		r := kneeAtBase(t, r4c.AdaptiveLimitConfig{})
		lat := kneeBase
		if !flat {
			lat = scale(kneeBase, 1.04) // within the lower half of the tolerance, but latency followed the doubling by 6%
		}
		r.bound(lat) // the doubling from 20 to 40, read: the limit doubles again, to 80
		growsAtOnceNearTheLastQueue(t, r, kneeBase, flat, fmt.Sprintf("flat %v", flat))
	}
}

// Drops in the window after a growth are the growth's: they cut the limit, but do not make base
// suspect, which would drain twice as deep. Under a limit that did not grow, drops after a
// window at base mean base was measured through a queue.
func TestKneeDropsAfterAGrowthDoNotMakeBaseSuspect(t *testing.T) {
	for _, grew := range []bool{true, false} {
		r := kneeAtBase(t, r4c.AdaptiveLimitConfig{}) // the startup doubled the limit, to 40
		if !grew {
			r.light(kneeBase, 30) // latency at base under light load: the limit stays at 40
		}
		r.dropping(kneeBase, 0.3)
		for r.k < 8 {
			r.bound(scale(kneeBase, kneeHold))
		}
		before := r.alg.Estimate()
		r.bound(scale(kneeBase, kneeHold)) // ends at 9s: the next window drains
		depth, want := 1-r.alg.Estimate()/before, 0.15
		if !grew {
			want = 0.3
		}
		if math.Abs(depth-want) > 1e-9 {
			t.Errorf("drops after a window that grew the limit: %v: the drain lowered the estimate by %.3f, want %v", grew, depth, want)
		}
	}
}

// A small limit tolerates one call of queue at the least: a limit of 5 holds with latency 15%
// above base, where a limit of 40 (10% tolerance) cuts. Between two arrivals a worker would
// otherwise sit idle; and of replicas with unequal shares, the smaller tolerates more, which
// evens them out. (Latency of 1ms: thousands of samples a window, so the window's own spread
// asks for less than 10%.)
func TestKneeSmallLimitToleratesOneCallOfQueue(t *testing.T) {
	for _, tc := range []struct {
		limit int
		cut   bool
	}{{5, false}, {40, true}} {
		r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: tc.limit, MaxLimit: tc.limit})
		for range 3 {
			r.bound(time.Millisecond) // base, and the limit stays at MaxLimit
		}
		before := r.alg.Estimate()
		r.bound(scale(time.Millisecond, 1.15))
		if cut := r.alg.Estimate() < before; cut != tc.cut || before != float64(tc.limit) {
			t.Errorf("limit %d (estimate %v), latency 1.15 times base: estimate %v, want a cut: %v", tc.limit, before, r.alg.Estimate(), tc.cut)
		}
	}
}

func TestKneeLightLoadAtBaseNeverLowersTheLimit(t *testing.T) {
	r, _ := kneeConfirmed(t, r4c.AdaptiveLimitConfig{})
	before := r.alg.Estimate()
	base := r.alg.NoLoadLatency()
	// Forty windows of light load at base, across four drains of the grid: nothing to learn,
	// nothing to drain.
	for range 40 {
		r.light(base, 5)
		if r.alg.Estimate() != before {
			t.Fatalf("window %d of light load (5 calls in flight, limit %v): estimate %v", r.k, before, r.alg.Estimate())
		}
	}
}

func TestKneeDrainUnderAQueueFallsOnTheGridAndTheLimitComesBack(t *testing.T) {
	// Latency in the upper half of the tolerance while the limit binds: a queue that holds the
	// limit, and that a drain can measure. The drain falls in the window that crosses a
	// boundary of the wall clock's 10s grid, whatever the window's number: windows of the first
	// run end at 1s, 2s, ...; those of the second at 6s, 7s, ...
	for _, offset := range []time.Duration{0, 5 * time.Second} {
		r := kneeAtBase(t, r4c.AdaptiveLimitConfig{})
		r.offset = offset
		// kneeAtBase fed its first window at offset 0 (1s): from here on they follow the
		// offset, which only moves them forward.
		held := r.alg.Estimate()
		lat := scale(kneeBase, kneeHold)
		end := func() time.Duration { return r.offset + time.Duration(r.k)*time.Second }
		for end() < 8*time.Second {
			r.bound(lat)
			if r.alg.Estimate() != held {
				t.Fatalf("offset %v: window ending at %v: estimate %v, want %v held", offset, end(), r.alg.Estimate(), held)
			}
		}
		r.bound(lat) // ends at 9s: the next window crosses 10s and drains
		if end() != 9*time.Second {
			t.Fatalf("window ends at %v", end())
		}
		if got, want := r.alg.Estimate(), held*0.85; math.Abs(got-want) > 1e-9 || r.alg.Limit() != int(want) {
			t.Fatalf("offset %v: the window before the grid's boundary set estimate %v (limit %d), want a drain to %v", offset, got, r.alg.Limit(), want)
		}
		r.bound(lat) // the drained window: latency did not follow the limit down
		if got := r.alg.Estimate(); got != held {
			t.Fatalf("offset %v: estimate %v after the drained window, want %v back", offset, got, held)
		}
	}
}

func TestKneeNoDrainWhileLatencyStaysAboutBase(t *testing.T) {
	r := kneeAtBase(t, r4c.AdaptiveLimitConfig{MaxLimit: 1000})
	prev := r.alg.Estimate()
	for range 35 {
		r.bound(scale(kneeBase, 1.02))
		if r.alg.Estimate() < prev {
			t.Fatalf("window %d at base: estimate %v after %v", r.k, r.alg.Estimate(), prev)
		}
		prev = r.alg.Estimate()
	}
	if r.alg.Limit() != 1000 {
		t.Fatalf("limit %d after 35 windows at base, want the maximum 1000", r.alg.Limit())
	}
}

func TestKneeInelasticDrainSetsBaseAndRestoresTheLimit(t *testing.T) {
	r := kneeAtBase(t, r4c.AdaptiveLimitConfig{})
	lat := scale(kneeBase, kneeHold)
	for r.k < 9 {
		r.bound(lat)
	}
	undrained := r.alg.Estimate() / 0.85
	if r.alg.NoLoadLatency() != kneeBase {
		t.Fatalf("base %v before the drain, want %v", r.alg.NoLoadLatency(), kneeBase)
	}
	// The drained window's latency is that of the windows before it: it did not follow the
	// limit down, so it is the no-load latency (heavier calls, not a queue of ours).
	r.bound(lat)
	if got := r.alg.NoLoadLatency(); got < (kneeBase+lat)/2 || got > lat {
		t.Fatalf("base %v after an inelastic drain at %v, want it most of the way from %v to %v", got, lat, kneeBase, lat)
	}
	if got := r.alg.Estimate(); math.Abs(got-undrained) > 1e-9 {
		t.Fatalf("estimate %v after an inelastic drain, want %v back", got, undrained)
	}
	// That latency is now base: the limit grows again.
	before := r.alg.Estimate()
	r.bound(lat)
	r.bound(lat)
	if r.alg.Estimate() <= before {
		t.Fatalf("estimate %v -> %v at the new base", before, r.alg.Estimate())
	}
}

// A drain whose latency fell with it, well below base (by more than the tolerance's lower half),
// shows that base was measured through a queue, and the drained window may still have queued:
// the next boundary of the grid drains again even if latency then looks like base (against a
// base that may still be too high, it would). A drain that found base where it was does not
// make the next one drain while latency is about base.
func TestKneeDrainThatLoweredBaseDrainsAgainAtTheNextBoundary(t *testing.T) {
	for _, lowered := range []bool{true, false} {
		r := kneeAtBase(t, r4c.AdaptiveLimitConfig{}) // base 50ms, limit 40
		held := scale(kneeBase, kneeHold)
		for r.k < 9 {
			r.bound(held) // the upper half of the tolerance: the limit holds, and drains at 10s
		}
		after := held // the drain's latency: as before it (none of it was queue) ...
		if lowered {
			after = scale(held, 0.85) // ... or 15% lower, as the limit: all of it was queue
		}
		for r.k < 18 {
			r.bound(after) // the drain, then windows at the latency it found
		}
		before := r.alg.Estimate()
		r.bound(after) // ends at 19s: plans the window that crosses the boundary at 20s
		drains := r.alg.Estimate() < before
		if drains != lowered {
			t.Errorf("drain at 10s that lowered base: %v: estimate %v -> %v at 19s, want a drain: %v", lowered, before, r.alg.Estimate(), lowered)
		}
	}
}

// Calls that get heavier raise latency while base still has the lighter calls' latency: the
// limit is cut, and the cuts do not lower latency. The drain then finds latency where it was
// before it (no queue) and above base by more than the noise: the cuts answered base's error,
// not a queue. The limit goes up by that error (the drained latency over base), at most back to
// the highest limit since the last drain, rather than staying where the cuts left it.
func TestKneeDrainThatFindsHeavierCallsUndoesTheirCuts(t *testing.T) {
	for _, c := range []struct {
		what   string
		growth float64 // calls heavier by this factor each window from 12s, up to at most
		most   float64 // this factor
	}{
		{"2.5% heavier a window", 1.025, 2},
		{"3% heavier a window", 1.03, 2},
		{"9% heavier at once, within the tolerance: no cut", 1.09, 1.09},
	} {
		r, base := kneeConfirmed(t, r4c.AdaptiveLimitConfig{}) // the drain at 10s found base
		r.bound(base)                                          // the window after the drain
		top := r.alg.Estimate()
		lat := base
		for r.k < 19 {
			lat = min(scale(lat, c.growth), scale(base, c.most))
			r.bound(lat)
		}
		cut, expected := r.alg.Estimate()/0.85, r.alg.NoLoadLatency() // the drain planned at 19s
		r.bound(lat)                                                  // the drain: latency as before it
		want := min(top, cut*float64(lat)/float64(expected))
		if got := r.alg.Estimate(); math.Abs(got-want) > 1e-6 {
			t.Errorf("calls %s: after the drain (latency %v, base was %v), estimate %v, want %v (cuts took it from %v to %v)", c.what, lat, expected, got, want, top, cut)
		}
	}
}

// A drain whose latency fell by a quarter to half of it crossed the knee: its window ran
// mostly below the knee, and its latency is a measurement of base on either side of it. Taking
// only those below base let base drift low, drain after drain.
func TestKneeDrainAcrossTheKneeMeasuresBaseEitherWay(t *testing.T) {
	for _, e := range []float64{0.3, 0.49} { // the drain's elasticity: latency over the window before it, in log units of the drain
		r, base := kneeConfirmed(t, r4c.AdaptiveLimitConfig{}) // the drain at 10s found base
		held := scale(base, kneeHold)                          // the upper half of the tolerance: the limit holds, and drains at 20s
		for r.k < 19 {
			r.bound(held)
		}
		before, restored := r.alg.NoLoadLatency(), r.alg.Estimate()/0.85
		drained := scale(held, math.Pow(0.85, e))
		r.bound(drained)
		after := r.alg.NoLoadLatency()
		if (after-before)*(drained-before) <= 0 || math.Abs(float64(after-before)) >= math.Abs(float64(drained-before)) {
			t.Errorf("drain of elasticity %v at %v, base %v: base after it %v, want it moved towards the drain's latency", e, drained, before, after)
		}
		if got := r.alg.Estimate(); math.Abs(got-restored) > 1e-9 {
			t.Errorf("drain of elasticity %v: estimate %v after it, want %v restored", e, got, restored)
		}
	}
}

func TestKneeElasticDrainLowersBaseAndKeepsTheLowerLimit(t *testing.T) {
	// A dependency of knee 10 under a limit of 20: the first window queues (twice the no-load
	// latency of 50ms), and base starts too high, at 100ms. The limit creeps up into the
	// tolerance and holds there until the drain of the grid, in which latency falls with the
	// limit: a queue of ours. The drained window's latency becomes base, and the limit stays
	// at the drained value.
	m := kneeModel{c: 10, s: kneeBase, demand: 60}
	r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200})
	for r.k < 9 {
		r.model(m)
	}
	if got := r.alg.NoLoadLatency(); got != 2*kneeBase {
		t.Fatalf("base %v before the drain, want %v (measured through the queue)", got, 2*kneeBase)
	}
	drained := r.alg.Estimate()
	w := depWindow(r.alg.Limit(), m.c, m.s, m.demand, r.k+1)
	r.model(m)
	if got := r.alg.NoLoadLatency(); got != w.AvgLatency || got >= 2*kneeBase {
		t.Fatalf("base %v after an elastic drain whose latency was %v, want that latency", got, w.AvgLatency)
	}
	if got := r.alg.Estimate(); got != drained {
		t.Fatalf("estimate %v after an elastic drain, want %v kept", got, drained)
	}
}

func TestKneeDrainThatCrossesTheKneeAimsAboveIt(t *testing.T) {
	// Latency fell with the drain, but by less than the drain: part of the drained share was
	// queue, the rest idle slots. With elasticity e the knee is at the drained limit over
	// 0.85^(1-e); the limit goes where a cut aims, the middle of the tolerance above that knee,
	// not back to where it queued, nor down to the drained limit, which is below the knee. A
	// drain at least as elastic as the limit (e >= 1) keeps the drained limit (see
	// TestKneeElasticDrainLowersBaseAndKeepsTheLowerLimit).
	for _, e := range []float64{0.6, 0.75, 0.9, 1.2} {
		r := kneeAtBase(t, r4c.AdaptiveLimitConfig{})
		lat := scale(kneeBase, kneeHold)
		for r.k < 9 {
			r.bound(lat)
		}
		undrained := r.alg.Estimate() / 0.85
		drained := r.alg.Estimate()
		r.bound(scale(lat, math.Pow(0.85, e)))
		got := r.alg.Estimate()
		if e >= 1 {
			if got != drained {
				t.Fatalf("e %v: estimate %v, want the drained %v kept", e, got, drained)
			}
			continue
		}
		knee := drained / math.Pow(0.85, 1-e)
		if got < knee*1.05 || got > knee*1.08 || got >= undrained {
			t.Fatalf("e %v: estimate %v after the drain from %v to %v, want 5%% to 8%% above the knee %v", e, got, undrained, drained, knee)
		}
	}
}

func TestKneeHeavierCallsMoveBaseAfterTwoCutsThatDoNotLowerLatency(t *testing.T) {
	// Calls become 30% heavier: latency rises although nothing queues (the limit, 20, is below
	// the knee, 40). Cuts do not lower it. After two such cuts (the second one two windows
	// later: Knee holds one window in case latency lags), that latency is base and the limit
	// stops falling. The dependency
	// is fast (5ms) so that a window holds enough samples (4000) for its latency's response to
	// a cut to stand out of the noise.
	m := kneeModel{c: 40, s: 5 * time.Millisecond, demand: 60}
	r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200})
	r.model(m)
	m.s = scale(m.s, 1.3)
	var cuts []float64
	prev := r.alg.Estimate()
	for range 4 {
		r.model(m)
		if e := r.alg.Estimate(); e < prev {
			cuts = append(cuts, e)
		}
		prev = r.alg.Estimate()
	}
	if len(cuts) != 2 {
		t.Fatalf("cuts to %v in the four windows after calls became heavier, want two", cuts)
	}
	if got := r.alg.NoLoadLatency(); math.Abs(float64(got)/float64(m.s)-1) > 0.02 {
		t.Fatalf("base %v after two cuts that did not lower latency, want about %v", got, m.s)
	}
	// From here the limit grows back, and is cut again only when it passes the knee: a
	// queue of ours.
	for r.alg.Limit() <= int(m.c) {
		if r.k > 30 {
			t.Fatalf("limit %d after %d windows: it did not grow back to the knee %v", r.alg.Limit(), r.k, m.c)
		}
		r.model(m)
		if r.alg.Estimate() < prev {
			t.Fatalf("window %d: estimate %v after %v: a cut below the knee, although base is the latency", r.k, r.alg.Estimate(), prev)
		}
		prev = r.alg.Estimate()
	}
}

func TestKneeIsDeterministicAndUpdateAllocatesNothing(t *testing.T) {
	cfg := r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200}
	a, b := newKneeAlg(t, cfg), newKneeAlg(t, cfg)
	// Windows of a noisy dependency whose knee steps between 20, 40 and 60 every 200 windows and
	// whose no-load latency wanders between 40 and 60ms, with bursts of drops and windows of
	// light load, fed to both.
	state := uint64(7)
	next := func(n uint64) uint64 {
		state = state*6364136223846793005 + 1442695040888963407
		return (state >> 33) % n
	}
	changes, bases := 0, map[time.Duration]bool{}
	s := 50 * time.Millisecond
	for k := 1; k <= 3000; k++ {
		s = min(60*time.Millisecond, max(40*time.Millisecond, s+time.Duration(int(next(3))-1)*time.Millisecond))
		knee := float64(20 * (1 + (k/200)%3))
		demand := 90.0
		if next(10) == 0 {
			demand = 10 // light load
		}
		w := depWindow(a.Limit(), knee, s, demand, k)
		w.AvgLatency = scale(w.AvgLatency, 0.95+float64(next(101))/1000)
		if next(20) == 0 {
			w.Drops = w.Samples / 5
			w.Dropped = true
		}
		before := a.Limit()
		la, lb := a.Update(w), b.Update(w)
		if la != lb || math.Float64bits(a.Estimate()) != math.Float64bits(b.Estimate()) || a.NoLoadLatency() != b.NoLoadLatency() {
			t.Fatalf("window %d: %d %v %v vs %d %v %v", k, la, a.Estimate(), a.NoLoadLatency(), lb, b.Estimate(), b.NoLoadLatency())
		}
		if la != before {
			changes++
		}
		bases[a.NoLoadLatency()] = true
	}
	// The stream must exercise the rules: the limit changes in one window in five at the least.
	t.Logf("%d limit changes and %d values of base in 3000 windows", changes, len(bases))
	if changes < 600 || len(bases) < 200 {
		t.Fatalf("%d limit changes and %d values of base in 3000 windows: the test proves little", changes, len(bases))
	}

	windows := make([]r4c.WindowSummary, 64)
	for i := range windows {
		windows[i] = depWindow(20+i%30, 40, 50*time.Millisecond, 60, 3001+i)
	}
	i := 0
	if allocs := testing.AllocsPerRun(1000, func() {
		w := windows[i%len(windows)]
		w.End = kneeEpoch.Add(time.Duration(3001+i) * time.Second)
		a.Update(w)
		i++
	}); allocs != 0 {
		t.Fatalf("Update allocates %v times", allocs)
	}
}

// kneeClosedLoop runs a Knee (InitialLimit 20, MaxLimit 200) against the dependency model
// for windows windows, the dependency of window k (from 1) being dep(k). It returns the run
// and the limit after each window: limits[k-1] after window k.
func kneeClosedLoop(t *testing.T, windows int, dep func(k int) kneeModel) (*kneeRun, []int) {
	t.Helper()
	r, limits, _ := kneeModelRun(t, 20, windows, dep)
	return r, limits
}

// kneeModelRun runs a Knee (InitialLimit initial, MaxLimit 200) against the dependency model for
// windows windows, the dependency of window k (from 1) being dep(k). It returns the run, and the
// limit and the estimate after each window (limits[k-1] and estimates[k-1] after window k).
func kneeModelRun(t *testing.T, initial, windows int, dep func(k int) kneeModel) (r *kneeRun, limits []int, estimates []float64) {
	t.Helper()
	r = newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: initial, MaxLimit: 200})
	for k := 1; k <= windows; k++ {
		limits = append(limits, r.model(dep(k)))
		estimates = append(estimates, r.alg.Estimate())
	}
	return r, limits, estimates
}

// kneeSteps is the dependency of the step tests: 50ms calls, a demand of 60 calls in flight, and
// a knee of 40 for windows 1 to 60, 10 for windows 61 to 100, and 60 from window 101.
func kneeSteps(k int) kneeModel {
	m := kneeModel{c: 40, s: kneeBase, demand: 60}
	switch {
	case k > 100:
		m.c = 60
	case k > 60:
		m.c = 10
	}
	return m
}

func median(v []int) int {
	s := append([]int(nil), v...)
	for i := range s { // insertion sort: a few dozen values
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

func TestKneeClosedLoopSettlesAtTheKnee(t *testing.T) {
	_, limits := kneeClosedLoop(t, 60, kneeSteps)
	if l := limits[59]; l < 36 || l > 60 {
		t.Fatalf("limit %d after 60 windows against a knee of 40, want [36, 60]; limits %v", l, limits)
	}
	if m := median(limits[30:]); m < 36 || m > 60 {
		t.Fatalf("median limit %d over windows 31 to 60, want [36, 60]; limits %v", m, limits)
	}
}

func TestKneeClosedLoopFollowsAKneeThatDrops(t *testing.T) {
	_, limits := kneeClosedLoop(t, 100, kneeSteps)
	// Windows 61 to 100: knee 10.
	fallsBelow(t, limits[60:], 15, 15, "the knee fell from 40 to 10 at window 61", "windows")
}

// fallsBelow fails t unless limits (one a step: a window, a second) go below bound within the
// first steps and never come back up to it.
func fallsBelow(t *testing.T, limits []int, bound, within int, what, steps string) {
	t.Helper()
	first := -1
	for i, l := range limits {
		if l < bound {
			first = i + 1
			break
		}
	}
	if first < 0 || first > within {
		t.Fatalf("%s: the limit went below %d after %d %s, want %d at most; limits %v", what, bound, first, steps, within, limits)
	}
	for i, l := range limits[first:] {
		if l >= bound {
			t.Fatalf("%s: %d %s later, limit %d back at %d or above; limits %v", what, first+i+1, steps, l, bound, limits)
		}
	}
}

func TestKneeClosedLoopFollowsAKneeThatRises(t *testing.T) {
	_, limits := kneeClosedLoop(t, 120, kneeSteps)
	phase := limits[100:] // windows 101 to 120: knee 60
	for _, l := range phase {
		if l >= 54 {
			return
		}
	}
	t.Fatalf("the knee rose from 10 to 60 at window 101: the limit did not reach 54 in 20 windows; limits %v", phase)
}

func TestKneeClosedLoopKeepsTheLimitWhileCallsGetHeavier(t *testing.T) {
	// The no-load latency triples from 50ms to 150ms over 120 windows; the knee stays at 40 and
	// the demand at 60. Latency rises although nothing queues: the limit must not fall for it.
	heavier := func(k int) kneeModel {
		return kneeModel{c: 40, s: scale(kneeBase, math.Pow(3, float64(k-1)/119)), demand: 60}
	}
	r, limits := kneeClosedLoop(t, 120, heavier)
	low, high := 0, 0
	for _, l := range limits[20:] {
		if l <= 32 {
			low++
		}
		if l > 60 {
			high++
		}
	}
	if low > 10 || high > 0 {
		t.Fatalf("windows 21 to 120: %d with a limit at or below 32 (0.8 times the knee), want 10 at most; %d above 60; limits %v", low, high, limits)
	}
	if got, want := r.alg.NoLoadLatency(), heavier(120).s; math.Abs(float64(got)/float64(want)-1) > 0.1 {
		t.Fatalf("base %v after 120 windows, want within 10%% of the no-load latency %v", got, want)
	}
}

// The calls that end in the first windows after a start are the short ones: base is first
// measured on a window that starts three latencies or more after the start, when the calls
// begun with the first window have about all ended, or once the windows so far span ten
// latencies: calls of 100ms on the first window (it spans ten), of 400ms on the third (it starts
// at 2s), of 800ms on the fourth (3s).
func TestKneeFirstMeasurementWaitsUntilLongCallsCanEnd(t *testing.T) {
	for _, c := range []struct {
		lat   time.Duration
		first int // the window that measures base
	}{{100 * time.Millisecond, 1}, {400 * time.Millisecond, 3}, {800 * time.Millisecond, 4}} {
		r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200})
		for i := 1; i < c.first; i++ {
			r.bound(c.lat)
			if r.alg.NoLoadLatency() != 0 || r.alg.Estimate() != 20 {
				t.Fatalf("after %ds of calls of %v: base %v, estimate %v; want no base yet and the limit kept",
					i, c.lat, r.alg.NoLoadLatency(), r.alg.Estimate())
			}
		}
		r.bound(c.lat)
		if r.alg.NoLoadLatency() != c.lat {
			t.Fatalf("after %ds of calls of %v: base %v, want %v", c.first, c.lat, r.alg.NoLoadLatency(), c.lat)
		}
	}
}

// kneeWithNoise returns a run with base 50ms and a limit of 50 whose spread of latency has been
// measured once: a first window of light load that reaches the limit of 40 (base, and room
// above it: 50), then three like windows of light load, whose spread of 0, averaged with the
// prior of 1, gives 0.5 a call.
func kneeWithNoise(t *testing.T) *kneeRun {
	t.Helper()
	r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 40, MaxLimit: 200})
	r.light(kneeBase, 40)
	for range 3 {
		r.light(kneeBase, 10)
	}
	if r.alg.NoLoadLatency() != kneeBase || r.alg.Estimate() != 50 {
		t.Fatalf("base %v, estimate %v after three windows of light load", r.alg.NoLoadLatency(), r.alg.Estimate())
	}
	return r
}

// A window too short to tell a queue from noise (20 samples of a spread of 0.5: its mean
// varies by 11%) is pooled with the next, and the rules run on the two together.
func TestKneePoolsWindowsTooShortToTellAQueueFromNoise(t *testing.T) {
	r := kneeWithNoise(t)
	short := func(lat time.Duration) int {
		return r.feed(r4c.WindowSummary{AvgLatency: lat, MaxInFlight: 50, Samples: 20, Rejected: 10})
	}
	short(scale(kneeBase, 1.35))
	if r.alg.Estimate() != 50 {
		t.Fatalf("a short window at 1.35 times base: estimate %v, want 50 kept until the next", r.alg.Estimate())
	}
	// Pooled: 40 samples vary by 8%, so 1.35 times base is a queue: a cut.
	short(scale(kneeBase, 1.35))
	if got := r.alg.Estimate(); got >= 50 || got < 25 {
		t.Fatalf("two short windows at 1.35 times base: estimate %v, want a cut from 50", got)
	}

	// A short window far above base is a queue at once.
	r = kneeWithNoise(t)
	short(scale(kneeBase, 3))
	if got := r.alg.Estimate(); got != 25 {
		t.Fatalf("a short window at 3 times base: estimate %v, want 25 (cut by half at once)", got)
	}
	// And so is one whose drops are far above base's share.
	r = kneeWithNoise(t)
	r.feed(r4c.WindowSummary{AvgLatency: kneeBase, MaxInFlight: 50, Samples: 20, Drops: 12, Dropped: true, Rejected: 10})
	if got := r.alg.Estimate(); got != 25 {
		t.Fatalf("a short window with 60%% drops: estimate %v, want 20", got)
	}
}

// Under a limit that does not bind and latency at base, a few more drops than usual (the
// dependency's own calls that outlast the timeout) cut the limit only when the next window has
// them too; a window without them forgets the first.
func TestKneeFewExtraDropsUnderLightLoadCountTwiceInARow(t *testing.T) {
	r := kneeWithNoise(t)
	r.lightDrops(0.12)
	r.lightDrops(0)
	r.lightDrops(0.12)
	if r.alg.Estimate() != 50 {
		t.Fatalf("12%% drops in two windows apart, under light load: estimate %v, want 50 kept", r.alg.Estimate())
	}
	r.lightDrops(0.12)
	if r.alg.Estimate() >= 50 {
		t.Fatalf("12%% drops in two windows in a row, under light load: estimate %v, want a cut", r.alg.Estimate())
	}
	// Many drops count at once.
	r = kneeWithNoise(t)
	r.lightDrops(0.3)
	if r.alg.Estimate() >= 50 {
		t.Fatalf("30%% drops under light load: estimate %v, want a cut at once", r.alg.Estimate())
	}
}

// Before base is measured, a few more drops than chance allows under a limit that does not bind
// count only when the next window has them too: with a slow dependency under light load, a
// window of 40 calls may have 7 that outlast the timeout. The second window counts them when a
// queue is building: its latency rose (here by 20%).
func TestKneeFewExtraDropsBeforeBaseCountTwiceInARow(t *testing.T) {
	r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200})
	r.lightDrops(0.12)
	r.lightDrops(0)
	r.lightDrops(0.12)
	if r.alg.NoLoadLatency() != 0 || r.alg.Estimate() != 20 {
		t.Fatalf("12%% drops in two windows apart, under light load, before base: base %v, estimate %v, want none and 20 kept",
			r.alg.NoLoadLatency(), r.alg.Estimate())
	}
	n := int(10 / kneeBase.Seconds())
	r.feed(r4c.WindowSummary{AvgLatency: scale(kneeBase, 1.2), MaxInFlight: 12, Samples: n, Drops: int(0.12 * float64(n)), Dropped: true})
	if r.alg.Estimate() >= 20 {
		t.Fatalf("12%% drops in two windows in a row, under light load, before base, latency rising by 20%%: estimate %v, want a cut", r.alg.Estimate())
	}
}

// Before base is measured, two windows of light load in a row with the same share of drops, and
// latency and the calls in flight steady: no queue builds, and the drops are the dependency's
// own (calls that outlast the timeout). Nothing is cut or tested; their share becomes the share
// without load, so later windows with as many are not cut either. Before, the second window cut
// the limit by the excess and the third tested the cut at half the calls in flight: 1.4% of a
// light load's calls rejected in its first seconds.
func TestKneeSteadyDropsFromTheStartAreTheDependencysOwn(t *testing.T) {
	r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200})
	for i := range 6 {
		r.lightDrops(0.135)
		if got := r.alg.Estimate(); got < 20 {
			t.Fatalf("window %d of light load with 13.5%% steady drops from the start: estimate %v, want no cut below 20", i+1, got)
		}
	}
}

// A window of fewer than twenty calls under a limit that does not bind says little by its drops,
// however many: with a very slow dependency under light load (700ms exponential calls, a timeout
// of three times that), 4 of 10 calls timing out by chance cut the limit from 20 to 10, ended the
// startup, and the drain that followed, from the two calls then in flight, rejected most calls of
// the light load for a minute. They count when the next window has them too.
func TestKneeDropsOfAFewCallsUnderLightLoadCountTwiceInARow(t *testing.T) {
	few := func(r *kneeRun, drops int) {
		r.feed(r4c.WindowSummary{AvgLatency: kneeBase, MaxInFlight: 6, Samples: 10, Drops: drops, Dropped: drops > 0})
	}
	for _, tc := range []struct {
		what string
		r    *kneeRun
		at   float64 // the estimate before
	}{
		{"before base", newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200}), 20},
		{"at base", kneeWithNoise(t), 50},
	} {
		few(tc.r, 4)
		few(tc.r, 0)
		few(tc.r, 4)
		if got := tc.r.alg.Estimate(); got != tc.at {
			t.Fatalf("%s: 4 of 10 calls dropped in two windows apart, under light load: estimate %v, want %v kept", tc.what, got, tc.at)
		}
		few(tc.r, 4)
		if got := tc.r.alg.Estimate(); got >= tc.at {
			t.Fatalf("%s: 4 of 10 calls dropped in two windows in a row, under light load: estimate %v, want a cut", tc.what, got)
		}
	}
}

// A window of drops ends a row of clear windows. Counted as clear, it let the growth that follows
// a row double the limit back into the queue every other window, from a base measured through a
// queue, without ever draining.
func TestKneeDropsEndARowOfClearWindows(t *testing.T) {
	r := kneeAtBase(t, r4c.AdaptiveLimitConfig{})
	r.bound(scale(kneeBase, 2)) // a queue: the startup is over
	for range 3 {
		r.bound(kneeBase) // clear windows in a row
	}
	r.dropping(kneeBase, 0.6) // timeouts while latency looks like base: cut by half
	before := r.alg.Estimate()
	r.bound(kneeBase)
	if got := r.alg.Estimate(); got > before+kneeProbeUp+1e-9 {
		t.Fatalf("one clear window after a window of drops: estimate %v -> %v, want at most a probe (+%v)", before, got, kneeProbeUp)
	}
}

// Under a limit that does not bind, one window far over the tolerance is noise, however far
// (a closed loop of 10 clients with exponential service had one at 1.2 times base, and its limit
// fell to 5): the limit comes down by a fifth at most, towards the calls in flight, and is cut to
// them when the queue lasts.
func TestKneeOneSlowWindowOfLightLoadDoesNotCut(t *testing.T) {
	r := kneeWithNoise(t)
	for range 4 {
		r.light(kneeBase, 10)
	}
	r.light(scale(kneeBase, 2), 10)
	if got := r.alg.Estimate(); got < 40 {
		t.Fatalf("one window of light load (10 calls) at twice base: estimate %v, want 40 or more", got)
	}
	for range 2 {
		r.light(scale(kneeBase, 2), 10)
	}
	if got := r.alg.Estimate(); got > 20 {
		t.Fatalf("three windows of light load (10 calls) at twice base: estimate %v, want a cut towards the calls in flight", got)
	}
}

// Under light load before any queue, windows of few samples go on measuring base while their
// latency is within two standard deviations of it, even if their average stays above: a first
// measurement that a lucky window set low (15% here) is corrected, not kept for good (a slow
// dependency's base 15% low cut its limit to half the knee once the load rose).
func TestKneeLightLoadCorrectsALowFirstBase(t *testing.T) {
	r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200})
	r.light(scale(kneeBase, 0.85), 20) // reaches the limit: the first measurement of base
	if got := r.alg.NoLoadLatency(); got != scale(kneeBase, 0.85) {
		t.Fatalf("base %v after the first window, want %v", got, scale(kneeBase, 0.85))
	}
	for range 40 {
		r.light(kneeBase, 2) // 40 samples a window: a spread of 16% of their mean
	}
	if got := r.alg.NoLoadLatency(); math.Abs(float64(got)/float64(kneeBase)-1) > 0.02 {
		t.Fatalf("base %v after 40 windows of light load at %v, want it within 2%%", got, kneeBase)
	}
}

// After an overload, the load falls to light load: latency about base (at it, or 4% over: in the
// lower half of the tolerance, as a light load on a FIFO queue gets), fewer completions, a limit
// that no longer binds but that bursts of calls still reach. The limit keeps its room: it does
// not drain from its calls in flight at the grid's boundary (which would reject the bursts and
// teach nothing: latency at base under a limit that does not bind is the no-load latency). Only
// a load that fell counts: to a third of the calls in flight, or to 77% of the completions (the
// wider set of classes has a fall to 80% of the capacity); with as many completions as before,
// the drain comes.
func TestKneeLightLoadAfterAnOverloadKeepsItsRoom(t *testing.T) {
	for _, tc := range []struct {
		fell  bool
		over  float64 // latency over base under the light load
		share float64 // the calls in flight under the light load, as a share of the limit; 0: four calls
	}{{true, 1, 0}, {true, 1.04, 0}, {true, 1, 0.7}, {false, 1, 0.9}} {
		fell := tc.fell
		// A dependency of knee 10 under a demand of 60 calls: the limit comes down to the
		// knee through drains whose latency follows them (so none confirms base).
		m := kneeModel{c: 10, s: kneeBase, demand: 60}
		r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200})
		for r.k < 35 {
			r.model(m)
		}
		before := r.alg.Limit()
		if before < 9 || before > 13 || r.alg.NoLoadLatency() != kneeBase {
			t.Fatalf("limit %d, base %v after the overload, want about the knee (10) and %v", before, r.alg.NoLoadLatency(), kneeBase)
		}
		least := before
		for r.k < 50 { // windows 36 to 50: the grid's boundary at 40
			inFlight := 4.0 // a third of the calls of the overload
			if tc.share > 0 {
				inFlight = tc.share * float64(r.alg.Limit())
			}
			lat := scale(kneeBase, tc.over)
			burst := min(r.alg.Limit(), 15) // bursts of 15 calls, more than the overload left room for
			r.feed(r4c.WindowSummary{AvgLatency: lat, MaxInFlight: burst, Samples: int(inFlight / lat.Seconds())})
			least = min(least, r.alg.Limit())
		}
		if fell && least < before {
			t.Fatalf("light load after an overload, latency %v times base: the limit fell from %d to %d, want it kept", tc.over, before, least)
		}
		if fell && r.alg.Limit() <= 15 {
			// The queue the overload saw at the limit does not cap the room of light load.
			t.Fatalf("light load after an overload, latency %v times base, bursts of 15 calls: limit %d, want room above them", tc.over, r.alg.Limit())
		}
		if !fell && least >= before {
			t.Fatalf("completions as many as under the overload: the limit stayed at %d or more, want a drain from the calls in flight", least)
		}
	}
}

// Right after the load fell, one window of light load over the middle of the tolerance (but
// within it) does not bring the limit down to the calls in flight: the average of recent windows
// that says the queue lasts is the overload's memory. (A lone limit after an overload once came
// down so from 45 to 29 for 28 calls in flight on average, and rejected bursts for seconds.)
func TestKneeOneSlowWindowAfterTheLoadFellDoesNotCut(t *testing.T) {
	m := kneeModel{c: 10, s: kneeBase, demand: 60}
	r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200})
	for r.k < 35 {
		r.model(m)
	}
	r.bound(scale(kneeBase, 1.09)) // the overload ends with a queue within the tolerance
	light := func(over float64) {
		lat := scale(kneeBase, over)
		r.feed(r4c.WindowSummary{AvgLatency: lat, MaxInFlight: r.alg.Limit(), Samples: int(4 / lat.Seconds())})
	}
	light(1) // the load fell: 4 calls in flight
	before := r.alg.Estimate()
	light(1.08)
	if got := r.alg.Estimate(); got < before {
		t.Fatalf("one window at 1.08 times base right after the load fell: estimate %v -> %v, want it kept", before, got)
	}
}

// Once the load fell, a limit that does not bind watches the grid's boundary rather than drain from
// its calls in flight, even when the window before it reads in the upper half of the tolerance:
// that is noise under light load, not a queue. (A lone limit 47 seconds into light load once
// drained so from 45 to 20, its base never confirmed by a drain, and rejected light load for 15
// seconds while it grew back: 1.4% of the phase's calls.)
func TestKneeOneSlowWindowAfterTheLoadFellDoesNotDrain(t *testing.T) {
	m := kneeModel{c: 10, s: kneeBase, demand: 60}
	r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200})
	for r.k < 35 {
		r.model(m)
	}
	for r.k < 58 {
		r.light(kneeBase, 4) // a third of the calls of the overload
	}
	before := r.alg.Limit()
	r.light(scale(kneeBase, 1.08), 4) // window 59: the next one crosses the grid's boundary at 60
	if got := r.alg.Limit(); got < before {
		t.Fatalf("light load after an overload, a window at 1.08 times base before the grid's boundary: limit %d -> %d, want no drain", before, got)
	}
}

// Once the load fell, a window that the limit watches at the grid's boundary and whose latency
// happens to fall well below base is noise, not other replicas' drains (they watch too, see the
// rule "load fell"): base stays. (A lone limit, a minute into light load, once took such a
// window, 13% under base, as base; every later window then read as a queue, and the limit came
// down from 43 to 19 for about 20 calls in flight; with its drains moved by another change, to
// 9, rejecting about a quarter of the light load for a minute.)
func TestKneeAWatchedWindowAfterTheLoadFellDoesNotMoveBase(t *testing.T) {
	for low := 97; low <= 103; low++ { // the window that falls, around the grid's boundary at 100
		m := kneeModel{c: 10, s: kneeBase, demand: 60}
		r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200})
		for r.k < 30 {
			r.model(m)
		}
		base := r.alg.NoLoadLatency()
		for r.k < 105 {
			over := 1.0
			if r.k+1 == low {
				over = 0.9
			}
			r.light(scale(kneeBase, over), 4) // a third of the calls of the overload
		}
		if got := r.alg.NoLoadLatency(); got != base {
			t.Fatalf("light load after an overload, window %d 10%% under base: base %v -> %v, want it kept", low, base, got)
		}
	}
}

// Under noisy latency (until measured, the spread of exponential service times: a window's mean
// varies by 4% to 5%), a base measured low makes every window read as a queue, and each cut (about
// 10%) is too small to stand out of the noise alone. Cuts that add up past the noise without
// lowering latency are not a queue of ours, as for one large cut: twice, and that latency is base.
// Here the no-load latency is 1.2 times the first measurement. Without the rule the limit falls
// every window until a drain corrects base (the first, here, would be window 10), and for good
// where drains too are noisy.
func TestKneeSmallCutsThatAddUpWithoutLoweringLatencyMoveBase(t *testing.T) {
	r := kneeAtBase(t, r4c.AdaptiveLimitConfig{}) // window 2: base 50ms, limit 20 doubled to 40
	slow := scale(kneeBase, 1.2)
	seen := []float64{r.alg.Estimate()}
	for range 7 { // windows 3 to 9: the drain window 9 would plan does not come, latency being base by then
		prev := r.alg.Estimate()
		r.bound(slow)
		seen = append(seen, r.alg.Estimate())
		if g := math.Log(r.alg.Estimate() / prev); g < -0.15 {
			t.Fatalf("a cut of %.3f (log) in one window, want small ones; estimates %v", g, seen)
		}
	}
	if got := r.alg.NoLoadLatency(); got < scale(kneeBase, 1.1) {
		t.Fatalf("base %v after cuts from 40 to %.1f that did not lower latency (%v), want it moved towards it; estimates %v", got, r.alg.Estimate(), slow, seen)
	}
	if n := len(seen); seen[n-1] < seen[n-2] || seen[n-1] < 20 {
		t.Fatalf("estimates %v: want the cuts stopped above 20 once latency is base", seen)
	}
}

// kneeDrains returns the windows (numbered from 1) that drained, from the estimates after each
// window (estimates[k-1] after window k, so the estimate of window k+1): those whose estimate is
// the one before lowered by the drain's depth (15%, or 30% under suspicion).
func kneeDrains(estimates []float64) []int {
	var d []int
	for w := 2; w <= len(estimates); w++ {
		f := estimates[w-2] / estimates[max(0, w-3)]
		if math.Abs(f-0.85) < 1e-6 || math.Abs(f-0.7) < 1e-6 {
			d = append(d, w)
		}
	}
	return d
}

// kneeEstimates returns the estimate after each window of kneeModelRun.
func kneeEstimates(t *testing.T, initial, windows int, dep func(k int) kneeModel) []float64 {
	t.Helper()
	_, _, e := kneeModelRun(t, initial, windows, dep)
	return e
}

// gaps returns the windows between consecutive drains.
func gaps(drains []int) []int {
	var g []int
	for i := 1; i < len(drains); i++ {
		g = append(g, drains[i]-drains[i-1])
	}
	return g
}

// Under a steady overload, drains that cross the knee and find base where it was expected
// space out: every second boundary of the grid after one, every fourth after two, on the same
// grid. Each drain at 85% of a limit near the knee costs goodput, and these have nothing to
// teach.
// So do they where latency lags a window (calls of 500ms, two a window).
func TestKneeDrainsSpaceOutWhileTheyAgreeWithBase(t *testing.T) {
	for _, s := range []time.Duration{kneeBase, 10 * kneeBase} {
		est := kneeEstimates(t, 20, 200, func(int) kneeModel { return kneeModel{c: 40, s: s, demand: 60} })
		drains := kneeDrains(est)
		g := gaps(drains)
		if len(g) < 3 || g[0] > 20 || g[len(g)-1] != 40 {
			t.Fatalf("calls of %v: drains at windows %v (gaps %v): want the gaps to grow from 10 or 20 to 40 windows; estimates %.1f", s, drains, g, est)
		}
		// Calls longer than a quarter of the window: the drain lowers the limit a while before
		// the boundary, so that the calls admitted before it end before its window starts
		// there; whole windows fed, that while is the window after the boundary's, and the
		// drain's window the next.
		at := 0
		if 4*s > time.Second {
			at = 1
		}
		for i, d := range drains {
			if d%10 != at || i > 1 && g[i-1] < g[i-2] || i > 0 && g[i-1] > 40 {
				t.Fatalf("calls of %v: drains at windows %v (gaps %v): want them on the grid, their gaps growing up to 40", s, drains, g)
			}
		}
	}
}

// Latency that rises by itself (calls getting heavier by 1% a window, the limit not grown) cuts
// the limit, and the drains come back to every boundary of the grid: base is moving, and only
// drains and cuts measure it.
func TestKneeSpacedDrainsComeBackWhenLatencyRisesByItself(t *testing.T) {
	est := kneeEstimates(t, 20, 170, func(k int) kneeModel {
		m := kneeModel{c: 40, s: kneeBase, demand: 60}
		if k > 121 {
			m.s = scale(kneeBase, 1+0.01*float64(k-121))
		}
		return m
	})
	drains := kneeDrains(est)
	var before, after []int
	for _, d := range drains {
		if d > 121 {
			after = append(after, d)
		} else {
			before = append(before, d)
		}
	}
	if g := gaps(before); len(g) == 0 || g[len(g)-1] <= 10 {
		t.Fatalf("drains at windows %v: want them spaced out before the calls got heavier (window 122)", drains)
	}
	if len(after) < 3 || after[0] > 130 || after[1] != after[0]+10 || after[2] != after[1]+10 {
		t.Fatalf("drains at windows %v, calls heavier from window 122: want drains every 10 windows from the first boundary after; estimates %.1f", drains, est[115:])
	}
}

// A small limit (below 10: its tolerance is its one call of slack) spaces its drains out as any
// other once they agree with base: a lone small limit that drained on every boundary of the grid
// spent about a point of goodput on it. Here a knee of 7.5 holds the limit at 8 or 9; the first
// drains come on every boundary, then every second, then every fourth, and once settled the
// limit stays at the knee or above, drains included.
func TestKneeSmallLimitsSpaceTheirDrainsOnceTheyAgree(t *testing.T) {
	est := kneeEstimates(t, 8, 160, func(int) kneeModel { return kneeModel{c: 7.5, s: kneeBase, demand: 30} })
	var drains []int // windows on the grid that ran at 86% or less of the window before
	for w := 10; w <= len(est); w += 10 {
		if est[w-2] <= 0.86*est[w-3] {
			drains = append(drains, w)
		}
	}
	g := gaps(drains)
	if len(drains) == 0 || drains[0] != 10 || len(g) < 3 || g[len(g)-1] != 40 {
		t.Fatalf("drains at windows %v over %d windows at a knee of 7.5: want the first on the first boundary, then spaced out to every 40 windows; estimates %.1f", drains, len(est), est)
	}
	for i := 1; i < len(g); i++ {
		if g[i] < g[i-1] {
			t.Fatalf("drains at windows %v: spaced out, then closer again with nothing moving; estimates %.1f", drains, est)
		}
	}
	for w := 20; w < len(est); w++ {
		if est[w] < 7.5 {
			t.Fatalf("estimate %.1f at window %d, below the knee once settled; estimates %.1f", est[w], w, est)
		}
	}
}

// Base first measured on the first window reads short: its calls began with it, and the longest
// had not ended by its end (5% short for exponential calls of 50ms in a window of 1s). The next
// window measures base again if the startup's doubling of the limit kept latency within the
// tolerance or within the noise of two windows (so neither queued: 13% above the first is
// within three standard deviations of their difference before the spread of latency is
// measured) and it reads above base; a queue in it does not.
func TestKneeSecondWindowCorrectsAFirstBaseReadShort(t *testing.T) {
	for _, tc := range []struct {
		second float64 // the second window's latency over the first's
		moved  bool
	}{{1.05, true}, {1.13, true}, {1.3, false}, {0.98, false}} {
		r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200})
		first := scale(kneeBase, 0.95)
		r.bound(first)
		if r.alg.NoLoadLatency() != first || r.alg.Limit() != 40 {
			t.Fatalf("first window: base %v, limit %d, want %v and the startup's doubling to 40", r.alg.NoLoadLatency(), r.alg.Limit(), first)
		}
		second := scale(first, tc.second)
		r.bound(second)
		got := r.alg.NoLoadLatency()
		if moved := got > first; moved != tc.moved {
			t.Fatalf("second window at %v times the first (%v): base %v, moved %v, want moved %v", tc.second, second, got, moved, tc.moved)
		}
		if tc.moved && math.Abs(float64(got)/float64(second)-1) > 0.02 {
			t.Fatalf("second window at %v: base %v, want about %v", second, got, second)
		}
	}
}

// Where latency lags a window (calls of half a window), the window after a growth of a quarter
// or more holds mostly calls admitted before it: its latency says nothing of the growth yet,
// and the limit waits a window before it grows again. Here the startup's doubling, from base's
// first measurement on, doubles every second window rather than every window; calls of 50ms
// double it every window.
func TestKneeLaggingLatencyWaitsAWindowAfterAGrowth(t *testing.T) {
	for _, lat := range []time.Duration{10 * kneeBase, kneeBase} {
		r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 10, MaxLimit: 1000})
		for r.alg.NoLoadLatency() == 0 && r.k < 20 {
			r.bound(lat)
		}
		var grew []float64
		for range 4 {
			before := r.alg.Estimate()
			r.bound(lat)
			grew = append(grew, r.alg.Estimate()/before)
		}
		want := []float64{1, 2, 1, 2} // the first window after the measurement's doubling waits
		if lat == kneeBase {
			want = []float64{2, 2, 2, 2}
		}
		for i := range want {
			if math.Abs(grew[i]-want[i]) > 1e-9 {
				t.Errorf("calls of %v, latency at base: growth factors %.2f after base was first measured, want %v", lat, grew, want)
				break
			}
		}
	}
}

// Likewise after a cut of a quarter or more: the next window's latency, still that of calls
// admitted before the cut, which already aimed at the tolerance, holds the limit where calls of
// 50ms cut it again.
func TestKneeLaggingLatencyWaitsAWindowAfterACut(t *testing.T) {
	for _, lat := range []time.Duration{10 * kneeBase, kneeBase} {
		r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 1000})
		// Windows of 2000 samples (many replicas' worth of calls), so that a window's mean
		// latency is precise at either length of call.
		window := func(f float64) {
			r.feed(r4c.WindowSummary{AvgLatency: scale(lat, f), MaxInFlight: r.alg.Limit(), Samples: 2000, Rejected: 500})
		}
		for r.alg.NoLoadLatency() == 0 && r.k < 20 {
			window(1)
		}
		before := r.alg.Estimate()
		window(1.8) // a queue: the limit is cut by more than a quarter
		cut := r.alg.Estimate()
		if cut > 0.75*before {
			t.Fatalf("calls of %v: a window at 1.8 times base took the estimate from %.1f to %.1f, want a cut of a quarter or more", lat, before, cut)
		}
		window(1.4)
		got := r.alg.Estimate()
		if lags := lat > kneeBase; lags && got != cut || !lags && got >= cut {
			t.Errorf("calls of %v: the window after the cut to %.1f, at 1.4 times base, left the estimate at %.1f; want it held where latency lags, cut again otherwise", lat, cut, got)
		}
	}
}

// Under heavy overload the band in which the limit holds is the tolerance's lower half, and a
// window counts as clear, a sign that the knee is above the limit, only within an eighth of the
// tolerance of base: latency a quarter of the tolerance above base is where such a limit aims,
// and two windows there grew it by a quarter into the queue, again and again. Without heavy
// overload the same windows are clear.
func TestKneeHeavyOverloadCountsOnlyWindowsNearBaseAsClear(t *testing.T) {
	for _, heavy := range []bool{true, false} {
		r, base := kneeConfirmed(t, r4c.AdaptiveLimitConfig{InitialLimit: 40}) // the drain at 10s found base; limit 80
		r.bound(scale(base, 1.3))                                              // a queue: a cut ends the startup's doubling, to 65
		lat := scale(base, 1.02)                                               // a fifth of the tolerance above base
		var grew []float64
		for range 3 {
			before := r.alg.Estimate()
			l := r.alg.Limit()
			n := int(float64(l) / lat.Seconds())
			rejected := n / 4
			if heavy {
				rejected = 4 * n
			}
			r.feed(r4c.WindowSummary{AvgLatency: lat, MaxInFlight: l, Samples: n, Rejected: rejected})
			grew = append(grew, r.alg.Estimate()/before)
		}
		probes := true
		for _, g := range grew {
			probes = probes && g < 1.05 // a probe of 0.5 at about 65: under 1%
		}
		if probes != heavy {
			t.Errorf("heavy overload %v, latency 1.02 times base: the limit grew by %.3f, want only probes: %v", heavy, grew, heavy)
		}
	}
}

// Under heavy overload (four calls offered or more for each one admitted), a slot that frees up
// is refilled at once: the queue of the tolerance's upper half buys no goodput, only latency, and
// Knee aims at its lower half. Here a knee of 40 holds 42 calls (latency 1.05 times base) under a
// demand of 200, and 43 (1.075) under a demand of 60.
func TestKneeHeavyOverloadHoldsLessQueue(t *testing.T) {
	for _, tc := range []struct {
		demand float64
		lo, hi int
	}{{200, 41, 42}, {60, 43, 44}} {
		_, limits := kneeClosedLoop(t, 60, func(int) kneeModel { return kneeModel{c: 40, s: kneeBase, demand: tc.demand} })
		if m := median(limits[30:]); m < tc.lo || m > tc.hi {
			t.Errorf("demand %v at a knee of 40: median limit %d over windows 31 to 60, want [%d, %d]; limits %v", tc.demand, m, tc.lo, tc.hi, limits)
		}
	}
}

// A closed loop of fewer clients than the initial limit never reaches it, and its latency may
// already be a queue: 12 clients on a knee of 8 take 1.5 times base, and nothing but admitting
// fewer of them can tell that from a slower dependency. Base is measured from the second window
// when a drain could tell the two apart (latency this steady), and one drain at the grid's
// boundary checks it: here latency follows the drain down, so the limit comes down to the knee.
// Against a knee of 40, the same drain finds no queue, the limit comes back, and light load is
// never drained again; nor is open light load ever drained, whose bursts a drain would reject.
func TestKneeUnreachedLimitChecksItsBaseWithOneDrain(t *testing.T) {
	_, limits := kneeClosedLoop(t, 60, func(int) kneeModel { return kneeModel{c: 8, s: kneeBase, demand: 12} })
	if m := median(limits[30:]); m < 8 || m > 10 {
		t.Errorf("12 clients on a knee of 8: median limit %d over windows 31 to 60, want [8, 10]; limits %v", m, limits)
	}
	_, limits = kneeClosedLoop(t, 60, func(int) kneeModel { return kneeModel{c: 40, s: kneeBase, demand: 12} })
	below := 0
	for _, l := range limits {
		if l < 12 {
			below++
		}
	}
	if below != 1 || limits[59] < 12 {
		t.Errorf("12 clients on a knee of 40: %d windows with a limit below the 12 calls in flight, last limit %d; want one drain, then 12 or more; limits %v", below, limits[59], limits)
	}
	// Open light load: 12 calls in flight on average, in bursts of up to 18.
	r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: 20, MaxLimit: 200})
	for range 60 {
		if l := r.feed(r4c.WindowSummary{AvgLatency: kneeBase, MaxInFlight: 18, Samples: int(12 / kneeBase.Seconds())}); l != 20 {
			t.Fatalf("window %d of open light load (12 calls in flight, bursts of 18, limit 20): limit %d", r.k, l)
		}
	}
}

// A drain of a small share whose window cannot tell a queue from none (few samples, of calls
// that lag the window) and reads above base leaves base where it is and restores the limit:
// replicas whose drains overlap only in part otherwise raised their bases with every drain
// until they stopped binding. A larger limit still reads such a drain as base.
func TestKneeDrainTooNoisyToReadLeavesBase(t *testing.T) {
	const base = 300 * time.Millisecond // a window of 1s holds fewer than ten latencies: it lags
	for _, tc := range []struct {
		limit int
		moves bool
	}{{5, false}, {40, true}} {
		r := newKneeRun(t, r4c.AdaptiveLimitConfig{InitialLimit: tc.limit, MaxLimit: tc.limit})
		for r.k < 5 { // base is measured once the windows hold ten latencies
			r.bound(base)
		}
		if r.alg.NoLoadLatency() != base {
			t.Fatalf("limit %d: base %v after five windows at %v", tc.limit, r.alg.NoLoadLatency(), base)
		}
		held := scale(base, 1.2) // within the tolerance (a share of 5 tolerates one call, 20%), above its lower half: no growth, drains on the grid
		drained, restored := false, true
		for r.k < 30 {
			r.bound(held)
			if r.alg.Estimate() < float64(tc.limit) {
				drained = true
			} else if drained && r.alg.Estimate() != float64(tc.limit) {
				restored = false
			}
		}
		if !drained || !restored {
			t.Fatalf("limit %d: drained %v, restored %v; want a drain on the grid and the limit back", tc.limit, drained, restored)
		}
		if moved := r.alg.NoLoadLatency() > base; moved != tc.moves {
			t.Errorf("limit %d: base %v after drains at %v (base was %v): moved %v, want %v", tc.limit, r.alg.NoLoadLatency(), held, base, moved, tc.moves)
		}
	}
}

// Calls that arrive at random and are rejected above the limit are lost: a limit at the knee
// idles workers whenever arrivals pause, and the queue that keeps them busy may be more than
// the tolerance's lower half. Knee reads a binding window as such a loss system (the share it
// rejected tells the workers) and widens the tolerance to the latency of the queue it needs
// (see kneeLimit.lossTolerance): a limit of about 24 under 1.25 times the load it serves (one
// call in five rejected) needs some 6 calls of queue, and a window 8% above base no longer
// holds the limit but lets it grow. Under 2x overload (one call in two rejected) the queue
// needed is small, and the same window holds. (The rule's guards are tested on the rule
// itself: TestKneeLossToleranceOnlyWhereTheWindowTellsTheWorkers.)
func TestKneeRandomArrivalsWidenTheTolerance(t *testing.T) {
	// window feeds a window 8% above base under the current limit, with rejected calls for
	// every four served, and returns the estimate before and after it.
	window := func(r *kneeRun, base time.Duration, rejected int) (before, after float64) {
		lat := scale(base, kneeHold)
		before = r.alg.Estimate()
		l := r.alg.Limit()
		n := int(float64(l) / lat.Seconds())
		r.feed(r4c.WindowSummary{AvgLatency: lat, MaxInFlight: l, Samples: n, Rejected: n * rejected / 4})
		return before, r.alg.Estimate()
	}
	for _, tc := range []struct {
		what     string
		rejected int // calls rejected for every four served
		grows    bool
	}{{"1.25x", 1, true}, {"2x", 4, false}} {
		r, base := kneeConfirmed(t, r4c.AdaptiveLimitConfig{InitialLimit: 12}) // the drain at 10s found base
		if before, after := window(r, base, tc.rejected); (after > before) != tc.grows || !tc.grows && after != before {
			t.Errorf("%s, latency %.2f times base: estimate %v -> %v, want growth: %v (else held)", tc.what, kneeHold, before, after, tc.grows)
		}
	}
}

// mmck returns the share of calls an M/M/c/k system rejects at a load (in calls of base
// latency) and its mean latency over base: the states' probabilities by their recursion
// (arrivals at the load, services at min(n, c)), the latency by Little's law.
func mmck(c, k int, load float64) (rejected, lat float64) {
	p, z, flight, busy := 1.0, 1.0, 0.0, 0.0
	for n := 1; n <= k; n++ {
		p *= load / float64(min(n, c))
		z += p
		flight += float64(n) * p
		busy += float64(min(n, c)) * p
	}
	return p / z, flight / busy
}

// A knee of 8 under twice the load it serves, the calls arriving at random: a limit of 10 keeps
// its workers busy 98% of the time (a limit of 8, 91%), at 16% of latency, which the tolerance
// of losses allows. Windows drawn from that system (rejections and latency of an M/M/8/limit
// system) take the limit to 10 and hold it there: the tolerance stays at the limit the model
// asks for. (When it fell back to 10% there, the latency of the queue asked for read as a queue,
// and the limit was cut back from 10 every other window.)
func TestKneeRandomArrivalsHoldTheLimitTheyAskFor(t *testing.T) {
	r, base := kneeConfirmed(t, r4c.AdaptiveLimitConfig{InitialLimit: 9})
	const c, load = 8, 16.0
	var seen []int
	for range 8 { // the windows up to the next drain
		l := r.alg.Limit()
		rejected, lat := mmck(c, l, load)
		offered := load / base.Seconds() // calls a second
		n := int(offered * (1 - rejected))
		r.feed(r4c.WindowSummary{AvgLatency: scale(base, lat), MaxInFlight: l, Samples: n, Rejected: int(offered) - n})
		seen = append(seen, r.alg.Limit())
	}
	reached := false
	for i, l := range seen {
		if reached && l < 10 {
			t.Fatalf("window %d: limit %d after reaching 10; limits %v", i+1, l, seen)
		}
		reached = reached || l >= 10
		if l > 11 {
			t.Fatalf("window %d: limit %d, past the queue the losses ask for; limits %v", i+1, l, seen)
		}
	}
	if !reached {
		t.Fatalf("limits %v: want 10 reached", seen)
	}
}
