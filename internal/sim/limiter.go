package sim

import (
	"math"
	"time"

	"github.com/resilience4cata/r4c"
)

// Adaptive returns limiters that are r4c adaptive limits with cfg, each in its own registry
// on the simulation's clock, driven through permits.
func Adaptive(cfg r4c.AdaptiveLimitConfig) NewLimiter {
	return func(clock r4c.Clock, _ int) (Limiter, error) {
		h, err := AdaptiveHandle(clock, cfg)
		if err != nil {
			return nil, err
		}
		return adaptive{h}, nil
	}
}

// AdaptiveHandle returns an adaptive limit with cfg in a new registry on clock.
func AdaptiveHandle(clock r4c.Clock, cfg r4c.AdaptiveLimitConfig) (*r4c.AdaptiveLimitHandle, error) {
	reg, err := r4c.NewRegistry(r4c.WithClock(clock))
	if err != nil {
		return nil, err
	}
	const id = "dependency"
	if _, err := r4c.NewPipeline[struct{}](reg, id, cfg); err != nil {
		return nil, err
	}
	return reg.AdaptiveLimit(id)
}

type adaptive struct{ h *r4c.AdaptiveLimitHandle }

func (a adaptive) Acquire() (Permit, bool) {
	p, err := a.h.Acquire()
	if err != nil {
		return nil, false
	}
	return permit{p}, true
}

func (a adaptive) Limit() int { return a.h.Limit() }

type permit struct{ p r4c.AdaptiveLimitPermit }

func (p permit) Success() { p.p.Success() }
func (p permit) Drop()    { p.p.Drop() }

// Fixed limits are bulkheads of n slots: a baseline (at the knee, the best a fixed limit can
// do when the knee is known).
func FixedLimit(n int) NewLimiter {
	return func(r4c.Clock, int) (Limiter, error) { return &fixedLimit{n: n}, nil }
}

type fixedLimit struct {
	n, used int
	follow  func() int // when set, the limit now (KneeLimit)
}

// KneeLimit is a limit that knows the knee in advance: at every call, factor times the
// capacity of the phase under way, shared evenly by the replicas (at least one slot each). It
// is no algorithm, but a reference: what the best fixed limit at that multiple of the knee
// would give, phase by phase.
func KneeLimit(sc Scenario, factor float64) NewLimiter { return KneeLimitWithin(sc, factor, 0) }

// KneeLimitWithin is KneeLimit whose replicas' limits add up to at most most times the
// capacity (0: no bound): a share rounded up past it is rounded down instead, but never below
// one slot. Twenty replicas of a knee of 60 at 1.5 times it hold 4 slots each (80), not 5 (100).
func KneeLimitWithin(sc Scenario, factor, most float64) NewLimiter {
	return func(clock r4c.Clock, _ int) (Limiter, error) {
		f := &fixedLimit{}
		f.follow = func() int { return KneeShare(sc, sc.KneeAt(time.Duration(clock.Nanotime())), factor, most) }
		f.n = f.follow()
		return f, nil
	}
}

// KneeShare is each replica's limit under KneeLimitWithin for a phase of the given knee.
func KneeShare(sc Scenario, knee int, factor, most float64) int {
	replicas := float64(max(1, sc.Replicas))
	n := math.Round(factor * float64(knee) / replicas)
	if most > 0 {
		n = min(n, math.Floor(most*float64(knee)/replicas))
	}
	return max(1, int(n))
}

// KneeAt returns the knee of the phase under way at, from the scenario's start (the last
// phase's after its end).
func (sc Scenario) KneeAt(at time.Duration) int {
	end := time.Duration(0)
	for _, ph := range sc.Phases {
		if end += ph.Duration; at < end {
			return sc.Knee(ph)
		}
	}
	return sc.Knee(sc.Phases[len(sc.Phases)-1])
}

// Knee returns phase ph's knee: the calls in flight at which the dependency is busy without a
// queue. That is its capacity, plus, with a transit, the answers on their way back at that
// throughput (Little's law: Capacity/Service calls a second, each Transit on the way),
// rounded to the nearest call.
func (sc Scenario) Knee(ph Phase) int {
	if sc.Transit <= 0 {
		return ph.Capacity
	}
	return int(math.Round(float64(ph.Capacity) * float64(ph.Service+sc.Transit) / float64(ph.Service)))
}

func (f *fixedLimit) Acquire() (Permit, bool) {
	if f.follow != nil {
		f.n = f.follow()
	}
	if f.used >= f.n {
		return nil, false
	}
	f.used++
	return fixedPermit{f}, true
}

func (f *fixedLimit) Limit() int {
	if f.follow != nil {
		f.n = f.follow()
	}
	return f.n
}

type fixedPermit struct{ f *fixedLimit }

func (p fixedPermit) Success() { p.f.used-- }
func (p fixedPermit) Drop()    { p.f.used-- }
