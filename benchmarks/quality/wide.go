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
		openClass("w-cold-big", "a cold start under 3x overload on a large knee (100), exponential service times of 20ms", 102, 100, 20*time.Millisecond, sim.Exponential{}, 3, 3, 90, 1),
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
		openClass("w-noise-small", "lognormal service times (σ 0.5) on a small knee (12) at 1.3x overload, 40ms, timeout four service times", 104, 12, 40*time.Millisecond, sim.LogNormal{Sigma: 0.5}, 4, 1.3, 120, 1),
		openClass("w-replicas-3", "three replicas share a dependency of knee 30 at 2x overload, exponential service times of 50ms", 105, 30, service, sim.Exponential{}, 3, 2, 150, 3),
		openClass("w-replicas-exp", "ten replicas share a dependency of knee 40 at 1.5x overload, as in replicas, but with exponential service times of 50ms: each replica's window holds about 80 noisy calls", 115, 40, service, sim.Exponential{}, 3, 1.5, 150, 10),
		openClass("w-replicas-20", "twenty replicas share a dependency of knee 60 (three slots each) at 1.3x overload, service 40ms ±10%", 106, 60, 40*time.Millisecond, sim.Uniform{Spread: 0.1}, 3, 1.3, 150, 20),
		openClass("w-tiny", "a tiny knee (3) at 2x overload, service 20ms ±10%", 107, 3, 20*time.Millisecond, sim.Uniform{Spread: 0.1}, 3, 2, 90, 1),
		openClass("w-fast", "a fast dependency (5ms, exponential: a window holds thousands of calls), knee 40, 1.5x overload", 108, 40, 5*time.Millisecond, sim.Exponential{}, 3, 1.5, 90, 1),
		loadClass("w-very-slow", "a very slow dependency (700ms, exponential: a window of 1s holds about one service time), knee 10, light load (40%) then 1.5x overload", 109, 10, 700*time.Millisecond, sim.Exponential{}, 3, 1, loadPhase{90, 0.4}, loadPhase{120, 1.5}),
		openClass("w-heavy", "heavy overload (5x), knee 20, service 50ms ±10%", 110, 20, service, sim.Uniform{Spread: 0.1}, 3, 5, 120, 1),
		openClass("w-mild", "mild overload (1.1x), knee 50, exponential service times of 30ms", 111, 50, 30*time.Millisecond, sim.Exponential{}, 3, 1.1, 120, 1),
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
		loadClass("w-cold-far", "a cold start far below a large knee: exponential service times of 120ms, knee 100 under 2x overload, from the initial limit of 20 (a window holds eight latencies and, at first, 170 calls: its mean is uncertain by 8%); found in another draw of the random set's kind, and added with the rules it called for", 116, 100, 120*time.Millisecond, sim.Exponential{}, 4, 1, loadPhase{90, 2}),
		transitClass("w-transit", "capacity 15 > 5 > 15 workers of 20ms calls (±20%) whose answers take 20ms to come back, so the knee is twice the workers (30 > 10 > 30), under a constant load of 1.3x the highest capacity", 117, sim.Uniform{Spread: 0.2}, 20*time.Millisecond, 20*time.Millisecond, 1, 1.3,
			transitPhase{60, 15}, transitPhase{60, 5}, transitPhase{60, 15}),
		transitClass("w-transit-far", "a fast dependency far away: 8 workers of 5ms exponential calls whose answers take 35ms to come back, so the knee (64) is eight times the workers and a queue of one call a worker, which would double a nearby dependency's latency, raises this one's by an eighth; under 1.5x overload", 118, sim.Exponential{}, 5*time.Millisecond, 35*time.Millisecond, 1, 1.5,
			transitPhase{120, 8}),
		transitClass("w-transit-replicas", "four replicas share 20 workers of 30ms calls (±10%) whose answers take 30ms to come back (a knee of 40), under 1.5x overload", 119, sim.Uniform{Spread: 0.1}, 30*time.Millisecond, 30*time.Millisecond, 4, 1.5,
			transitPhase{150, 20}),
		loadClass("w-light", "light open load (80% of a knee of 24, exponential service times of 30ms: light load on a FIFO queue waits), then 1.3x overload, then 80% again", 114, 24, 30*time.Millisecond, sim.Exponential{}, 4, 1, loadPhase{60, 0.8}, loadPhase{60, 1.3}, loadPhase{60, 0.8}),
	}
}

// transitPhase is a phase of a transitClass: that many seconds with that many workers.
type transitPhase struct{ seconds, workers int }

// transitClass is a class whose answers take transit to come back (sim.Scenario.Transit): an
// open load of load times what the most workers serve at svc, and a timeout of three times a
// call's latency without a queue (svc plus transit).
func transitClass(name, doc string, seed uint64, spread sim.Dist, svc, transit time.Duration, replicas int, load float64, phases ...transitPhase) Class {
	return Class{Name: name, Doc: doc, Make: func(m sim.Model, scale float64) sim.Scenario {
		most := 0
		for _, p := range phases {
			most = max(most, p.workers)
		}
		sc := sim.Scenario{Name: name, Model: m, Spread: spread, Timeout: 3 * (svc + transit), Transit: transit, Seed: seed, Replicas: replicas}
		for _, p := range phases {
			sc.Phases = append(sc.Phases, sim.Phase{Duration: secs(scale, p.seconds), Capacity: p.workers, Service: svc, Rate: rate(load, most, svc)})
		}
		return sc
	}}
}

// openClass is a loadClass of one phase: load times what knee workers serve at svc, for that
// many seconds.
func openClass(name, doc string, seed uint64, knee int, svc time.Duration, spread sim.Dist, timeout, load float64, seconds, replicas int) Class {
	return loadClass(name, doc, seed, knee, svc, spread, timeout, replicas, loadPhase{seconds, load})
}
