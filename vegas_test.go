package r4c_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/directive"
)

// The rules of Vegas, one test each (testdata/conformance/README.md, "Vegas"). Unless a test
// says otherwise the limit is 20, so log10 is 1, alpha 3 and beta 6, and the first window sets
// the no-load latency to 10ms.

const ms = time.Millisecond

func newVegas(t *testing.T, cfg r4c.AdaptiveLimitConfig) vegasAlg {
	t.Helper()
	return newAlgorithm[vegasAlg](t, r4c.Vegas, cfg)
}

// newAlgorithm returns the standalone algorithm alg, configured by cfg, as its concrete type A.
func newAlgorithm[A r4c.AdaptiveAlgorithm](t *testing.T, alg r4c.LimitAlgorithm, cfg r4c.AdaptiveLimitConfig) A {
	t.Helper()
	cfg.Algorithm = alg
	a, err := r4c.NewAdaptiveAlgorithm(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := a.(A)
	if !ok {
		t.Fatalf("%v is %T", alg, a)
	}
	return v
}

// vegasAt returns a Vegas of limit initial (MaxLimit 5000) whose no-load latency is 10ms.
func vegasAt(t *testing.T, initial int, cfg r4c.AdaptiveLimitConfig) vegasAlg {
	t.Helper()
	cfg.InitialLimit = initial
	if cfg.MaxLimit == 0 {
		cfg.MaxLimit = 5000
	}
	v := newVegas(t, cfg)
	v.Update(window(10*ms, initial, false))
	return v
}

func window(rtt time.Duration, inflight int, drop bool) r4c.WindowSummary {
	return r4c.WindowSummary{AvgLatency: rtt, MaxInFlight: inflight, Dropped: drop}
}

// expectVegas checks the limit, the estimate (bit for bit) and the no-load latency.
func expectVegas(t *testing.T, v vegasAlg, what string, est float64, noLoad time.Duration) {
	t.Helper()
	if math.Float64bits(v.Estimate()) != math.Float64bits(est) || v.Limit() != int(est) || v.NoLoadLatency() != noLoad {
		t.Fatalf("%s: estimate %v, limit %d, no-load %v; want %v, %d, %v", what, v.Estimate(), v.Limit(), v.NoLoadLatency(), est, int(est), noLoad)
	}
}

// vegasJitter is the k-th probe jitter of a Vegas with initialLimit, as VegasAlgorithm's
// documentation defines it.
func vegasJitter(initialLimit int, k uint64) float64 {
	z := uint64(initialLimit) + (k+1)*0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	z ^= z >> 31
	return 0.5 + float64(z>>12)/(1<<53)
}

func TestVegasFirstWindowOnlyRecordsTheNoLoadLatency(t *testing.T) {
	v := newVegas(t, r4c.AdaptiveLimitConfig{})
	expectVegas(t, v, "before any window", 20, 0)
	if got := v.Update(window(10*ms, 20, true)); got != 20 {
		t.Fatalf("first window returned %d", got)
	}
	expectVegas(t, v, "a first window with a drop", 20, 10*ms)
}

func TestVegasNewMinimumIgnoresADrop(t *testing.T) {
	v := vegasAt(t, 20, r4c.AdaptiveLimitConfig{})
	v.Update(window(8*ms, 20, true))
	expectVegas(t, v, "a lower latency with a drop", 20, 8*ms)
	// A latency equal to the no-load latency is not a new minimum: the drop counts.
	v.Update(window(8*ms, 20, true))
	expectVegas(t, v, "the same latency with a drop", 19, 8*ms)
}

func TestVegasDropBypassesTheAppLimitedTest(t *testing.T) {
	v := vegasAt(t, 20, r4c.AdaptiveLimitConfig{})
	v.Update(window(10*ms, 0, false))
	expectVegas(t, v, "no call in flight, no drop", 20, 10*ms)
	v.Update(window(10*ms, 9, false))
	expectVegas(t, v, "9*2 < 20: app-limited", 20, 10*ms)
	v.Update(window(10*ms, 0, true))
	expectVegas(t, v, "no call in flight, a drop", 19, 10*ms)
	v.Update(window(10*ms, 10, false))
	expectVegas(t, v, "10*2 >= 19: queue 0, + beta", 25, 10*ms)
}

func TestVegasInFlightIsDoubledIn32Bits(t *testing.T) {
	// Java computes inflight*2 in an int: 2^30*2 wraps to -2^31, which is below the estimate,
	// so the window is app-limited and the limit holds.
	v := vegasAt(t, 20, r4c.AdaptiveLimitConfig{})
	v.Update(window(10*ms, 1<<30, false))
	expectVegas(t, v, "2^30 in flight", 20, 10*ms)
	v.Update(window(10*ms, -1, false))
	expectVegas(t, v, "-1 in flight", 20, 10*ms)
}

func TestVegasStepsByQueueSize(t *testing.T) {
	// queue = ceil(20 x (1 - 10ms/rtt)); thresholds: log10 1, alpha 3, beta 6.
	for _, tc := range []struct {
		rtt   time.Duration
		queue int
		want  float64
		rule  string
	}{
		{10 * ms, 0, 26, "queue <= log10: + beta"},
		{10500 * time.Microsecond, 1, 26, "queue <= log10: + beta"},
		{11 * ms, 2, 21, "queue < alpha: + log10"},
		{11500 * time.Microsecond, 3, 20, "alpha <= queue <= beta: hold"},
		{14 * ms, 6, 20, "alpha <= queue <= beta: hold"},
		{15 * ms, 7, 19, "queue > beta: - log10"},
	} {
		if q := int(math.Ceil(20 * (1 - float64(10*ms)/float64(tc.rtt)))); q != tc.queue {
			t.Fatalf("rtt %v gives queue %d, not %d", tc.rtt, q, tc.queue)
		}
		v := vegasAt(t, 20, r4c.AdaptiveLimitConfig{})
		v.Update(window(tc.rtt, 20, false))
		expectVegas(t, v, tc.rule+" at "+tc.rtt.String(), tc.want, 10*ms)
	}
}

func TestVegasExplicitAlphaAndBeta(t *testing.T) {
	cfg := r4c.AdaptiveLimitConfig{Alpha: 2, Beta: 4}
	for _, tc := range []struct {
		rtt  time.Duration
		want float64
	}{
		{10 * ms, 24},                  // queue 0: + beta 4
		{11 * ms, 20},                  // queue 2: not below alpha 2, not above beta 4: hold
		{13 * ms, 19},                  // queue 5 > beta 4: - log10
		{10500 * time.Microsecond, 24}, // queue 1 <= log10: + beta
	} {
		v := vegasAt(t, 20, cfg)
		v.Update(window(tc.rtt, 20, false))
		expectVegas(t, v, "alpha 2, beta 4 at "+tc.rtt.String(), tc.want, 10*ms)
	}
}

func TestVegasLog10Boundaries(t *testing.T) {
	for _, tc := range []struct{ limit, log int }{{1, 1}, {99, 1}, {100, 2}, {999, 2}, {1000, 3}, {4999, 3}} {
		v := vegasAt(t, tc.limit, r4c.AdaptiveLimitConfig{})
		v.Update(window(10*ms, tc.limit, false))
		expectVegas(t, v, "queue 0 from "+strconv.Itoa(tc.limit), float64(min(5000, tc.limit+6*tc.log)), 10*ms)

		v = vegasAt(t, tc.limit, r4c.AdaptiveLimitConfig{})
		v.Update(window(10*ms, tc.limit, true))
		expectVegas(t, v, "a drop from "+strconv.Itoa(tc.limit), float64(max(1, tc.limit-tc.log)), 10*ms)
	}
}

func TestVegasClampsBeforeSmoothing(t *testing.T) {
	v := vegasAt(t, 198, r4c.AdaptiveLimitConfig{MaxLimit: 200})
	v.Update(window(10*ms, 198, false))
	expectVegas(t, v, "198 + 12 clamped", 200, 10*ms)

	// With smoothing, the clamp applies to the proposal (210 -> 200), not to the result.
	v = vegasAt(t, 198, r4c.AdaptiveLimitConfig{MaxLimit: 200, Smoothing: 0.2})
	v.Update(window(10*ms, 198, false))
	smoothing, est := 0.2, 198.0 // variables: Java's arithmetic, not Go's exact constants
	want := float64((1-smoothing)*est) + float64(smoothing*200)
	if after := min(200, float64((1-smoothing)*est)+float64(smoothing*210)); want == after {
		t.Fatal("the case does not tell the orders apart")
	}
	expectVegas(t, v, "smoothed towards the clamped 200", want, 10*ms)

	v = vegasAt(t, 5, r4c.AdaptiveLimitConfig{MinLimit: 5})
	v.Update(window(10*ms, 5, true))
	expectVegas(t, v, "a drop at MinLimit 5", 5, 10*ms)
	v = vegasAt(t, 1, r4c.AdaptiveLimitConfig{})
	v.Update(window(10*ms, 1, true))
	expectVegas(t, v, "a drop at 1", 1, 10*ms)
}

func TestVegasSmoothingDefaultsToOne(t *testing.T) {
	v := vegasAt(t, 20, r4c.AdaptiveLimitConfig{})
	v.Update(window(10*ms, 20, false))
	expectVegas(t, v, "default smoothing", 26, 10*ms)
	v = vegasAt(t, 20, r4c.AdaptiveLimitConfig{Smoothing: 0.5})
	v.Update(window(10*ms, 20, false))
	expectVegas(t, v, "smoothing 0.5", 23, 10*ms)

	// The resolved configuration holds the effective value, per algorithm, unless a layer sets it.
	reg, _ := newRegistry(t, r4c.WithInstance("set", r4c.AdaptiveLimitConfig{Smoothing: 0.3}))
	for _, tc := range []struct {
		id   string
		alg  r4c.LimitAlgorithm
		want float64
	}{
		{"vegas", r4c.Vegas, 1}, {"gradient2", r4c.Gradient2, 0.2}, {"default", 0, 0.2}, {"aimd", r4c.AIMD, 0.2}, {"set", r4c.Vegas, 0.3},
	} {
		newPipeline[string](t, reg, tc.id, r4c.AdaptiveLimitConfig{Algorithm: tc.alg})
		if got := handle(t, reg, tc.id).Config().Smoothing; got != tc.want {
			t.Errorf("%s: smoothing %v, want %v", tc.id, got, tc.want)
		}
	}
	// The effective value is what sharing compares.
	if _, err := r4c.NewPipeline[string](reg, "vegas", r4c.AdaptiveLimitConfig{Algorithm: r4c.Vegas, Smoothing: 1}); err != nil {
		t.Fatalf("the default smoothing given explicitly: %v", err)
	}
	_, err := r4c.NewPipeline[string](reg, "vegas", r4c.AdaptiveLimitConfig{Algorithm: r4c.Vegas, Smoothing: 0.2})
	if r4c.ErrorCode(err) != "R4C-REG-008" || !strings.Contains(err.Error(), "smoothing 1 vs 0.2") {
		t.Fatalf("%v", err)
	}
	// Registry defaults that set smoothing apply to Vegas too.
	reg, _ = newRegistry(t, r4c.WithDefaults(r4c.AdaptiveLimitConfig{Smoothing: 0.4}))
	newPipeline[string](t, reg, "v", r4c.AdaptiveLimitConfig{Algorithm: r4c.Vegas})
	if got := handle(t, reg, "v").Config().Smoothing; got != 0.4 {
		t.Fatalf("smoothing %v, want the registry default 0.4", got)
	}
}

func TestVegasProbeFiresOnSchedule(t *testing.T) {
	// The limit stays at 20 (app-limited windows), so the k-th probe fires on the n-th window
	// after the previous one (the first window counts), n the least with
	// (jitter_k x 30) x 20 <= n.
	v := newVegas(t, r4c.AdaptiveLimitConfig{InitialLimit: 20})
	due := func(k uint64) int {
		j := vegasJitter(20, k)
		if j < 0.5 || j >= 1 {
			t.Fatalf("jitter %d = %v, outside [0.5, 1)", k, j)
		}
		n := 1
		for (j*30)*20 > float64(n) {
			n++
		}
		return n
	}
	first, second := due(0), due(1)
	if first < 300 || first > 600 || second < 300 || second > 600 {
		t.Fatalf("probes due after %d and %d windows", first, second)
	}
	v.Update(window(10*ms, 0, false)) // window 1: the no-load latency
	for n := 2; n < first; n++ {
		v.Update(window(50*ms, 0, false))
		expectVegas(t, v, "before the first probe", 20, 10*ms)
	}
	// The probe: a higher latency becomes the no-load latency; the drop and the full use of
	// the limit are ignored.
	v.Update(window(50*ms, 20, true))
	expectVegas(t, v, "the first probe, window "+strconv.Itoa(first), 20, 50*ms)

	for n := 1; n < second; n++ {
		v.Update(window(60*ms, 0, false))
		expectVegas(t, v, "before the second probe", 20, 50*ms)
	}
	v.Update(window(60*ms, 0, false))
	expectVegas(t, v, "the second probe", 20, 60*ms)
}

func TestVegasProbesEveryWindowAtOne(t *testing.T) {
	// With ProbeMultiplier 1 and an estimate of 1, jitter x 1 x 1 <= 1 always holds: every
	// window probes, takes its latency as the no-load latency and changes nothing else.
	v := newVegas(t, r4c.AdaptiveLimitConfig{InitialLimit: 1, ProbeMultiplier: 1})
	for i, rtt := range []time.Duration{10 * ms, 5 * ms, 20 * ms, time.Millisecond, 30 * ms, 30 * ms, 2 * ms} {
		v.Update(window(rtt, 1, i%2 == 0))
		expectVegas(t, v, "window "+rtt.String(), 1, rtt)
	}
}

func TestVegasIsDeterministic(t *testing.T) {
	cfg := r4c.AdaptiveLimitConfig{InitialLimit: 10, MaxLimit: 60, ProbeMultiplier: 2}
	a, b := newVegas(t, cfg), newVegas(t, cfg)
	state := uint64(42)
	probes := 0
	for w := 1; w <= 5000; w++ {
		state = state*6364136223846793005 + 1442695040888963407
		rtt := time.Duration(10_000_000 + int64((state>>11)%6_000_001) - 3_000_000)
		in := window(rtt, a.Limit(), w%13 == 0)
		before := a.NoLoadLatency()
		la, lb := a.Update(in), b.Update(in)
		if la != lb || math.Float64bits(a.Estimate()) != math.Float64bits(b.Estimate()) || a.NoLoadLatency() != b.NoLoadLatency() {
			t.Fatalf("window %d: %d %v %v vs %d %v %v", w, la, a.Estimate(), a.NoLoadLatency(), lb, b.Estimate(), b.NoLoadLatency())
		}
		if a.NoLoadLatency() > before && before != 0 {
			probes++ // only a probe raises the no-load latency
		}
	}
	if probes == 0 {
		t.Fatal("no probe fired: the test proves little")
	}
}

func TestVegasZeroLatencyCountsAsOneNanosecond(t *testing.T) {
	v := newVegas(t, r4c.AdaptiveLimitConfig{})
	v.Update(window(0, 20, false))
	v.Update(window(-5, 20, false))
	expectVegas(t, v, "latencies 0 and -5", 26, time.Nanosecond)
}

func TestVegasRejectsBadSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  r4c.AdaptiveLimitConfig
		code string
		part string
	}{
		{"negative alpha", r4c.AdaptiveLimitConfig{Alpha: -1}, "R4C-REG-001", "adaptiveLimit.alpha = -1 is invalid: want at least 1"},
		{"negative beta", r4c.AdaptiveLimitConfig{Beta: -2}, "R4C-REG-001", "adaptiveLimit.beta = -2"},
		{"negative probe multiplier", r4c.AdaptiveLimitConfig{ProbeMultiplier: -30}, "R4C-REG-001", "probeMultiplier = -30"},
		{"alpha above beta", r4c.AdaptiveLimitConfig{Alpha: 7, Beta: 6}, "R4C-ATR-009", "want alpha <= beta, have alpha 7, beta 6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Algorithm = r4c.Vegas
			_, err := r4c.NewAdaptiveAlgorithm(tc.cfg)
			if r4c.ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.part) {
				t.Fatalf("%v, want %s with %q", err, tc.code, tc.part)
			}
		})
	}
	for _, ok := range []r4c.AdaptiveLimitConfig{{Alpha: 6, Beta: 6}, {Alpha: 50}, {Beta: 1}} {
		ok.Algorithm = r4c.Vegas
		if _, err := r4c.NewAdaptiveAlgorithm(ok); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

// Alpha above beta is checked when all layers meet, whatever source each value came from.
func TestAlphaAboveBetaAcrossSources(t *testing.T) {
	reg, err := r4c.NewRegistry(
		r4c.WithProperties(map[string]string{"instances.orders.adaptiveLimit.beta": "3", "defaults.adaptiveLimit.algorithm": "vegas"}),
		r4c.WithDefaults(r4c.AdaptiveLimitConfig{Alpha: 6}),
	)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r4c.NewPipeline[string](reg, "orders", r4c.AdaptiveLimitConfig{})
	if r4c.ErrorCode(err) != "R4C-ATR-009" || !strings.Contains(err.Error(), `instance "orders": adaptiveLimit alpha and beta out of order`) {
		t.Fatalf("%v", err)
	}
	newPipeline[string](t, reg, "other", r4c.AdaptiveLimitConfig{})
	if c := handle(t, reg, "other").Config(); c.Algorithm != r4c.Vegas || c.Alpha != 6 || c.Beta != 0 || c.ProbeMultiplier != 30 || c.Smoothing != 1 {
		t.Fatalf("%+v", c)
	}
}

func TestVegasDirective(t *testing.T) {
	d, err := directive.Parse("//r4c:adaptivelimit algorithm=vegas alpha=3 beta=6 probeMultiplier=60")
	if err != nil || len(d.Attrs) != 4 || d.Attrs[1].Key != "alpha" || d.Attrs[2].Value != "6" {
		t.Fatalf("%+v %v", d, err)
	}
	checkDirectiveErrors(t, []directiveErrorCase{
		{"//r4c:adaptivelimit alpha=6 beta=3", "R4C-ATR-009", 20, "alpha and beta out of order: alpha=6 is above beta=3"},
		{"//r4c:adaptivelimit alpha=0", "R4C-ATR-002", 26, "alpha=0 is invalid: want at least 1"},
		{"//r4c:adaptivelimit probeMultiplier=x", "R4C-ATR-002", 36, "an integer"},
		{"//r4c:adaptivelimit algorithm=vega", "R4C-ATR-002", 30, "gradient2, aimd, vegas or knee"},
	})
	if got := literal(goConfig(t, "//r4c:adaptivelimit algorithm=vegas alpha=3 beta=6")); got != "r4c.AdaptiveLimitConfig{Algorithm: r4c.Vegas, Alpha: 3, Beta: 6}" {
		t.Fatal(got)
	}
	reg, _ := newRegistry(t)
	newPipeline[string](t, reg, "v", r4c.AdaptiveLimitConfig{Algorithm: r4c.Vegas, Alpha: 3, Beta: 6})
	if c := handle(t, reg, "v").Config(); c.Algorithm != r4c.Vegas || c.Alpha != 3 || c.Beta != 6 || c.Smoothing != 1 || c.ProbeMultiplier != 30 {
		t.Fatalf("%+v", c)
	}
}

// TestVegasThroughTheEngine drives a Vegas limit with the manual clock: it rises while latency
// stays at its minimum and falls when latency rises.
func TestVegasThroughTheEngine(t *testing.T) {
	reg, clock := newRegistry(t)
	newPipeline[string](t, reg, "v", r4c.AdaptiveLimitConfig{Algorithm: r4c.Vegas, InitialLimit: 10, MaxLimit: 100,
		Window: time.Millisecond, MinWindowSamples: 1})
	h := handle(t, reg, "v")
	// One round: fill the limit, let the calls take lat, end them. The first call to end closes
	// the window (its Window of 1ms is over) with every slot in use.
	round := func(lat time.Duration) {
		permits := make([]r4c.AdaptiveLimitPermit, h.Limit())
		for i := range permits {
			permits[i] = acquire(t, h)
		}
		clock.Advance(lat)
		for _, p := range permits {
			p.Success()
		}
	}
	round(10 * ms) // the no-load latency
	if h.Limit() != 10 {
		t.Fatalf("limit %d after the first window, want 10", h.Limit())
	}
	prev := h.Limit()
	for i := 0; i < 20; i++ {
		round(10 * ms)
		if l := h.Limit(); l < prev || l > 100 {
			t.Fatalf("round %d: limit %d after %d at the minimum latency", i, l, prev)
		}
		prev = h.Limit()
	}
	if prev != 100 {
		t.Fatalf("limit %d after 20 windows at the minimum latency, want 100", prev)
	}
	// Latency triples. The window the first slow call closes still holds the 99 fast calls
	// that ended after the previous window closed; from the next one on, the queue estimate is
	// ceil(limit x (1 - 10/30)), far above beta: the limit falls by log10(limit) a window, 2 from
	// 100 and 1 below: 100, 98, 97, ..., 90.
	for i := 0; i < 10; i++ {
		round(30 * ms)
		if l := h.Limit(); l > prev {
			t.Fatalf("round %d: limit %d after %d with latency tripled", i, l, prev)
		}
		prev = h.Limit()
	}
	s := h.Snapshot()
	if s.Limit != 90 || s.Algorithm != r4c.Vegas || s.Estimate != 90 || s.Windows != 31 {
		t.Fatalf("%+v; want limit 90 after 31 windows", s)
	}

	// The snapshot reports Vegas's estimate, fractional with smoothing.
	newPipeline[string](t, reg, "smooth", r4c.AdaptiveLimitConfig{Algorithm: r4c.Vegas, InitialLimit: 10, Smoothing: 0.25,
		Window: time.Millisecond, MinWindowSamples: 1})
	h = handle(t, reg, "smooth")
	round(10 * ms)
	round(10 * ms)
	if s := h.Snapshot(); s.Estimate != 11.5 || s.Limit != 11 {
		t.Fatalf("estimate %v, limit %d; want 0.75 x 10 + 0.25 x 16 = 11.5, 11", s.Estimate, s.Limit)
	}
}
