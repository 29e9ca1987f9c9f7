package r4c

import "time"

// WindowSummary is what an adaptive algorithm learns from one completed window.
type WindowSummary struct {
	// AvgLatency is the window's average latency (at least 1ns when it comes from the engine).
	AvgLatency time.Duration
	// MaxInFlight is the largest number of calls in flight seen during the window.
	MaxInFlight int
	// Dropped reports whether any sample of the window was a drop (a failure in DropOn).
	Dropped bool
}

// AdaptiveAlgorithm computes a concurrency limit from one window at a time. The engine calls
// Update once per completed window, under its own lock; an algorithm holds no clock and no lock.
// An AdaptiveAlgorithm used on its own (NewAdaptiveAlgorithm) is not safe for concurrent use.
type AdaptiveAlgorithm interface {
	// Update feeds one window to the algorithm and returns the new limit.
	Update(WindowSummary) int
	// Limit returns the current limit.
	Limit() int
}

// NewAdaptiveAlgorithm returns the algorithm that cfg selects, resolved over the built-in
// defaults, with its limit at cfg's InitialLimit. Only the algorithm's own settings matter here
// (Window, MinWindowSamples and DropOn belong to the engine); Config must be empty, since
// there is no registry to name configurations.
func NewAdaptiveAlgorithm(cfg AdaptiveLimitConfig) (AdaptiveAlgorithm, error) {
	if cfg.Config != "" {
		return nil, &ConfigError{Code: CodeUnknownConfig, Policy: policyAdaptiveLimit, Key: "config", Value: cfg.Config,
			Msg: "adaptiveLimit config " + quote(cfg.Config) + " is unknown: NewAdaptiveAlgorithm has no registry of named configurations"}
	}
	r := adaptiveLimitSpec.merge(adaptiveLimitSpec.defaults, cfg)
	if err := adaptiveLimitSpec.validate(r, ""); err != nil {
		return nil, err
	}
	return r.newAlgorithm(), nil
}

func (c AdaptiveLimitConfig) newAlgorithm() AdaptiveAlgorithm {
	if c.Algorithm == AIMD {
		return &aimd{limit: c.InitialLimit, min: c.MinLimit, max: c.MaxLimit, backoff: c.BackoffRatio}
	}
	return &Gradient2Algorithm{
		est: float64(c.InitialLimit), min: float64(c.MinLimit), max: float64(c.MaxLimit),
		smoothing: c.Smoothing, tolerance: c.RTTTolerance, queue: float64(c.queueSize()),
		longFactor: 2.0 / float64(c.LongWindow+1),
	}
}

// Gradient2Algorithm is Netflix's Gradient2Limit (concurrency-limits 0.5.4), bit for bit: the
// conformance traces in testdata/conformance, produced by the Java library, replay exactly.
//
// It compares each window's latency with a long-term exponential average and grows the limit
// by about Smoothing*QueueSize a window while latency stays within RTTTolerance of the average,
// and lowers it in proportion (at most by half) when latency exceeds that.
type Gradient2Algorithm struct {
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
func (g *Gradient2Algorithm) Update(w WindowSummary) int {
	short := float64(w.AvgLatency)
	long := g.addLong(short)
	if long/short > 2 {
		// After an overload the long average decays faster so that the limit recovers. The
		// gradient below still uses the average from before this decay, as Java does.
		g.long = float64(g.long * 0.95)
	}
	if float64(w.MaxInFlight) < g.est/2 {
		// App-limited: latency says nothing about the limit when most slots are idle.
		return int(g.est)
	}
	gradient := max(0.5, min(1.0, (g.tolerance*long)/short))
	n := float64(g.est*gradient) + g.queue
	n = float64(g.est*(1-g.smoothing)) + float64(n*g.smoothing)
	n = max(g.min, min(g.max, n))
	g.est = n
	return int(n)
}

func (g *Gradient2Algorithm) addLong(x float64) float64 {
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
func (g *Gradient2Algorithm) Limit() int { return int(g.est) }

// Estimate returns the unrounded estimate behind the limit.
func (g *Gradient2Algorithm) Estimate() float64 { return g.est }

// LongLatency returns the long-term average latency in nanoseconds, as a float64.
func (g *Gradient2Algorithm) LongLatency() float64 { return g.long }

// aimd is Netflix's AIMDLimit (0.5.4) without its latency threshold (SPEC 2.2).
type aimd struct {
	limit, min, max int
	backoff         float64
}

func (a *aimd) Update(w WindowSummary) int {
	l := a.limit
	if w.Dropped {
		l = int(float64(l) * a.backoff)
	} else if w.MaxInFlight*2 >= l {
		l++
	}
	a.limit = min(a.max, max(a.min, l))
	return a.limit
}

func (a *aimd) Limit() int { return a.limit }
