package quality

import (
	"slices"

	"github.com/resilience4cata/r4c/internal/sim"
)

// BestFixed is the name of the reference that picks, phase by phase, the best of the limits
// fixed at FixedFactors times the knee (see Contender.Fixed).
const BestFixed = "best-fixed"

// FixedFactors are the multiples of the knee BestFixed chooses from: from the knee itself to the
// most the limit target allows (TargetSettled), a tenth apart.
var FixedFactors = []float64{1, 1.1, 1.2, 1.3, 1.4, 1.5}

// LightFactor is the multiple of the knee BestFixed also runs, without the limit target's bound,
// for light phases, which that target does not apply to: their bursts may need more room than a
// share of 1.5 times the knee (ten replicas at 60% of a knee of 40 hold 6 slots each there, and
// serve 97.5% to 97.7% of the best goodput, where light phases are held to 99.5%).
const LightFactor = 5

// fixedLimit is a candidate of BestFixed: factor times the knee, the replicas' limits adding up
// to at most most times it (0: no bound; see sim.KneeLimitWithin).
type fixedLimit struct{ factor, most float64 }

// bestFixed is the reference BestFixed.
func bestFixed() Contender {
	return Contender{Name: BestFixed, Reference: true, Fixed: FixedFactors,
		Doc: "a reference, not an algorithm: phase by phase, the best of the limits fixed at 1, 1.1, 1.2, 1.3, 1.4 and 1.5 times the knee of the phase under way, known in advance " +
			"(shared evenly by the replicas, whose limits add up to no more than 1.5 times the knee; `sim.KneeLimitWithin`), and, for light phases, which the limit target does not apply to, at 5 times it: " +
			"the lowest that meets every target in that run, or where none does, the one that misses the fewest, then the one with the most goodput. " +
			"Where it misses a target, no limit held at a multiple of the knee within the limit target meets it; the summary counts how many of the runs it meets each contender meets.",
		Weak: "On this set it meets every target in every run: what a contender misses here, some limit fixed at a multiple of the knee meets. " +
			"On the wider set it misses the goodput target where no share of the knee within the limit target serves 97%: twenty replicas of three slots each, which idle between their own arrivals (90% at 1.33 times the knee, the most within the bound), a knee of 3 (91.5% to 95%), and a very slow dependency's overload on PS (700ms calls: 96.5%)."}
}

// fixedCandidates returns the limits BestFixed runs on sc: each of factors, bounded by
// TargetSettled, whose limits differ in some phase of sc from those of every factor before it
// (KneeShare; a run of each is enough: a knee of 8 shared by four replicas gives 2 slots each at
// any of FixedFactors up to 1.2, and 3 from 1.3 up to 1.5), then LightFactor without the bound.
func fixedCandidates(sc sim.Scenario, factors []float64) []fixedLimit {
	var out []fixedLimit
	var seen [][]int
	for _, f := range factors {
		l := fixedLimit{f, TargetSettled}
		if shares := l.shares(sc); !slices.ContainsFunc(seen, func(s []int) bool { return slices.Equal(s, shares) }) {
			seen = append(seen, shares)
			out = append(out, l)
		}
	}
	return append(out, fixedLimit{LightFactor, 0})
}

// shares returns each replica's limit under l in each phase of sc: two limits of the same
// shares run alike.
func (l fixedLimit) shares(sc sim.Scenario) []int {
	shares := make([]int, len(sc.Phases))
	for i, ph := range sc.Phases {
		shares[i] = sim.KneeShare(sc, sc.Knee(ph), l.factor, l.most)
	}
	return shares
}

// pickFixed returns the result of a BestFixed run made of the runs of its candidates, limits in
// their order (fixedCandidates; the first bounded), each run by runLimit (its index in limits;
// run.Result is unused): each phase, its figures and its readings of the limits, is taken from
// the lowest limit that meets every target (its row held to the latency of the anchors' rows), or
// where none does, from the one that misses the fewest, then the one with the most goodput. An
// unbounded limit (LightFactor) competes in light phases only. A candidate runs only while some
// phase it competes in has no pick that meets every target: none after it would be picked there
// (the lowest that meets them stays), so the result is the same as if every one had run, and a
// run of best-fixed costs about two or three runs of a limit instead of seven.
func pickFixed(run Run, limits []fixedLimit, runLimit func(int) (*sim.Result, error), anchors []Row) (*sim.Result, error) {
	var best []int
	var chosen []Row
	results := make([]*sim.Result, len(limits))
	for c, l := range limits {
		if c > 0 && !slices.ContainsFunc(chosen, func(r Row) bool {
			return len(r.Missed()) > 0 && (l.most != 0 || !r.Overloaded)
		}) {
			continue
		}
		res, err := runLimit(c)
		if err != nil {
			return nil, err
		}
		results[c] = res
		run.Result = res
		rows := Anchored(rowsOf(run), anchors)
		if c == 0 {
			best, chosen = make([]int, len(rows)), rows
			continue
		}
		for i, r := range rows {
			if l.most == 0 && r.Overloaded {
				continue // LightFactor: for light phases only
			}
			if better(r, chosen[i]) {
				best[i], chosen[i] = c, r
			}
		}
	}
	out := *results[0]
	out.Phases = make([]sim.PhaseResult, len(best))
	out.Ticks = nil
	for i, c := range best {
		out.Phases[i] = results[c].Phases[i]
		for _, t := range results[c].Ticks {
			if t.Phase == i {
				out.Ticks = append(out.Ticks, t)
			}
		}
	}
	return &out, nil
}

// better reports whether row a of a phase is a better pick than row b of the same phase, of a
// lower limit: fewer targets missed, then, if b misses some, more goodput. Of limits that meet
// every target the lowest stays: what the targets ask, no more.
func better(a, b Row) bool {
	if ma, mb := len(a.Missed()), len(b.Missed()); ma != mb || ma == 0 {
		return ma < mb
	}
	return a.Goodput > b.Goodput
}
