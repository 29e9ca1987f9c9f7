// Package quality is the quality bench of the adaptive limits: it runs every algorithm, and
// the peers' algorithms written from their documentation, through scenarios of the simulator
// in internal/sim, and measures how close each settles to the dependency's knee, the goodput
// and latency it gets, and how fast it settles. Its test runs a short setting in CI; the
// command in cmd/quality runs the long one and writes docs/quality.md and its plots.
package quality

import (
	"fmt"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/sim"
)

// Contender is an algorithm in the bench.
type Contender struct {
	Name string
	// Peer reports a peer's algorithm written into the bench, as opposed to one of ours.
	Peer bool
	// Anchor reports one of the anchors the targets compare latency with: Netflix's algorithms
	// as Netflix ships them, and Envoy's (see Row.LatencyOver).
	Anchor bool
	// Reference reports no algorithm but a limit that knows the knee in advance (sim.KneeLimit):
	// what the targets ask of a limit, shown beside the contenders.
	Reference bool
	// Fixed, when set, makes a reference that runs a limit fixed at each of these multiples of
	// the knee (sim.KneeLimitWithin) and keeps, phase by phase, the best (BestFixed); New is
	// then unused.
	Fixed []float64
	// Knee, when set, is the multiple of the knee a reference holds its limit at
	// (sim.KneeLimit): BestFixed takes its run for a candidate of the same limits.
	Knee float64
	New  func(sc sim.Scenario) sim.NewLimiter
	// Doc says what the contender is; Weak where the bench shows it weak (docs/quality.md).
	Doc, Weak string
}

// adaptive is one of our algorithms with MaxLimit 200 and every other setting at its default.
func adaptive(alg r4c.LimitAlgorithm, doc, weak string) Contender {
	// AIMD and Vegas are Netflix's, bit for bit: anchors.
	return Contender{Name: alg.String(), Doc: doc, Weak: weak, Anchor: alg == r4c.AIMD || alg == r4c.Vegas, New: func(sim.Scenario) sim.NewLimiter {
		return sim.Adaptive(r4c.AdaptiveLimitConfig{Algorithm: alg, MaxLimit: 200})
	}}
}

// Contenders returns the algorithms of the bench: ours with their defaults, Netflix's Gradient2
// as it behaves without our drop guard, and Envoy's gradient controller with the
// documentation's example settings (MaxLimit 200 like ours).
func Contenders() []Contender {
	e := EnvoyConfig{}.withDefaults()
	return []Contender{
		adaptive(r4c.Knee,
			"ours (`r4c.Knee`): it seeks the knee of the dependency, the smallest concurrency at which the dependency delivers its full throughput.",
			"Ten replicas with shares of 4 to 6 slots each hold limits whose sum is about 1.4 times the knee (1.43 in the worst of 8 variants, Jain's index 0.99), and latency 1.25 to 1.3 times the service time; with a slower dependency (100ms calls: a window holds ten service times) 1.42 to 1.46 times on average over 32 variants, above the target in one of 64 runs. "+
				"Every replica's base is first measured through the cold start's queue (about 1.36 times the no-load latency), and only their drains, together, bring it down: their drained windows start at the same boundary of the wall clock's grid, but a replica whose base is still high may stop binding, keep room above its calls in flight and only watch the others' drains; after a minute of overload from a cold start the limits add up to 1.5 times the knee on average over 32 variants and up to 2 in the worst (Jain's index 0.6 to 0.7). "+
				"With noisy calls they do not hold: the same ten replicas with exponential service times (`w-replicas-exp` on the wider set) add up to 3 to 3.4 times the knee on average over 8 variants (Jain's index 0.77 to 0.81). Each replica reads about 80 such calls a window; their bases, first measured through the cold start's queue (7% to 72% above the no-load latency), rise from there, as drains that the other replicas' queue does not answer are read as the no-load latency: those whose base is high read the shared queue as base, stop binding and keep room above their calls in flight, those whose base is low are squeezed to a slot or two. Given the no-load latency (a test hook, not kept) the same replicas add up to 1.56 to 1.61 times the knee (Jain 0.97 to 0.98); given one 10% high, the same for all, 1.72 to 1.84 (Jain 0.97 to 0.98): fairness needs the replicas' bases to agree, and the sum needs them right. "+
				"Five replicas of a knee of 20 (a slot of slack each) drain together from 1.45 times the knee to about the knee, and lose goodput in each drain: 96.7% on average over 32 variants on PS, below the target in most of them (97.4% on FIFO). "+
				"After a minute of overload, light load (60% of the capacity over ten replicas) is rejected for a few seconds: the limits, cut to about 5 each, take a few windows to see that the load fell while each replica's calls in flight come in bursts above them: 99.2% to 99.5% of goodput in the worst variant, 0.5% to 0.8% of calls rejected. "+
				"A cold start under overload with exponential service times costs about 2.5% of goodput over its first minute (5% in the worst of 32 variants). "+
				"After a large capacity increase (10 to 60 workers) the first window after it doubles the limit (its queue vanished under the limit that queued), then the limit doubles on windows of about 0.6s: 97.9% to 98.1% of the phase's best goodput on average over 32 variants, 94.6% in the worst on PS (97.4% on FIFO): the rise comes on a boundary of the drain grid, and a drain that starts with it hides the queue that vanished for a window (one variant of 32 misses the target on PS; the drains of the knee of 10 before it, read against the whole calls they ran at, agree with base and space out, so few rises meet one). "+
				"While calls get heavier (the service time triples over two minutes) base follows the trend its measurements show (drains, and cuts that did not lower latency), but learns it only after a few of them, and meanwhile the limit sags below the knee until the next drain measures the heavier calls and undoes the cuts their lag caused: 97.7% to 97.9% of goodput on average over 32 variants, 96.6% in the worst. "+
				"A cold start under overload (a knee of 8, 2x overload) costs latency (1.47 to 1.49 times the service time over the phase on average over 32 variants, up to 1.75: base is first measured only on the second window, and then through the queue, and drains take it down over about 50 seconds) and goodput: 96.6% on PS and 97.3% on FIFO on average over 32 variants, 95.6% and 96.4% in the worst. The startup doubles the limit into timeouts (the window ends at its first drops), and once settled the limit holds about a call above the knee, where workers idle between arrivals about 5% of the time. "+
				"Under lognormal noise (σ 0.8) its small standing queue adds timeouts and leaves workers idle between arrivals: 97% of goodput in the worst of 32 variants, 98% on average. "+
				"A small knee with exponential service times (8 workers, 2x overload) is its worst case: 98.4% to 98.7% of goodput on average over 32 variants, 94.7% to 95% in the worst, where Gradient2 with the drop guard gets 99% to 100%, but limits 1.5 times the knee on average: the spread of exponential calls over a window of about 150 of them widens the tolerance to about 22%. A drain whose latency falls with it bounds base from above, and one window in many reads low by chance: base then sits below the no-load latency and cuts take the limit below the knee until a drain corrects it. "+
				"With a slow dependency (250ms calls: a window of 1s holds 40 of them) it pools windows until their mean can tell a queue from noise, and reacts more slowly: under overload 97.6% to 97.8% of goodput on average over 32 variants, 93.2% to 94.7% in the worst, where a drain read base low before it was known precisely (every later window then reads as a queue, and small cuts hold the limit below the knee for tens of seconds). "+
				"With calls of half a window (500ms), latency answers a change of the limit only once the calls begun before it have ended: Knee reads it in the next window, and its drains let those calls end before their windows start. It gets 96.3% to 98.1% of the best goodput at limits of 1.08 to 1.12 times the knee and latency 1.07 to 1.09 times the service time, where Vegas gets 97.5% to 98.7% at 1.06 to 1.11: it meets every target in 22 and 28 variants of 32 (PS and FIFO), missing Vegas's latency by a point or 97% of goodput by a few tenths in the others. "+
				"When calls outlast the timeout at any load (a timeout at twice the mean of exponential calls: 13.5% of them), it reads them as the dependency's own when, from a cold start under light load, they come steady from the first windows without latency rising, or otherwise once cuts do not lower their share (a test halves the calls in flight for most of a second): under light load 99.7% to 99.8% of the best goodput on average over 32 variants, 98.5% in the worst, where a limit 1.2 times the knee gets 99.3%; under the overload that follows, its limits average 1.26 to 1.39 times the knee and it gets 95.7% to 96.6% on average, 91.1% to 92.7% in the worst, about as much as a limit 1.2 times the knee (95.6% to 95.9%, below the target too). "+
				"Its drains cost up to 1% of goodput under overload until they agree with base, then a quarter of that (they space out to every 40 windows); once base is confirmed, a drain of calls that vary little lasts only as long as its reading needs (fifteen latencies: 750ms for calls of 50ms). "+
				"Under heavy overload it aims at the lower half of its tolerance (a slot freed at the knee refills at once: the closed loop gets 1.03 to 1.05 times the service time), but once the service time has tripled (4.5 times the capacity offered) the limit holds near the top of that half (43 for a knee of 40, with base a percent or two high: 1.07 times the service time), where Vegas, in a variant whose stale base happens to hold it at the knee, serves as much at 1.02."),
		adaptive(r4c.Gradient2,
			"ours (`r4c.Gradient2`, the default algorithm): Netflix's `Gradient2Limit` (concurrency-limits 0.5.4), with the engine's drop guard, on by default, which keeps windows full of timeouts out of its long-term latency.",
			"It tolerates 1.5 times its long-term latency by design and settles there: 1.3 to 2.3 times the knee. "+
				"Its long-term latency (600 windows) remembers the lighter calls: once the service time has tripled it reads the slower calls as a queue and holds the limit at about half the knee (43% of the best goodput in the last drift phase). "+
				"Replicas each tolerate the same queue, so their limits add up to about 3 times the knee."),
		adaptive(r4c.AIMD,
			"ours (`r4c.AIMD`): Netflix's `AIMDLimit` (0.5.4), bit for bit.",
			"It sees only drops, so it grows until calls time out and settles 1.5 to 3 times above the knee, with latency up to the timeout. "+
				"Under noisy latency a few calls time out in every window even without load: it backs off every window and collapses to its minimum."),
		adaptive(r4c.Vegas,
			"ours (`r4c.Vegas`): Netflix's `VegasLimit` (0.5.4), bit for bit.",
			"Its no-load latency is the lowest window seen: under noisy latency a lucky window sets it low, every later window reads as a queue, and the limit collapses. "+
				"After a capacity drop it comes down by log10 of the limit a window, so calls time out for tens of seconds. "+
				"Replicas each keep their own queue of a few calls, which adds up to about 3 times the knee."),
		{Name: "gradient2-netflix", Peer: true, Anchor: true,
			Doc:  "Netflix's `Gradient2Limit` end to end: our `r4c.Gradient2` with the drop guard off (`DropGuard: r4c.Off`).",
			Weak: "With a timeout inside the limit, the timeout's latency becomes its long-term normal: from a cold start under overload it climbs to about 11 times the knee with nearly every call timing out; ten replicas add up to about 16 times the knee with almost no goodput.",
			New: func(sim.Scenario) sim.NewLimiter {
				return sim.Adaptive(r4c.AdaptiveLimitConfig{Algorithm: r4c.Gradient2, MaxLimit: 200, DropGuard: r4c.Off})
			}},
		{Name: "envoy", Peer: true, Anchor: true,
			Doc: fmt.Sprintf("Envoy's adaptive concurrency filter with its gradient controller, written "+
				"into the bench from Envoy's documentation, not its code (`benchmarks/quality/envoy.go`), "+
				"with the documentation's example settings: concurrency_update_interval %s, "+
				"min_rtt_calc_params interval %s, request_count %d, jitter %g%%, min_concurrency %d, "+
				"buffer %g%%, sample_aggregate_percentile %g%%, and max_concurrency_limit %d like ours "+
				"(1000 by default in Envoy). Its percentiles are exact, where Envoy uses a histogram.",
				duration(e.UpdateInterval), duration(e.MinRTTInterval), e.RequestCount, 100*e.Jitter,
				e.MinConcurrency, 100*e.Buffer, 100*e.Percentile, e.MaxLimit),
			Weak: "It keeps a standing queue (its buffer of 25% plus a headroom of the square root of the limit): about 1.4 times the knee and the service time. " +
				"Every minute it pins the limit to 3 until 50 calls have answered, rejecting calls it could serve, and under light load its limit grows without bound. " +
				"Replicas measure their minimum latency at different times through each other's queues, so their limits add up to many times the knee.",
			New: func(sc sim.Scenario) sim.NewLimiter {
				return Envoy(EnvoyConfig{Seed: sc.Seed})
			}},
		atKnee("at-knee", 1,
			"Calls arrive at random: a slot freed at the knee waits for the next arrival while its worker idles (a call rejected at a full limit does not wait for one). Under overload this alone costs 1% to 9% of the best goodput, the more the fewer the slots (91% with a knee of 8) and the noisier the service (95%); 90% with a slow dependency, and 79% with ten replicas, each filling its share of the slots from its own arrivals."),
		atKnee("at-1.2knee", 1.2,
			"A queue of a fifth of the knee keeps the workers busy between arrivals: 97% to 100% of the best goodput under overload, with latency 1.15 to 1.2 times the service time; not with a slow, noisy dependency (96% to 97%), nor with ten replicas (94%: each replica's share, 5 slots, still idles between its own arrivals). The targets ask about this much queue of an algorithm, which must also find the knee, but not under heavy overload: there a freed slot refills at once, anchors reach the goodput with less queue, and this reference's latency misses that target (steps 1, drift 3, closed)."),
		bestFixed(),
	}
}

// atKnee is the reference contender of a limit at factor times the knee, known in advance.
func atKnee(name string, factor float64, weak string) Contender {
	return Contender{Name: name, Reference: true, Knee: factor, Weak: weak,
		Doc: fmt.Sprintf("a reference, not an algorithm: a limit of %g times the knee of the phase under way, known in advance (shared evenly by the replicas; `sim.KneeLimit`). No limit can know the knee; this one shows what the targets ask.", factor),
		New: func(sc sim.Scenario) sim.NewLimiter { return sim.KneeLimit(sc, factor) }}
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

// ClockOffset returns classes whose scenarios start their wall clock d past a boundary of
// Knee's drain grid (sim.Scenario.ClockOffset). Every set starts on one, as r4ctest's manual
// clock does, so that a phase of whole tens of seconds changes on a boundary: the first drain
// of the phase then reads the change. Another offset measures the same scenarios
// with the phases' changes between the boundaries.
func ClockOffset(classes []Class, d time.Duration) []Class {
	out := make([]Class, len(classes))
	for i, c := range classes {
		inner := c.Make
		c.Make = func(m sim.Model, scale float64) sim.Scenario {
			sc := inner(m, scale)
			sc.ClockOffset = d
			return sc
		}
		out[i] = c
	}
	return out
}

// rate is the arrival rate that offers load times what capacity workers serve at service.
func rate(load float64, capacity int, service time.Duration) float64 {
	return load * float64(capacity) / service.Seconds()
}

// replicasClass is a replica class: that many replicas, a limit each, in front of one dependency
// of the given knee and mean service time (uniform ±10%), offered 1.5 times its capacity for
// three minutes, behind a timeout of three service times.
func replicasClass(name, doc string, seed uint64, replicas, knee int, svc time.Duration) Class {
	return loadClass(name, doc, seed, knee, svc, sim.Uniform{Spread: 0.1}, 3, replicas, loadPhase{180, 1.5})
}

// loadPhase is a phase of a loadClass: load times what the dependency serves, for seconds.
type loadPhase struct {
	seconds int
	load    float64
}

// loadClass is a class of open load on one dependency whose phases differ only in the load
// offered: knee workers, a mean service time of svc, the calls' work spread by spread, a timeout
// of timeout service times, the load shared evenly by that many replicas.
func loadClass(name, doc string, seed uint64, knee int, svc time.Duration, spread sim.Dist, timeout float64, replicas int, phases ...loadPhase) Class {
	return Class{Name: name, Doc: doc, Make: func(m sim.Model, scale float64) sim.Scenario {
		sc := sim.Scenario{Name: name, Model: m, Spread: spread, Timeout: time.Duration(timeout * float64(svc)), Seed: seed, Replicas: replicas}
		for _, p := range phases {
			sc.Phases = append(sc.Phases, sim.Phase{Duration: secs(scale, p.seconds), Capacity: knee, Service: svc, Rate: rate(p.load, knee, svc)})
		}
		return sc
	}}
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
		loadClass("noise", "lognormal service times (σ 0.8: p99 4.6x the mean) at 1.5x overload, knee 40", 4, 40, service, sim.LogNormal{Sigma: 0.8}, 3, 1, loadPhase{180, 1.5}),
		replicasClass("replicas", "ten replicas, a limit each, share one dependency of knee 40 at 1.5x overload", 5, 10, 40, service),
		replicasClass("replicas-slow", "ten replicas share a slower dependency (service time 100ms: a window of 1s holds ten service times), knee 40, at 1.5x overload", 9, 10, 40, 2*service),
		replicasClass("replicas-few", "five replicas share a dependency of knee 20 (the same share of four slots each as ten replicas of knee 40), at 1.5x overload", 10, 5, 20, service),
		loadClass("cold-exp", "a cold start under 1.5x overload with exponential service times (knee 40, 50ms), then light load (half the capacity) for two minutes", 11, 40, service, sim.Exponential{}, 3, 1, loadPhase{60, 1.5}, loadPhase{120, 0.5}),
		loadClass("small-exp", "a small knee (8) with exponential service times under 2x overload from a cold start: each window's mean latency is uncertain by about 5%, a tenth of a slot", 16, 8, service, sim.Exponential{}, 3, 1, loadPhase{120, 2}),
		loadClass("own-drops", "a timeout at twice the mean of exponential service times (50ms, knee 16): 13.5% of the calls outlast it at any load, drops no limit can spare; light open load (70% of the capacity) for a minute, then 1.5x overload for two", 17, 16, service, sim.Exponential{}, 2, 1, loadPhase{60, 0.7}, loadPhase{120, 1.5}),
		loadClass("replicas-recover", "ten replicas share a dependency of knee 40 under 1.5x overload for a minute, then under light load (60% of its capacity) for two minutes: their limits must open again", 12, 40, service, sim.Uniform{Spread: 0.1}, 3, 10, loadPhase{60, 1.5}, loadPhase{120, 0.6}),
		loadClass("recover", "a lone limit under 1.5x overload for a minute and a half, then light load (70% of the capacity of 40); exponential service of 20ms: light load on a FIFO queue waits a little", 13, 40, 20*time.Millisecond, sim.Exponential{}, 3, 1, loadPhase{90, 1.5}, loadPhase{90, 0.7}),
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
		loadClass("slow", "a slow dependency (service time 250ms, exponential: a window of 1s holds four service times and few samples), knee 20, light open load (half its capacity) then 1.5x overload", 8, 20, 5*service, sim.Exponential{}, 3, 1, loadPhase{90, 0.5}, loadPhase{90, 1.5}),
		loadClass("long", "calls as long as half the window (500ms ±10%: latency answers a change of the limit only once the calls begun before it have ended), knee 40, 1.5x overload", 14, 40, 10*service, sim.Uniform{Spread: 0.1}, 3, 1, loadPhase{180, 1.5}),
		{
			Name: "closed",
			Doc:  "a closed loop of 200 clients without think time (a rejected client retries after one service time), knee 40",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				return sim.Scenario{Name: "closed", Model: m, Spread: sim.Uniform{Spread: 0.1}, Timeout: timeout, Seed: 7,
					Phases: []sim.Phase{{Duration: secs(scale, 180), Capacity: 40, Service: service, Clients: 200}}}
			},
		},
		{
			Name: "closed-few",
			Doc:  "a closed loop of 12 clients without think time on a knee of 8: fewer than the initial limit (20), which they never reach, while their latency is already 1.5 times the service time; then 30 clients, then 10",
			Make: func(m sim.Model, scale float64) sim.Scenario {
				return sim.Scenario{Name: "closed-few", Model: m, Spread: sim.Uniform{Spread: 0.1}, Timeout: timeout, Seed: 15,
					Phases: []sim.Phase{
						{Duration: secs(scale, 60), Capacity: 8, Service: service, Clients: 12},
						{Duration: secs(scale, 60), Capacity: 8, Service: service, Clients: 30},
						{Duration: secs(scale, 60), Capacity: 8, Service: service, Clients: 10},
					}}
			},
		},
	}
}
