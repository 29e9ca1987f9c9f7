package quality

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/resilience4cata/r4c/internal/sim"
)

// A factor whose limits are those of a factor before it in every phase is not run again, and
// the replicas' limits stay within the limit target: twenty replicas of a knee of 60 at 1.5
// times it hold 4 slots each (80), not 5 (100). The light phases' candidate comes last.
func TestFixedCandidatesAreDistinctAndWithinTheTarget(t *testing.T) {
	phases := func(knees ...int) []sim.Phase {
		var ps []sim.Phase
		for _, k := range knees {
			ps = append(ps, sim.Phase{Duration: time.Second, Capacity: k, Service: service, Rate: 1})
		}
		return ps
	}
	for _, tc := range []struct {
		name     string
		replicas int
		knees    []int
		want     []float64
	}{
		{"a lone limit of a knee of 40", 1, []int{40}, FixedFactors},
		{"four replicas of a knee of 8", 4, []int{8}, []float64{1, 1.3}},
		{"twenty replicas of a knee of 60", 20, []int{60}, []float64{1, 1.2}},
		{"a knee of 3, then of 60", 1, []int{3, 60}, FixedFactors},
		{"a knee of 2", 1, []int{2}, []float64{1, 1.3}},
	} {
		sc := sim.Scenario{Replicas: tc.replicas, Phases: phases(tc.knees...)}
		limits := fixedCandidates(sc, FixedFactors)
		if last := limits[len(limits)-1]; last != (fixedLimit{LightFactor, 0}) {
			t.Errorf("%s: the last candidate is %+v, want LightFactor without bound", tc.name, last)
		}
		var got []float64
		for _, l := range limits[:len(limits)-1] {
			if l.most != TargetSettled {
				t.Errorf("%s: candidate %+v not bounded by the limit target", tc.name, l)
			}
			got = append(got, l.factor)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: candidates %v, want %v", tc.name, got, tc.want)
		}
		for _, f := range got {
			for _, k := range tc.knees {
				if sum := tc.replicas * sim.KneeShare(sc, k, f, TargetSettled); float64(sum) > TargetSettled*float64(k) && sum > tc.replicas {
					t.Errorf("%s: at %g times the knee of %d the limits add up to %d, above %g times it", tc.name, f, k, sum, TargetSettled)
				}
			}
		}
	}
}

// pickFixed takes each phase, figures and readings of the limits, from the lowest limit that
// meets every target, or the one that misses the fewest, then has the most goodput: the
// anchors' latency counts.
func TestPickFixedTakesTheBestCandidateOfEachPhase(t *testing.T) {
	sc := &sim.Scenario{Name: "two", Replicas: 1, Phases: []sim.Phase{
		{Duration: time.Second, Capacity: 10, Service: service}, {Duration: time.Second, Capacity: 10, Service: service}}}
	phase := func(goodput float64, latency time.Duration) sim.PhaseResult {
		return sim.PhaseResult{Overloaded: true, Goodput: goodput, Settled: 1.2, Jain: 1, MeanService: service, MeanLatency: latency}
	}
	candidate := func(sum int, p1, p2 sim.PhaseResult) *sim.Result {
		return &sim.Result{Scenario: sc, Phases: []sim.PhaseResult{p1, p2}, Ticks: []sim.Tick{
			{At: 0, Phase: 0, Sum: sum}, {At: time.Second / 2, Phase: 0, Sum: sum},
			{At: time.Second, Phase: 1, Sum: sum + 1}, {At: 3 * time.Second / 2, Phase: 1, Sum: sum + 1}}}
	}
	// Candidates in the order of their limits (10 and 12 in every reading).
	low := candidate(10, phase(0.995, service), phase(0.90, service))       // the most goodput first, then too little
	high := candidate(12, phase(0.99, service), phase(0.98, 11*service/10)) // enough in both, latency above the anchor's in the second
	run := Run{Class: "two", Model: sim.PS, Contender: bestFixed()}
	two := []fixedLimit{{1, TargetSettled}, {1.2, TargetSettled}}

	// No anchors: phase 1 from low (more goodput, both meet the targets), phase 2 from high
	// (low misses the goodput target).
	got := pick(t, run, two, nil, low, high)
	if got.Phases[0].Goodput != 0.995 || got.Phases[1].Goodput != 0.98 {
		t.Errorf("goodputs %v and %v, want 0.995 (low) and 0.98 (high)", got.Phases[0].Goodput, got.Phases[1].Goodput)
	}
	var sums []int
	for _, tk := range got.Ticks {
		sums = append(sums, tk.Sum)
	}
	if want := []int{10, 10, 13, 13}; !slices.Equal(sums, want) {
		t.Errorf("readings of the limits %v, want %v: each phase's from its candidate", sums, want)
	}

	// An anchor reaching the goodput target in phase 1 at the service time: low there misses
	// nothing and stays; in phase 2 an anchor at the service time makes high miss latency, and
	// low misses goodput: one target each, and high has more goodput.
	anchors := []Row{
		{Class: "two", Model: "ps", Contender: "envoy", Anchor: true, Phase: 1, Overloaded: true, Goodput: 0.99, MeanLat: 1},
		{Class: "two", Model: "ps", Contender: "envoy", Anchor: true, Phase: 2, Overloaded: true, Goodput: 0.99, MeanLat: 1},
	}
	got = pick(t, run, two, anchors, low, high)
	if got.Phases[0].Goodput != 0.995 || got.Phases[1].Goodput != 0.98 {
		t.Errorf("with anchors: goodputs %v and %v, want 0.995 and 0.98", got.Phases[0].Goodput, got.Phases[1].Goodput)
	}
	// A high candidate that misses latency in phase 1 loses it to low, whose goodput is lower.
	slow := candidate(14, phase(0.999, 12*service/10), phase(0.999, 12*service/10))
	got = pick(t, run, two, anchors, low, slow)
	if got.Phases[0].Goodput != 0.995 {
		t.Errorf("phase 1 goodput %v, want low's 0.995: slow misses the anchor's latency", got.Phases[0].Goodput)
	}
	// Of two limits that meet every target, the lower stays, though the higher has more goodput.
	more := candidate(12, phase(0.999, service), phase(0.999, service))
	got = pick(t, run, two, nil, low, more)
	if got.Phases[0].Goodput != 0.995 || got.Ticks[0].Sum != 10 {
		t.Errorf("phase 1 goodput %v, limits %d: want the lower limit's (0.995, 10), which meets every target", got.Phases[0].Goodput, got.Ticks[0].Sum)
	}
	// An unbounded candidate (LightFactor) competes in light phases only: it does not take
	// the overloaded phase 2 from high, though it meets the goodput target there, and takes the
	// light phase 1 where the bounded one misses it.
	lightPhase := phase(0.999, service)
	lightPhase.Overloaded = false
	unbounded := candidate(50, lightPhase, phase(0.999, service))
	bounded := candidate(10, phase(0.99, service), phase(0.90, service))
	bounded.Phases[0].Overloaded = false // 99% misses the light target
	got = pick(t, run, []fixedLimit{{1, TargetSettled}, {LightFactor, 0}}, nil, bounded, unbounded)
	if got.Phases[0].Goodput != 0.999 || got.Phases[1].Goodput != 0.90 {
		t.Errorf("with an unbounded candidate: goodputs %v and %v, want 0.999 (light, unbounded) and 0.90 (overloaded, bounded)", got.Phases[0].Goodput, got.Phases[1].Goodput)
	}
	if low.Phases[0].Goodput != 0.995 || len(low.Ticks) != 4 {
		t.Error("pickFixed changed a candidate's result")
	}
}

// pick is pickFixed over candidates run in advance.
func pick(t *testing.T, run Run, limits []fixedLimit, anchors []Row, candidates ...*sim.Result) *sim.Result {
	t.Helper()
	got, err := pickFixed(run, limits, func(c int) (*sim.Result, error) { return candidates[c], nil }, anchors)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// pickFixed runs a candidate only while some phase it competes in has no pick that meets every
// target, and returns the error of a run.
func TestPickFixedRunsOnlyTheCandidatesItNeeds(t *testing.T) {
	sc := &sim.Scenario{Name: "two", Replicas: 1}
	meets := sim.PhaseResult{Overloaded: true, Goodput: 0.99, Settled: 1.2, Jain: 1, MeanService: service, MeanLatency: service}
	short := meets
	short.Goodput = 0.9
	lightShort := short
	lightShort.Overloaded = false
	lightMeets := meets
	lightMeets.Overloaded = false
	result := func(ps ...sim.PhaseResult) *sim.Result { return &sim.Result{Scenario: sc, Phases: ps} }
	run := Run{Class: "two", Model: sim.PS, Contender: bestFixed()}
	limits := []fixedLimit{{1, TargetSettled}, {1.2, TargetSettled}, {1.5, TargetSettled}, {LightFactor, 0}}
	for _, tc := range []struct {
		name       string
		candidates []*sim.Result
		want       []int
		goodputs   []float64
	}{
		{"the first meets every target", []*sim.Result{result(meets, meets), result(meets, meets), result(meets, meets), result(meets, meets)}, []int{0}, []float64{0.99, 0.99}},
		{"the second meets what the first misses", []*sim.Result{result(meets, short), result(short, meets), result(meets, meets), result(meets, meets)}, []int{0, 1}, []float64{0.99, 0.99}},
		{"none meets an overloaded phase: the light phases' candidate does not compete", []*sim.Result{result(short), result(short), result(short), result(meets)}, []int{0, 1, 2}, []float64{0.9}},
		{"a light phase missed by the bounded ones", []*sim.Result{result(meets, lightShort), result(meets, lightShort), result(meets, lightShort), result(meets, lightMeets)}, []int{0, 1, 2, 3}, []float64{0.99, 0.99}},
	} {
		var ran []int
		got, err := pickFixed(run, limits, func(c int) (*sim.Result, error) {
			ran = append(ran, c)
			return tc.candidates[c], nil
		}, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(ran, tc.want) {
			t.Errorf("%s: ran candidates %v, want %v", tc.name, ran, tc.want)
		}
		var goodputs []float64
		for _, p := range got.Phases {
			goodputs = append(goodputs, p.Goodput)
		}
		if !slices.Equal(goodputs, tc.goodputs) {
			t.Errorf("%s: goodputs %v, want %v", tc.name, goodputs, tc.goodputs)
		}
	}
	boom := errors.New("boom")
	if _, err := pickFixed(run, limits, func(c int) (*sim.Result, error) {
		if c == 1 {
			return nil, boom
		}
		return result(short), nil
	}, nil); !errors.Is(err, boom) {
		t.Errorf("error %v, want the second candidate's run's", err)
	}
}

// Anchored counts, for every row, whether best-fixed meets the targets in the same run of the
// phase, and whether the row does too; Worst adds them up and Reach reports them.
func TestReachCountsTheRunsBestFixedMeets(t *testing.T) {
	row := func(contender string, variant uint64, goodput float64) Row {
		return Row{Class: "c", Model: "ps", Contender: contender, Variant: variant, Phase: 1, Overloaded: true,
			Goodput: goodput, Settled: 1.2, Jain: 1, MeanLat: 1.1, Seeds: 1}
	}
	rows := []Row{
		row(BestFixed, 0, 0.99), row(BestFixed, 1, 0.99), row(BestFixed, 2, 0.95),
		row("knee", 0, 0.98), row("knee", 1, 0.96), row("knee", 2, 0.98),
	}
	rows = Anchored(rows, nil)
	want := map[string][2]int{"knee": {1, 2}, BestFixed: {2, 2}}
	for name, w := range want {
		if met, reachable := Reach(Worst(rows), name); met != w[0] || reachable != w[1] {
			t.Errorf("%s: meets %d of the %d runs best-fixed meets, want %d of %d", name, met, reachable, w[0], w[1])
		}
	}
	// Saved rows of best-fixed count as well: knee's rows alone, held to them.
	saved := slices.Clone(rows[:3])
	knee := Anchored([]Row{row("knee", 0, 0.98), row("knee", 1, 0.96), row("knee", 2, 0.98)}, saved)
	if met, reachable := Reach(Worst(knee), "knee"); met != 1 || reachable != 2 {
		t.Errorf("held to saved rows: knee meets %d of %d, want 1 of 2", met, reachable)
	}
}

// In the shared runs, best-fixed holds every overloaded phase within the limit target, and each
// phase's figures are those of one of its candidates, run alone.
func TestBestFixedIsOneOfItsCandidatesPhaseByPhase(t *testing.T) {
	runs := benchmark(t)
	checked := 0
	for _, r := range runs {
		if r.Contender.Name != BestFixed || r.Class != "steps" && r.Class != "replicas-recover" {
			continue
		}
		sc := classByName(t, r.Class).Make(r.Model, testScale)
		var candidates []*sim.Result
		for _, l := range fixedCandidates(sc, FixedFactors) {
			res, err := sim.Run(sc, sim.KneeLimitWithin(sc, l.factor, l.most))
			if err != nil {
				t.Fatal(err)
			}
			candidates = append(candidates, res)
		}
		for i, p := range r.Result.Phases {
			if p.Overloaded && p.Settled > TargetSettled+1e-9 {
				t.Errorf("%s/%s phase %d: best-fixed settled at %v times the knee", r.Class, r.Model, i+1, p.Settled)
			}
			if !slices.ContainsFunc(candidates, func(c *sim.Result) bool {
				return c.Phases[i].Succeeded == p.Succeeded && c.Phases[i].Settled == p.Settled
			}) {
				t.Errorf("%s/%s phase %d: best-fixed's figures are no candidate's", r.Class, r.Model, i+1)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no run of best-fixed checked")
	}
}
