// Package quality is the quality bench of the adaptive limits: it runs every algorithm, and
// the peers' algorithms written from their documentation, through scenarios of the simulator
// in internal/sim, and measures how close each settles to the dependency's knee, the goodput
// and latency it gets, and how fast it settles. Its test runs a short setting in CI; the
// command in cmd/quality runs the long one and writes docs/quality.md and its plots.
package quality

import (
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/sim"
)

// Contender is an algorithm in the bench.
type Contender struct {
	Name string
	// Peer reports a peer's algorithm written into the bench, as opposed to one of ours.
	Peer bool
	New  func(sc sim.Scenario) sim.NewLimiter
}

// adaptive is one of our algorithms with MaxLimit 200 and every other setting at its default.
func adaptive(alg r4c.LimitAlgorithm) Contender {
	return Contender{Name: alg.String(), New: func(sim.Scenario) sim.NewLimiter {
		return sim.Adaptive(r4c.AdaptiveLimitConfig{Algorithm: alg, MaxLimit: 200})
	}}
}

// Contenders returns the algorithms of the bench: ours with their defaults, Netflix's Gradient2
// as it behaves without our drop guard, and Envoy's gradient controller with the
// documentation's example settings (MaxLimit 200 like ours).
func Contenders() []Contender {
	return []Contender{
		adaptive(r4c.Knee),
		adaptive(r4c.Gradient2),
		adaptive(r4c.AIMD),
		adaptive(r4c.Vegas),
		{Name: "gradient2-netflix", Peer: true, New: func(sim.Scenario) sim.NewLimiter {
			// Netflix's Gradient2 end to end: our Gradient2 without the engine's drop guard.
			return sim.Adaptive(r4c.AdaptiveLimitConfig{Algorithm: r4c.Gradient2, MaxLimit: 200, DropGuard: r4c.Off})
		}},
		{Name: "envoy", Peer: true, New: func(sc sim.Scenario) sim.NewLimiter {
			return Envoy(EnvoyConfig{Seed: sc.Seed})
		}},
	}
}

// Class is a kind of scenario the issue names; every class is run on both dependency models.
type Class struct {
	Name string
	Doc  string
	// Make returns the scenario on model m, its phases scaled by scale (1 for the full run).
	Make func(m sim.Model, scale float64) sim.Scenario
}

const (
	service = 50 * time.Millisecond
	timeout = 3 * service // a timeout inside the limit: three times the mean service time
)

// rate is the arrival rate that offers load times what capacity workers serve at service.
func rate(load float64, capacity int, service time.Duration) float64 {
	return load * float64(capacity) / service.Seconds()
}

func secs(scale float64, s int) time.Duration {
	return time.Duration(float64(s)*scale) * time.Second
}

// Classes returns the scenario classes of the bench.
func Classes() []Class {
	return []Class{
		{
			Name: "steps",
			Doc:  "capacity 40 > 10 > 60 under a constant load of 1.5x the highest capacity (9x the lowest); service 50ms ±10%",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				r := rate(1.5, 60, service)
				return sim.Scenario{Name: "steps", Model: m, Spread: sim.Uniform{Spread: 0.1}, Timeout: timeout, Seed: 1,
					Phases: []sim.Phase{
						{Duration: secs(scale, 90), Capacity: 40, Service: service, Rate: r},
						{Duration: secs(scale, 90), Capacity: 10, Service: service, Rate: r},
						{Duration: secs(scale, 90), Capacity: 60, Service: service, Rate: r},
					}}
			},
		},
		{
			Name: "cold",
			Doc:  "a cold start under 2x overload: knee 8, below the initial limit (20), so the first windows queue",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				return sim.Scenario{Name: "cold", Model: m, Spread: sim.Uniform{Spread: 0.1}, Timeout: timeout, Seed: 2,
					Phases: []sim.Phase{{Duration: secs(scale, 120), Capacity: 8, Service: service, Rate: rate(2, 8, service)}}}
			},
		},
		{
			Name: "drift",
			Doc:  "the service time triples (50 > 150ms) over two minutes while the knee stays at 40; the load stays at 1.5x the first capacity",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				r := rate(1.5, 40, service)
				return sim.Scenario{Name: "drift", Model: m, Spread: sim.Uniform{Spread: 0.1}, Timeout: 3 * 3 * service, Seed: 3,
					Phases: []sim.Phase{
						{Duration: secs(scale, 60), Capacity: 40, Service: service, Rate: r},
						{Duration: secs(scale, 120), Capacity: 40, Service: service, ServiceTo: 3 * service, Rate: r},
						{Duration: secs(scale, 60), Capacity: 40, Service: 3 * service, Rate: r},
					}}
			},
		},
		{
			Name: "noise",
			Doc:  "lognormal service times (σ 0.8: p99 4.6x the mean) at 1.5x overload, knee 40",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				return sim.Scenario{Name: "noise", Model: m, Spread: sim.LogNormal{Sigma: 0.8}, Timeout: timeout, Seed: 4,
					Phases: []sim.Phase{{Duration: secs(scale, 180), Capacity: 40, Service: service, Rate: rate(1.5, 40, service)}}}
			},
		},
		{
			Name: "replicas",
			Doc:  "ten replicas, a limit each, share one dependency of knee 40 at 1.5x overload",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				return sim.Scenario{Name: "replicas", Model: m, Spread: sim.Uniform{Spread: 0.1}, Timeout: timeout, Seed: 5, Replicas: 10,
					Phases: []sim.Phase{{Duration: secs(scale, 180), Capacity: 40, Service: service, Rate: rate(1.5, 40, service)}}}
			},
		},
		{
			Name: "light",
			Doc:  "light open load (half the capacity of 40, exponential service times), then a closed loop of 10 clients",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				return sim.Scenario{Name: "light", Model: m, Spread: sim.Exponential{}, Timeout: 10 * service, Seed: 6,
					Phases: []sim.Phase{
						{Duration: secs(scale, 90), Capacity: 40, Service: service, Rate: rate(0.5, 40, service)},
						{Duration: secs(scale, 90), Capacity: 40, Service: service, Clients: 10, Think: service},
					}}
			},
		},
		{
			Name: "closed",
			Doc:  "a closed loop of 200 clients without think time (a rejected client retries after one service time), knee 40",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				return sim.Scenario{Name: "closed", Model: m, Spread: sim.Uniform{Spread: 0.1}, Timeout: timeout, Seed: 7,
					Phases: []sim.Phase{{Duration: secs(scale, 180), Capacity: 40, Service: service, Clients: 200}}}
			},
		},
	}
}
