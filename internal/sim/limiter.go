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
func KneeLimit(sc Scenario, factor float64) NewLimiter {
	return func(clock r4c.Clock, _ int) (Limiter, error) {
		replicas := max(1, sc.Replicas)
		f := &fixedLimit{}
		f.follow = func() int {
			now, at := time.Duration(clock.Nanotime()), time.Duration(0)
			c := sc.Phases[len(sc.Phases)-1].Capacity
			for _, ph := range sc.Phases {
				if at += ph.Duration; now < at {
					c = ph.Capacity
					break
				}
			}
			return max(1, int(math.Round(factor*float64(c)/float64(replicas))))
		}
		f.n = f.follow()
		return f, nil
	}
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
