package r4c

import (
	"math"
	"time"
)

// WindowSummary is what an adaptive algorithm learns from one completed window.
type WindowSummary struct {
	// AvgLatency is the window's average latency (at least 1ns when it comes from the engine).
	AvgLatency time.Duration
	// MaxInFlight is the largest number of calls in flight seen during the window.
	MaxInFlight int
	// Dropped reports whether any sample of the window was a drop (a failure in DropOn).
	Dropped bool

	// The fields below are filled by the engine for algorithms that need more than the three
	// above (Knee); Gradient2, AIMD and Vegas read only those three. The engine itself reads
	// Samples and Drops for Gradient2's drop guard (AdaptiveLimitConfig.DropGuard).

	// Samples is the number of samples of the window, drops included.
	Samples int
	// Drops is the number of samples that were drops.
	Drops int
	// Rejected is the number of calls the limit rejected during the window.
	Rejected int
	// Duration is how long the window lasted, from its start to the call that ended it.
	Duration time.Duration
	// End is the wall time (the registry clock's Now) at which the window ended.
	End time.Time
}

// AdaptiveAlgorithm computes a concurrency limit from one window at a time. The engine calls
// Update once per completed window, under its own lock; an algorithm holds no clock and no lock.
// An AdaptiveAlgorithm used on its own (NewAdaptiveAlgorithm) is not safe for concurrent use.
type AdaptiveAlgorithm interface {
	// Update feeds one window to the algorithm and returns the new limit.
	Update(WindowSummary) int
	// Limit returns the current limit.
	Limit() int
	// Estimate returns the unrounded estimate behind the limit (the limit itself for AIMD).
	Estimate() float64
}

// windowSizer is an algorithm that chooses the length of its next window: Knee shortens the
// windows that follow a fast growth of its limit (see kneeLimit.shortWindow), the windows
// before a drain, to end on the grid's boundary (see kneeLimit.plan), and its drain windows
// once base is confirmed (see kneeLimit.drainLength). The engine asks
// after each Update; 0, or anything not shorter than the configured Window, means the Window.
// It is unexported: a window shorter than the configured one is a decision of the built-in
// algorithms, each of which documents when it makes it.
// The engine also asks, after each Update, whether the next window watches its drops
// (watchesDrops); if so, it asks at each drop of that window whether the window should end at
// once (endsEarly, given its samples and drops so far): Knee ends a window whose drops already
// show overload, rather than let a limit that grew into timeouts, or a capacity that fell under
// it, run a whole window. Asking once a window keeps the interface call off the drops of windows
// that do not watch them.
// Likewise, after each Update (and before the first window), the engine asks how often the next
// window is to be read before its end (readsEvery; 0: never); if it is, the engine asks at each
// such reading (at the first call to end after it, as at a window's end) whether the window ends
// there (endsAt, given its summary so far): Knee reads its first window every twentieth of
// Window, and ends it once it has read base where the initial limit holds back as many calls as
// it serves, rather than reject them for a whole window. Readings keep the question off the path
// of every call.
type windowSizer interface {
	nextWindow() time.Duration
	watchesDrops() bool
	endsEarly(samples, drops int) bool
	readsEvery() time.Duration
	endsAt(w WindowSummary) bool
}

// NewAdaptiveAlgorithm returns the algorithm that cfg selects, resolved over the built-in
// defaults, with its limit at cfg's InitialLimit. Only the algorithm's own settings matter here
// (Window, MinWindowSamples and DropOn belong to the engine); Config must be empty, since
// there is no registry to name configurations.
func NewAdaptiveAlgorithm(cfg AdaptiveLimitConfig) (AdaptiveAlgorithm, error) {
	if cfg.Config != "" {
		return nil, &ConfigError{Code: codeUnknownConfig, Policy: policyAdaptiveLimit, Key: "config", Value: cfg.Config,
			Msg: "adaptiveLimit config " + quote(cfg.Config) + " is unknown: NewAdaptiveAlgorithm has no registry of named configurations"}
	}
	r := adaptiveLimitSpec.resolved(adaptiveLimitSpec.merge(adaptiveLimitSpec.defaults, cfg))
	if err := adaptiveLimitSpec.validate(r, "", nil); err != nil {
		return nil, err
	}
	return r.newAlgorithm(), nil
}

// algorithmInfo describes one LimitAlgorithm. Whatever depends on the algorithm outside its own
// type is read from the table algorithms, so that adding an algorithm takes a constant, a row
// and its type.
type algorithmInfo struct {
	name      string                                        // in configuration: "vegas"
	goName    string                                        // its constant in Go: "Vegas"
	smoothing float64                                       // the built-in default of Smoothing under it
	build     func(c AdaptiveLimitConfig) AdaptiveAlgorithm // from a resolved configuration
}

// algorithms is indexed by LimitAlgorithm; the zero value (unset) has no row.
var algorithms = [...]algorithmInfo{
	Gradient2: {name: "gradient2", goName: "Gradient2", smoothing: 0.2, build: newGradient2},
	AIMD:      {name: "aimd", goName: "AIMD", smoothing: 0.2, build: newAIMD}, // AIMD does not smooth
	Vegas:     {name: "vegas", goName: "Vegas", smoothing: 1.0, build: newVegas},
	Knee:      {name: "knee", goName: "Knee", smoothing: 0.2, build: newKnee}, // Knee does not smooth
}

// newAlgorithm builds the algorithm of a resolved, valid configuration.
func (c AdaptiveLimitConfig) newAlgorithm() AdaptiveAlgorithm {
	return algorithms[c.Algorithm].build(c)
}

func newGradient2(c AdaptiveLimitConfig) AdaptiveAlgorithm {
	return &gradient2Limit{
		est: float64(c.InitialLimit), min: float64(c.MinLimit), max: float64(c.MaxLimit),
		smoothing: c.Smoothing, tolerance: c.RTTTolerance, queue: float64(c.queueSize()),
		longFactor: 2.0 / float64(c.LongWindow+1),
	}
}

func newAIMD(c AdaptiveLimitConfig) AdaptiveAlgorithm {
	return &aimd{limit: c.InitialLimit, min: c.MinLimit, max: c.MaxLimit, backoff: c.BackoffRatio}
}

// gradient2Limit is Netflix's Gradient2Limit (concurrency-limits 0.5.4), bit for bit: the
// conformance traces in testdata/conformance, produced by the Java library, replay exactly.
//
// It compares each window's latency with a long-term exponential average and grows the limit
// by about Smoothing*QueueSize a window while latency stays within RTTTolerance of the average,
// and lowers it in proportion (at most by half) when latency exceeds that. Like Netflix's, its
// Update ignores drops. An adaptive limit adds a drop guard around it (AdaptiveLimitConfig.DropGuard,
// on by default): a window in which more than one sample in ten was a drop lowers the limit as
// Update does when the gradient is at its floor of 0.5, and stays out of the long-term average,
// so that the latency of timed-out calls never becomes normal. Update, as called on its own
// (NewAdaptiveAlgorithm), has no guard.
type gradient2Limit struct {
	est                  float64 // the estimate; the limit is its truncation
	min, max             float64
	smoothing, tolerance float64
	queue                float64
	longFactor           float64 // 2/(LongWindow+1)

	// The long-term average: a plain mean over the first longWarmup windows, then exponential.
	long      float64
	longSum   float64
	longCount int
}

const longWarmup = 10

// Update applies one window. Every product below is wrapped in float64(...) so that the
// compiler cannot fuse it with the following addition (FMA on arm64, ppc64le, s390x and amd64
// v3): Java never fuses, and the traces depend on each product being rounded on its own.
// The order of operations follows the Java source to the last bit; see testdata/conformance.
func (g *gradient2Limit) Update(w WindowSummary) int {
	short := float64(w.AvgLatency)
	long := g.addLong(short)
	if long/short > 2 {
		// After an overload the long average decays faster so that the limit recovers. The
		// gradient below still uses the average from before this decay, as Java does.
		g.long = float64(g.long * 0.95)
	}
	return g.step(w.MaxInFlight, max(gradientFloor, min(1.0, (g.tolerance*long)/short)))
}

// gradientFloor is the lowest gradient Gradient2 applies: at most half the limit at once.
const gradientFloor = 0.5

// step moves the estimate by gradient, unless fewer than half of the slots were in use: the
// tail of Update, shared with overloaded so that both round exactly alike.
func (g *gradient2Limit) step(maxInFlight int, gradient float64) int {
	if float64(maxInFlight) < g.est/2 {
		// App-limited: latency says nothing about the limit when most slots are idle.
		return toLimit(g.est)
	}
	n := float64(g.est*gradient) + g.queue
	n = float64(g.est*(1-g.smoothing)) + float64(n*g.smoothing)
	n = max(g.min, min(g.max, n))
	g.est = n
	return toLimit(n)
}

// overloaded applies a window that the engine's drop guard judged overloaded (a significant
// share of its samples were drops, see dropGuarded): exactly what Update computes when the
// gradient is at its floor of 0.5, the app-limited rule included, but without touching the
// long-term average. The window's latency is left out of it, so that the latency of calls
// cut short by a timeout never becomes "normal"; the faster decay after an overload, which
// compares the window's latency with that average, is left out with it.
func (g *gradient2Limit) overloaded(w WindowSummary) int {
	return g.step(w.MaxInFlight, gradientFloor)
}

func (g *gradient2Limit) addLong(x float64) float64 {
	if g.longCount < longWarmup {
		g.longCount++
		g.longSum += x
		g.long = g.longSum / float64(g.longCount)
	} else {
		g.long = float64(g.long*(1-g.longFactor)) + float64(x*g.longFactor)
	}
	return g.long
}

// Limit returns the current limit, the truncation of Estimate.
func (g *gradient2Limit) Limit() int { return toLimit(g.est) }

// Estimate returns the unrounded estimate behind the limit.
func (g *gradient2Limit) Estimate() float64 { return g.est }

// LongLatency returns the long-term average latency in nanoseconds, as a float64.
func (g *gradient2Limit) LongLatency() float64 { return g.long }

// aimd is Netflix's AIMDLimit (0.5.4) without its latency threshold (docs/adaptive-limit.md).
type aimd struct {
	limit, min, max int
	backoff         float64
}

func (a *aimd) Update(w WindowSummary) int {
	l := a.limit
	if w.Dropped {
		l = int(float64(l) * a.backoff)
	} else if w.MaxInFlight*2 >= l && l < a.max {
		l++
	}
	a.limit = min(a.max, max(a.min, l))
	return a.limit
}

func (a *aimd) Limit() int { return a.limit }

// Estimate returns the limit: AIMD keeps no finer estimate.
func (a *aimd) Estimate() float64 { return float64(a.limit) }

// vegasLimit is Netflix's VegasLimit (concurrency-limits 0.5.4), bit for bit: the
// conformance traces in testdata/conformance, produced by the Java library, replay exactly. The
// one difference is the probe jitter, which Netflix draws at random and ours derives from state
// (below).
//
// Vegas keeps the lowest window latency seen, the no-load latency, and estimates the queue of
// each window as queue = ceil(limit x (1 - noLoad/latency)): the share of the limit that waits
// rather than works. With log10 floored to an integer and at least 1 (so 1 below 100, 2 from 100
// to 999, 3 from 1000):
//   - a window with a drop lowers the limit by log10(limit);
//   - a window in which fewer than half of the slots were used changes nothing;
//   - queue <= log10(limit): the limit grows by Beta (default 6 x log10(limit));
//   - queue < Alpha (default 3 x log10(limit)): it grows by log10(limit);
//   - queue > Beta: it falls by log10(limit);
//   - otherwise it holds.
//
// The proposed limit is clamped to [max(1, MinLimit), MaxLimit], then smoothed: estimate =
// (1 - Smoothing) x estimate + Smoothing x proposed (Smoothing defaults to 1.0 under Vegas: no
// smoothing). A window whose latency is below the no-load latency (and the first window) only
// records the new no-load latency, whatever else it says. A latency below 1ns counts as 1ns
// (Netflix throws).
//
// The probe. Between probes the no-load latency only falls, so a dependency that becomes slower
// for good would leave it stale and the limit low. Every window counts a probe counter up; when
// jitter x ProbeMultiplier x estimate <= the counter (estimate before the window), the window is
// a probe: the no-load latency becomes that window's latency, even a higher one, the counter
// restarts from zero, the jitter moves to the next value and the limit does not change. The
// probe check comes before everything else.
//
// The jitter is deterministic. The k-th jitter (k = 0 from construction, k = n after the n-th
// probe) is
//
//	z = uint64(InitialLimit) + (k+1) x 0x9E3779B97F4A7C15     (uint64 arithmetic, wrapping)
//	z = (z ^ z>>30) x 0xBF58476D1CE4E5B9
//	z = (z ^ z>>27) x 0x94D049BB133111EB
//	z = z ^ z>>31                                             (SplitMix64's mix)
//	jitter = 0.5 + float64(z>>12) x 2^-53                     (exact, in [0.5, 1))
//
// so two instances with the same InitialLimit fed the same windows probe at the same windows.
// Netflix draws each jitter from an unseeded random source in [0.5, 1) instead.
type vegasLimit struct {
	est         float64 // the estimate; the limit is its truncation
	min, max    float64
	smoothing   float64
	alpha, beta int // 0: Netflix's functions of the limit
	multiplier  float64

	noLoad     int64 // the no-load latency in ns; 0 before the first window
	probeCount int64 // windows since the last probe
	probes     uint64
	seed       uint64
	jitter     float64
}

func newVegas(c AdaptiveLimitConfig) AdaptiveAlgorithm {
	v := &vegasLimit{
		est: float64(c.InitialLimit), min: float64(max(1, c.MinLimit)), max: float64(c.MaxLimit),
		smoothing: c.Smoothing, alpha: c.Alpha, beta: c.Beta, multiplier: float64(c.ProbeMultiplier),
		seed: uint64(c.InitialLimit),
	}
	v.jitter = vegasJitter(v.seed, 0)
	return v
}

// vegasJitter returns the k-th probe jitter of seed, in [0.5, 1) (see vegasLimit).
func vegasJitter(seed, k uint64) float64 {
	z := seed + (k+1)*0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	z ^= z >> 31
	// z>>12 has 52 bits: the product is exact, and so is the sum, below 1.
	return 0.5 + float64(float64(z>>12)*0x1p-53)
}

// Update applies one window, following VegasLimit._update of 0.5.4 to the last bit: the
// order of the tests, the 32-bit product inflight*2, the truncations of Java's (int) casts and
// the integer log10 all matter. The products of the smoothing step are wrapped in float64(...)
// so that the compiler cannot fuse them into a multiply-add, which Java never does.
func (v *vegasLimit) Update(w WindowSummary) int {
	rtt := max(int64(w.AvgLatency), 1)
	est := v.est
	v.probeCount++
	if (v.jitter*v.multiplier)*est <= float64(v.probeCount) {
		// The probe: measure the no-load latency again, from this window.
		v.probes++
		v.jitter = vegasJitter(v.seed, v.probes)
		v.probeCount = 0
		v.noLoad = rtt
		return javaInt(est)
	}
	if v.noLoad == 0 || rtt < v.noLoad {
		v.noLoad = rtt
		return javaInt(est)
	}
	queue := javaInt(math.Ceil(est * (1 - float64(v.noLoad)/float64(rtt))))
	var n float64
	if w.Dropped {
		n = est - float64(vegasLog10(javaInt(est)))
	} else if float64(int32(w.MaxInFlight)*2) < est {
		// App-limited: latency says nothing about the limit when most slots are idle.
		return javaInt(est)
	} else {
		log := vegasLog10(javaInt(est))
		alpha, beta := 3*log, 6*log
		if v.alpha != 0 {
			alpha = v.alpha
		}
		if v.beta != 0 {
			beta = v.beta
		}
		switch {
		case queue <= log:
			n = est + float64(beta)
		case queue < alpha:
			n = est + float64(log)
		case queue > beta:
			n = est - float64(log)
		default:
			return javaInt(est)
		}
	}
	n = max(v.min, min(v.max, n))
	n = float64((1-v.smoothing)*est) + float64(v.smoothing*n)
	v.est = n
	return javaInt(n)
}

// vegasLog10 is Netflix's Log10RootIntFunction: log10(n) floored, and at least 1. It counts
// digits rather than calling math.Log10, whose results Go does not guarantee to be exact at
// powers of ten (Java does).
func vegasLog10(n int) int {
	if n < 100 {
		return 1
	}
	log := 0
	for ; n >= 10; n /= 10 {
		log++
	}
	return log
}

// javaInt is Java's (int) cast of a double: truncation toward zero, saturating at the bounds
// of a 32-bit int, NaN to 0.
func javaInt(x float64) int {
	switch {
	case x != x:
		return 0
	case x >= math.MaxInt32:
		return math.MaxInt32
	case x <= math.MinInt32:
		return math.MinInt32
	}
	return toLimit(x)
}

// Limit returns the current limit, the truncation of Estimate.
func (v *vegasLimit) Limit() int { return javaInt(v.est) }

// Estimate returns the unrounded estimate behind the limit.
func (v *vegasLimit) Estimate() float64 { return v.est }

// NoLoadLatency returns the no-load latency: the lowest window latency since the last probe,
// the probe window's own included (0 before the first window).
func (v *vegasLimit) NoLoadLatency() time.Duration { return time.Duration(v.noLoad) }

// toLimit converts an estimate to a limit: its truncation, and math.MaxInt for an estimate
// beyond it (a MaxLimit of math.MaxInt is 2^63 as a float64, which int() would wrap to
// math.MinInt).
func toLimit(f float64) int {
	if f >= math.MaxInt {
		return math.MaxInt
	}
	return int(f)
}
