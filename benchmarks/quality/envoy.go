package quality

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/sim"
)

// EnvoyConfig is the configuration of Envoy's adaptive concurrency filter with its gradient
// controller, as its documentation describes it; the zero value of a field takes the default.
type EnvoyConfig struct {
	UpdateInterval time.Duration // concurrency_update_interval (required there; 100ms, the docs' example)
	MinRTTInterval time.Duration // min_rtt_calc_params.interval (required there; 60s, the docs' example)
	RequestCount   int           // min_rtt_calc_params.request_count (50)
	Jitter         float64       // min_rtt_calc_params.jitter (0.15)
	MinConcurrency int           // min_rtt_calc_params.min_concurrency (3)
	Buffer         float64       // min_rtt_calc_params.buffer (0.25)
	MaxLimit       int           // concurrency_limit_params.max_concurrency_limit (1000; 200 here, like ours)
	Percentile     float64       // sample_aggregate_percentile (0.5)
	Seed           uint64        // of the minRTT interval's jitter
}

func (c EnvoyConfig) withDefaults() EnvoyConfig {
	orDefault(&c.UpdateInterval, 100*time.Millisecond)
	orDefault(&c.MinRTTInterval, 60*time.Second)
	orDefault(&c.RequestCount, 50)
	orDefault(&c.Jitter, 0.15)
	orDefault(&c.MinConcurrency, 3)
	orDefault(&c.Buffer, 0.25)
	orDefault(&c.MaxLimit, 200)
	orDefault(&c.Percentile, 0.5)
	return c
}

// orDefault sets *v to d when it is zero (unset).
func orDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// Envoy returns limiters that follow the rules of Envoy's gradient controller, written from
// its documentation and its controller's documented behaviour (not its code):
//
//   - The limit starts at MinConcurrency, in a minRTT window. During a minRTT window the limit
//     is held at MinConcurrency; calls that started before the window are not sampled; the
//     window ends when RequestCount samples have arrived: minRTT is their Percentile, the limit
//     goes back to its value before the window, and the next window is scheduled after
//     MinRTTInterval plus a random jitter of up to Jitter of it.
//   - Outside a minRTT window, every UpdateInterval with at least one sample: sampleRTT is the
//     Percentile of the interval's samples, gradient = clamp((1+Buffer)*minRTT/sampleRTT, 0.5,
//     2), and the limit becomes trunc(limit*gradient + sqrt(limit*gradient)), clamped to
//     [MinConcurrency, MaxLimit].
//   - Five consecutive updates that keep the limit at MinConcurrency start a minRTT window at
//     once.
//   - Every completed call is a sample, a timeout too (its latency is the timeout). Percentiles
//     are exact here (Envoy uses an approximate histogram).
func Envoy(cfg EnvoyConfig) sim.NewLimiter {
	cfg = cfg.withDefaults()
	return func(clock r4c.Clock, replica int) (sim.Limiter, error) {
		e := &envoy{cfg: cfg, clock: clock, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(replica)))}
		e.limit = cfg.MinConcurrency
		e.enterMinRTT()
		e.sampleTimer = clock.AfterFunc(cfg.UpdateInterval, e.onSampleTimer)
		return e, nil
	}
}

type envoy struct {
	cfg   EnvoyConfig
	clock r4c.Clock
	rng   *rand.Rand

	limit       int
	outstanding int
	deferred    int // the limit before the current minRTT window; 0 outside one
	minRTT      float64
	epoch       int64
	atMin       int // consecutive updates that kept the limit at MinConcurrency
	samples     []float64
	sampleTimer r4c.Timer
	minRTTTimer r4c.Timer
}

func (e *envoy) Limit() int { return e.limit }

func (e *envoy) Acquire() (sim.Permit, bool) {
	if e.outstanding >= e.limit {
		return nil, false
	}
	e.outstanding++
	return envoyPermit{e, e.clock.Nanotime()}, true
}

type envoyPermit struct {
	e     *envoy
	start int64
}

func (p envoyPermit) Success() { p.e.record(p.start) }
func (p envoyPermit) Drop()    { p.e.record(p.start) }

func (e *envoy) inMinRTT() bool { return e.deferred > 0 }

func (e *envoy) record(start int64) {
	e.outstanding--
	if start < e.epoch {
		return
	}
	e.samples = append(e.samples, float64(e.clock.Nanotime()-start))
	if e.inMinRTT() && len(e.samples) >= e.cfg.RequestCount {
		e.minRTT = e.percentile()
		e.setLimit(e.deferred)
		e.deferred = 0
		d := float64(e.cfg.MinRTTInterval)
		jitter := e.rng.Float64() * math.Ceil(d*e.cfg.Jitter)
		if e.minRTTTimer != nil {
			e.minRTTTimer.Stop()
		}
		e.minRTTTimer = e.clock.AfterFunc(time.Duration(d+jitter), e.enterMinRTT)
		e.sampleTimer.Reset(e.cfg.UpdateInterval)
	}
}

func (e *envoy) enterMinRTT() {
	if e.inMinRTT() {
		return
	}
	e.deferred = e.limit
	e.setLimit(e.cfg.MinConcurrency)
	e.samples = e.samples[:0]
	e.epoch = e.clock.Nanotime()
}

func (e *envoy) onSampleTimer() {
	if e.inMinRTT() {
		return // re-armed when the minRTT window ends
	}
	if len(e.samples) > 0 {
		sample := e.percentile()
		g := max(0.5, min(2, (1+e.cfg.Buffer)*e.minRTT/sample))
		l := float64(e.limit) * g
		e.setLimit(max(e.cfg.MinConcurrency, min(e.cfg.MaxLimit, int(l+math.Sqrt(l)))))
	}
	e.sampleTimer.Reset(e.cfg.UpdateInterval)
}

func (e *envoy) setLimit(n int) {
	old := e.limit
	e.limit = n
	if !e.inMinRTT() && old == e.cfg.MinConcurrency && n == e.cfg.MinConcurrency {
		e.atMin++
	} else {
		e.atMin = 0
	}
	if e.atMin >= 5 {
		e.atMin = 0
		if e.minRTTTimer != nil {
			e.minRTTTimer.Stop()
		}
		e.minRTTTimer = e.clock.AfterFunc(0, e.enterMinRTT)
	}
}

// percentile returns the configured percentile of the samples and clears them.
func (e *envoy) percentile() float64 {
	slices.Sort(e.samples)
	v := e.samples[min(len(e.samples)-1, int(e.cfg.Percentile*float64(len(e.samples))))]
	e.samples = e.samples[:0]
	return v
}
