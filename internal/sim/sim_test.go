package sim

import (
	"math"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
)

// A fixed limit at the knee in front of a saturated dependency: the dependency completes
// capacity/service calls a second, each in its service time; above the knee the excess queues.
func TestDependencyModels(t *testing.T) {
	for _, m := range []Model{PS, FIFO} {
		for _, limit := range []int{10, 20} {
			sc := Scenario{Model: m, Seed: 1, Phases: []Phase{{Duration: 20 * time.Second, Capacity: 10, Service: 100 * time.Millisecond, Rate: 30000}}}
			res, err := Run(sc, FixedLimit(limit))
			if err != nil {
				t.Fatal(err)
			}
			p := res.Phases[0]
			rate := float64(p.Succeeded) / 20
			if math.Abs(rate-100) > 2 {
				t.Errorf("%v limit %d: %.1f calls/s, want 100", m, limit, rate)
			}
			wantLat := 100 * time.Millisecond * time.Duration(limit) / 10
			if d := p.MeanLatency - wantLat; d < -time.Millisecond || d > time.Millisecond {
				t.Errorf("%v limit %d: mean latency %v, want %v", m, limit, p.MeanLatency, wantLat)
			}
			if math.Abs(p.Goodput-1) > 0.02 || !p.Overloaded {
				t.Errorf("%v limit %d: goodput %.3f overloaded %v", m, limit, p.Goodput, p.Overloaded)
			}
			if p.Settled != float64(limit)/10 {
				t.Errorf("settled %v", p.Settled)
			}
			// Calls arrive far faster than slots free: the dependency holds the limit.
			if math.Abs(p.Held-float64(limit)/10) > 0.01 {
				t.Errorf("%v limit %d: held %v, want %v", m, limit, p.Held, float64(limit)/10)
			}
		}
	}
}

// Under light open load with no limit in the way every call succeeds, so goodput is 1 whatever
// the seed: the best counts the calls that arrived, not the number expected, whose Poisson
// noise would read as goodput gained or lost.
func TestGoodputCountsTheArrivalsDrawn(t *testing.T) {
	for seed := range uint64(6) {
		sc := Scenario{Model: PS, Seed: seed, Spread: Exponential{}, Timeout: time.Second,
			Phases: []Phase{{Duration: 30 * time.Second, Capacity: 40, Service: 50 * time.Millisecond, Rate: 100}}}
		res, err := Run(sc, FixedLimit(1000))
		if err != nil {
			t.Fatal(err)
		}
		p := res.Phases[0]
		if p.Rejected != 0 || p.TimedOut != 0 || p.Overloaded {
			t.Fatalf("seed %d: %d rejected, %d timed out, overloaded %v: want an easy phase", seed, p.Rejected, p.TimedOut, p.Overloaded)
		}
		if math.Abs(p.Goodput-1) > 0.002 {
			t.Errorf("seed %d: goodput %.4f with every call served (%d of %d offered), want 1", seed, p.Goodput, p.Succeeded, p.Offered)
		}
	}
}

// Under light open load with no limit in the way, the calls that fail are exactly those whose
// own work exceeds the timeout (FIFO, far from its capacity, adds no wait), less the answer's
// transit where there is one, so goodput is 1 whatever the seed: the best counts the share of
// calls whose work fits as drawn, not the share expected, whose binomial noise (about 0.4%
// here) would read as goodput gained or lost.
func TestGoodputCountsTheTimeoutsDrawn(t *testing.T) {
	for seed := range uint64(6) {
		transit := time.Duration(seed%2) * 50 * time.Millisecond
		sc := Scenario{Model: FIFO, Seed: seed, Spread: Exponential{}, Timeout: 150*time.Millisecond + transit, Transit: transit,
			Phases: []Phase{{Duration: 30 * time.Second, Capacity: 400, Service: 50 * time.Millisecond, Rate: 100}}}
		res, err := Run(sc, FixedLimit(1000))
		if err != nil {
			t.Fatal(err)
		}
		p := res.Phases[0]
		if p.Rejected != 0 || p.TimedOut == 0 || p.Overloaded {
			t.Fatalf("seed %d: %d rejected, %d timed out, overloaded %v: want an easy phase with some calls too long", seed, p.Rejected, p.TimedOut, p.Overloaded)
		}
		if math.Abs(p.Goodput-1) > 0.001 {
			t.Errorf("seed %d: goodput %.4f with only the too-long calls failing (%d timed out of %d offered), want 1", seed, p.Goodput, p.TimedOut, p.Offered)
		}
	}
}

// A KneeLimit follows the capacity of the phase under way, times its factor, shared by the
// replicas: the settled limit over the knee is the factor in every phase.
func TestKneeLimitFollowsTheCapacity(t *testing.T) {
	sc := Scenario{Model: PS, Seed: 1, Replicas: 2, Timeout: time.Second,
		Phases: []Phase{
			{Duration: 20 * time.Second, Capacity: 40, Service: 50 * time.Millisecond, Rate: 1200},
			{Duration: 20 * time.Second, Capacity: 10, Service: 50 * time.Millisecond, Rate: 1200},
		}}
	res, err := Run(sc, KneeLimit(sc, 1.2))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range res.Phases {
		if math.Abs(p.Settled-1.2) > 1e-9 {
			t.Errorf("phase %d (knee %d): settled %v, want 1.2", i+1, p.Phase.Capacity, p.Settled)
		}
		for _, l := range p.ReplicaLimits {
			if want := 1.2 * float64(p.Phase.Capacity) / 2; math.Abs(l-want) > 1e-9 {
				t.Errorf("phase %d: a replica's limit %v, want %v", i+1, l, want)
			}
		}
	}
}

// KneeLimitWithin rounds each replica's share as KneeLimit does, but down where rounding up
// would take the replicas' limits past the bound; never below one slot. KneeAt finds the
// phase under way, and the last one past the end; with a transit, the knee counts the answers
// on their way back.
func TestKneeShareStaysWithinTheBound(t *testing.T) {
	twenty := Scenario{Replicas: 20}
	for _, tc := range []struct {
		sc           Scenario
		capacity     int
		factor, most float64
		want         int
	}{
		{twenty, 60, 1.5, 0, 5},   // 4.5 rounds up: 100 for a knee of 60
		{twenty, 60, 1.5, 1.5, 4}, // bounded: 80
		{twenty, 60, 1.2, 1.5, 4}, // 3.6 rounds up, within the bound (90)
		{twenty, 10, 1, 1.5, 1},   // half a slot each: one
		{Scenario{}, 40, 1.2, 1.5, 48},
	} {
		if got := KneeShare(tc.sc, tc.capacity, tc.factor, tc.most); got != tc.want {
			t.Errorf("%d replicas, capacity %d, factor %g, within %g: %d slots each, want %d", tc.sc.Replicas, tc.capacity, tc.factor, tc.most, got, tc.want)
		}
	}
	ms := time.Millisecond
	sc := Scenario{Phases: []Phase{{Duration: time.Second, Capacity: 3, Service: 10 * ms}, {Duration: time.Second, Capacity: 7, Service: 20 * ms}}}
	for at, want := range map[time.Duration]int{0: 3, time.Second - 1: 3, time.Second: 7, time.Hour: 7} {
		if got := sc.KneeAt(at); got != want {
			t.Errorf("knee at %v: %d, want %d", at, got, want)
		}
	}
	sc.Transit = 10 * ms // 3 workers of 10ms calls: 300 calls/s, 3 more on the way back
	for at, want := range map[time.Duration]int{0: 6, time.Second: 11} {
		if got := sc.KneeAt(at); got != want {
			t.Errorf("with a transit of 10ms, knee at %v: %d, want %d", at, got, want)
		}
	}
}

// A light closed loop with no limit in the way serves every call its clients make, so goodput
// is 1 whatever the seed: the best counts the clients' cycles as drawn (thinking and work), not
// as expected, whose noise (about 1% here) would read as goodput gained or lost.
func TestGoodputCountsTheClosedLoopAsDrawn(t *testing.T) {
	for seed := range uint64(6) {
		sc := Scenario{Model: PS, Seed: seed, Spread: Exponential{}, Timeout: 500 * time.Millisecond,
			Phases: []Phase{{Duration: 90 * time.Second, Capacity: 40, Service: 50 * time.Millisecond, Clients: 10, Think: 50 * time.Millisecond}}}
		res, err := Run(sc, FixedLimit(1000))
		if err != nil {
			t.Fatal(err)
		}
		p := res.Phases[0]
		if p.Rejected != 0 || p.Overloaded {
			t.Fatalf("seed %d: %d rejected, overloaded %v: want an easy phase", seed, p.Rejected, p.Overloaded)
		}
		if math.Abs(p.Goodput-1) > 0.003 {
			t.Errorf("seed %d: goodput %.4f with every call served (%d succeeded, %d timed out), want 1", seed, p.Goodput, p.Succeeded, p.TimedOut)
		}
	}
}

// Under light load a limit far above the calls in flight holds slots idle: the dependency holds
// the load offered (Little's law: rate times service time), not the limit.
func TestHeldIsTheLoadNotTheLimit(t *testing.T) {
	sc := Scenario{Model: PS, Seed: 3, Phases: []Phase{{Duration: 60 * time.Second, Capacity: 40, Service: 50 * time.Millisecond, Rate: 200}}}
	res, err := Run(sc, FixedLimit(100))
	if err != nil {
		t.Fatal(err)
	}
	p := res.Phases[0]
	if want := 200 * 0.05 / 40; math.Abs(p.Held-want) > 0.1*want {
		t.Errorf("held %.3f of the knee, want about %.3f (10 calls of 40)", p.Held, want)
	}
	if p.Settled != 2.5 {
		t.Errorf("settled %v, want the limit: 2.5", p.Settled)
	}
}

// The wall clock starts ClockOffset past Epoch, and moves with the simulated time: a limiter
// made at the start reads Epoch plus the offset, and a timer it sets fires that much later.
func TestClockOffsetMovesTheWallClock(t *testing.T) {
	for _, offset := range []time.Duration{0, 3700 * time.Millisecond} {
		var start, fired time.Time
		sc := Scenario{Model: PS, Seed: 1, ClockOffset: offset,
			Phases: []Phase{{Duration: 5 * time.Second, Capacity: 10, Service: 50 * time.Millisecond, Rate: 50}}}
		_, err := Run(sc, func(clock r4c.Clock, replica int) (Limiter, error) {
			start = clock.Now()
			clock.AfterFunc(2*time.Second, func() { fired = clock.Now() })
			return FixedLimit(10)(clock, replica)
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := Epoch.Add(offset); !start.Equal(want) {
			t.Errorf("offset %v: the clock read %v at the start, want %v", offset, start, want)
		}
		if want := Epoch.Add(offset + 2*time.Second); !fired.Equal(want) {
			t.Errorf("offset %v: a timer of 2s fired at %v, want %v", offset, fired, want)
		}
	}
}

// An answer's transit holds the caller's slot but no worker. A fixed limit at the knee
// (capacity plus the answers on their way back) keeps a FIFO pool of calls of equal work busy
// without a queue, each call taking its work and the transit; twice the knee keeps either model
// busy with exponential work, each call taking twice as long (Little's law). Goodput, settled
// and held count the answers in transit.
func TestTransitHoldsASlotButNoWorker(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		model   Model
		spread  Dist
		limit   int
		latency time.Duration
	}{
		{FIFO, Fixed{}, 20, 200 * ms},
		{FIFO, Exponential{}, 40, 400 * ms},
		{PS, Exponential{}, 40, 400 * ms},
	} {
		sc := Scenario{Model: tc.model, Spread: tc.spread, Seed: 1, Transit: 100 * ms,
			Phases: []Phase{{Duration: 30 * time.Second, Capacity: 10, Service: 100 * ms, Rate: 30000}}}
		if k := sc.Knee(sc.Phases[0]); k != 20 {
			t.Fatalf("knee %d, want 20", k)
		}
		res, err := Run(sc, FixedLimit(tc.limit))
		if err != nil {
			t.Fatal(err)
		}
		p := res.Phases[0]
		if rate := float64(p.Succeeded) / 30; math.Abs(rate-100) > 2 {
			t.Errorf("%v limit %d: %.1f calls/s, want 100", tc.model, tc.limit, rate)
		}
		if d := float64(p.MeanLatency-tc.latency) / float64(tc.latency); math.Abs(d) > 0.02 {
			t.Errorf("%v limit %d: mean latency %v, want %v", tc.model, tc.limit, p.MeanLatency, tc.latency)
		}
		if math.Abs(p.Goodput-1) > 0.02 || !p.Overloaded {
			t.Errorf("%v limit %d: goodput %.3f overloaded %v", tc.model, tc.limit, p.Goodput, p.Overloaded)
		}
		if want := float64(tc.limit) / 20; p.Settled != want || math.Abs(p.Held-want) > 0.01 {
			t.Errorf("%v limit %d: settled %v and held %v, want %v", tc.model, tc.limit, p.Settled, p.Held, want)
		}
	}
	// Under light load nothing queues: a call takes its work, then its answer's transit, and
	// the calls in flight (Little's law: 50 a second for 200ms) are an eighth of the knee (80).
	sc := Scenario{Model: PS, Seed: 1, Transit: 100 * ms, Phases: []Phase{{Duration: 30 * time.Second, Capacity: 40, Service: 100 * ms, Rate: 50}}}
	res, err := Run(sc, FixedLimit(1000))
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Phases[0]; p.MeanLatency != 200*ms || p.P99Latency != 200*ms || math.Abs(p.Held-0.125) > 0.01 || p.Overloaded {
		t.Errorf("light load: mean latency %v, p99 %v, held %.3f, overloaded %v: want 200ms, 200ms, 0.125, false", p.MeanLatency, p.P99Latency, p.Held, p.Overloaded)
	}
}

// A scenario whose transit leaves no time for work, or whose service drifts (which would move
// the knee), is refused.
func TestTransitScenariosThatCannotWork(t *testing.T) {
	ph := Phase{Duration: time.Second, Capacity: 4, Service: 10 * time.Millisecond, Rate: 10}
	drift := ph
	drift.ServiceTo = 20 * time.Millisecond
	for name, sc := range map[string]Scenario{
		"negative":       {Phases: []Phase{ph}, Transit: -1},
		"timeout within": {Phases: []Phase{ph}, Transit: 50 * time.Millisecond, Timeout: 50 * time.Millisecond},
		"drift":          {Phases: []Phase{drift}, Transit: 5 * time.Millisecond},
	} {
		if _, err := Run(sc, FixedLimit(4)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
