package quality

import (
	"time"

	"github.com/resilience4cata/r4c/internal/sim"
)

// WideClasses returns a second set of scenario classes, written after Knee's rules were set:
// the same kinds of trouble as Classes (capacity steps, cold starts, drift, noise, replicas,
// light load, slow and fast dependencies), with other knees, service times, spreads, loads and
// replica counts. Knee was designed against Classes; this set checks that it holds where its
// rules were not tuned.
func WideClasses() []Class {
	return []Class{
		{
			Name: "w-steps",
			Doc:  "capacity 20 > 80 > 5 under a constant load of 1.3x the highest capacity (21x the lowest); service 30ms ±20%",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				const svc = 30 * time.Millisecond
				r := rate(1.3, 80, svc)
				return sim.Scenario{Name: "w-steps", Model: m, Spread: sim.Uniform{Spread: 0.2}, Timeout: 3 * svc, Seed: 101,
					Phases: []sim.Phase{
						{Duration: secs(scale, 60), Capacity: 20, Service: svc, Rate: r},
						{Duration: secs(scale, 60), Capacity: 80, Service: svc, Rate: r},
						{Duration: secs(scale, 60), Capacity: 5, Service: svc, Rate: r},
					}}
			},
		},
		{
			Name: "w-cold-big",
			Doc:  "a cold start under 3x overload on a large knee (100), exponential service times of 20ms",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				const svc = 20 * time.Millisecond
				return sim.Scenario{Name: "w-cold-big", Model: m, Spread: sim.Exponential{}, Timeout: 3 * svc, Seed: 102,
					Phases: []sim.Phase{{Duration: secs(scale, 90), Capacity: 100, Service: svc, Rate: rate(3, 100, svc)}}}
			},
		},
		{
			Name: "w-lighter",
			Doc:  "calls get lighter: the service time falls from 120ms to 40ms over 90s while the knee stays at 30, under a load of 1.2x the capacity at 40ms",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				const svc = 40 * time.Millisecond
				r := rate(1.2, 30, svc)
				return sim.Scenario{Name: "w-lighter", Model: m, Spread: sim.Uniform{Spread: 0.1}, Timeout: 3 * 3 * svc, Seed: 103,
					Phases: []sim.Phase{
						{Duration: secs(scale, 30), Capacity: 30, Service: 3 * svc, Rate: r},
						{Duration: secs(scale, 90), Capacity: 30, Service: 3 * svc, ServiceTo: svc, Rate: r},
						{Duration: secs(scale, 30), Capacity: 30, Service: svc, Rate: r},
					}}
			},
		},
		{
			Name: "w-noise-small",
			Doc:  "lognormal service times (σ 0.5) on a small knee (12) at 1.3x overload, 40ms, timeout four service times",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				const svc = 40 * time.Millisecond
				return sim.Scenario{Name: "w-noise-small", Model: m, Spread: sim.LogNormal{Sigma: 0.5}, Timeout: 4 * svc, Seed: 104,
					Phases: []sim.Phase{{Duration: secs(scale, 120), Capacity: 12, Service: svc, Rate: rate(1.3, 12, svc)}}}
			},
		},
		{
			Name: "w-replicas-3",
			Doc:  "three replicas share a dependency of knee 30 at 2x overload, exponential service times of 50ms",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				return sim.Scenario{Name: "w-replicas-3", Model: m, Spread: sim.Exponential{}, Timeout: 3 * service, Seed: 105, Replicas: 3,
					Phases: []sim.Phase{{Duration: secs(scale, 150), Capacity: 30, Service: service, Rate: rate(2, 30, service)}}}
			},
		},
		{
			Name: "w-replicas-20",
			Doc:  "twenty replicas share a dependency of knee 60 (three slots each) at 1.3x overload, service 40ms ±10%",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				const svc = 40 * time.Millisecond
				return sim.Scenario{Name: "w-replicas-20", Model: m, Spread: sim.Uniform{Spread: 0.1}, Timeout: 3 * svc, Seed: 106, Replicas: 20,
					Phases: []sim.Phase{{Duration: secs(scale, 150), Capacity: 60, Service: svc, Rate: rate(1.3, 60, svc)}}}
			},
		},
		{
			Name: "w-tiny",
			Doc:  "a tiny knee (3) at 2x overload, service 20ms ±10%",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				const svc = 20 * time.Millisecond
				return sim.Scenario{Name: "w-tiny", Model: m, Spread: sim.Uniform{Spread: 0.1}, Timeout: 3 * svc, Seed: 107,
					Phases: []sim.Phase{{Duration: secs(scale, 90), Capacity: 3, Service: svc, Rate: rate(2, 3, svc)}}}
			},
		},
		{
			Name: "w-fast",
			Doc:  "a fast dependency (5ms, exponential: a window holds thousands of calls), knee 40, 1.5x overload",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				const svc = 5 * time.Millisecond
				return sim.Scenario{Name: "w-fast", Model: m, Spread: sim.Exponential{}, Timeout: 3 * svc, Seed: 108,
					Phases: []sim.Phase{{Duration: secs(scale, 90), Capacity: 40, Service: svc, Rate: rate(1.5, 40, svc)}}}
			},
		},
		{
			Name: "w-very-slow",
			Doc:  "a very slow dependency (700ms, exponential: a window of 1s holds about one service time), knee 10, light load (40%) then 1.5x overload",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				const svc = 700 * time.Millisecond
				return sim.Scenario{Name: "w-very-slow", Model: m, Spread: sim.Exponential{}, Timeout: 3 * svc, Seed: 109,
					Phases: []sim.Phase{
						{Duration: secs(scale, 90), Capacity: 10, Service: svc, Rate: rate(0.4, 10, svc)},
						{Duration: secs(scale, 120), Capacity: 10, Service: svc, Rate: rate(1.5, 10, svc)},
					}}
			},
		},
		{
			Name: "w-heavy",
			Doc:  "heavy overload (5x), knee 20, service 50ms ±10%",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				return sim.Scenario{Name: "w-heavy", Model: m, Spread: sim.Uniform{Spread: 0.1}, Timeout: timeout, Seed: 110,
					Phases: []sim.Phase{{Duration: secs(scale, 120), Capacity: 20, Service: service, Rate: rate(5, 20, service)}}}
			},
		},
		{
			Name: "w-mild",
			Doc:  "mild overload (1.1x), knee 50, exponential service times of 30ms",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				const svc = 30 * time.Millisecond
				return sim.Scenario{Name: "w-mild", Model: m, Spread: sim.Exponential{}, Timeout: 3 * svc, Seed: 111,
					Phases: []sim.Phase{{Duration: secs(scale, 120), Capacity: 50, Service: svc, Rate: rate(1.1, 50, svc)}}}
			},
		},
		{
			Name: "w-think",
			Doc:  "a closed loop of 100 clients that think 100ms between calls (about 2x what the dependency serves), knee 16, service 50ms ±10%",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				return sim.Scenario{Name: "w-think", Model: m, Spread: sim.Uniform{Spread: 0.1}, Timeout: timeout, Seed: 112,
					Phases: []sim.Phase{{Duration: secs(scale, 120), Capacity: 16, Service: service, Clients: 100, Think: 2 * service}}}
			},
		},
		{
			Name: "w-steps-replicas",
			Doc:  "four replicas, capacity 40 > 16 > 40 under a load of 1.4x the highest capacity; service 50ms ±10%",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				r := rate(1.4, 40, service)
				return sim.Scenario{Name: "w-steps-replicas", Model: m, Spread: sim.Uniform{Spread: 0.1}, Timeout: timeout, Seed: 113, Replicas: 4,
					Phases: []sim.Phase{
						{Duration: secs(scale, 60), Capacity: 40, Service: service, Rate: r},
						{Duration: secs(scale, 60), Capacity: 16, Service: service, Rate: r},
						{Duration: secs(scale, 60), Capacity: 40, Service: service, Rate: r},
					}}
			},
		},
		{
			Name: "w-light",
			Doc:  "light open load (80% of a knee of 24, exponential service times of 30ms: light load on a FIFO queue waits), then 1.3x overload, then 80% again",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				const svc = 30 * time.Millisecond
				return sim.Scenario{Name: "w-light", Model: m, Spread: sim.Exponential{}, Timeout: 4 * svc, Seed: 114,
					Phases: []sim.Phase{
						{Duration: secs(scale, 60), Capacity: 24, Service: svc, Rate: rate(0.8, 24, svc)},
						{Duration: secs(scale, 60), Capacity: 24, Service: svc, Rate: rate(1.3, 24, svc)},
						{Duration: secs(scale, 60), Capacity: 24, Service: svc, Rate: rate(0.8, 24, svc)},
					}}
			},
		},
	}
}
