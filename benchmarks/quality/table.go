package quality

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/resilience4cata/r4c/internal/sim"
)

// Row is one phase of one run, in the figures the bench reports.
type Row struct {
	Class, Model, Contender string
	Anchor                  bool   // the contender is an anchor (Contender.Anchor)
	Variant                 uint64 // the scenario's variant (Run.Seed)
	Phase                   int
	Knee                    int
	Overloaded              bool
	Settled                 float64 // the limits' sum over the knee, second half of the phase
	Held                    float64 // the calls the dependency holds over the knee, the same readings
	Goodput                 float64 // over the best possible
	MeanLat, P99Lat         float64 // over the mean service time
	DropShare               float64 // timed-out calls over admitted ones
	Rejected                float64 // rejected calls over offered ones
	SettleTime              time.Duration
	Jain                    float64
	Replicas                int // limiters sharing the dependency
	Seeds                   int // runs behind the row: more than one in a row of Worst
	// Met counts the runs behind the row that meet the targets (MeetsTargets): 0 or 1 in a row
	// of Rows, summed over the variants by Worst, whose own figures may meet them in none.
	Met int
	// LatencyOver is the mean latency over the best of the anchors' (Contender.Anchor): the
	// lowest mean latency among the anchors that reach the goodput target in the same run of
	// the phase (the same scenario, variant and model). 0 when none reaches it: no anchor sets
	// a latency to beat there.
	LatencyOver float64
	// Reachable counts the runs behind the row in which BestFixed meets the targets (its row of
	// the same run of the phase, among the rows or the anchors' rows given to Anchored), and
	// ReachMet those of them in which this row meets them too: 0 or 1 each in a row of Rows,
	// summed by Worst.
	Reachable, ReachMet int
}

// Rows returns one row per phase of every run, each held to the latency of the anchors' runs
// among them (see LatencyOver and Anchored).
func Rows(runs []Run) []Row {
	var rows []Row
	for _, r := range runs {
		rows = append(rows, rowsOf(r)...)
	}
	return Anchored(rows, rows)
}

// rowsOf returns one row per phase of a run, not yet held to the anchors' latency.
func rowsOf(r Run) []Row {
	var rows []Row
	for i, p := range r.Result.Phases {
		row := Row{Class: r.Class, Model: r.Model.String(), Contender: r.Contender.Name, Anchor: r.Contender.Anchor,
			Variant: r.Seed, Phase: i + 1, Knee: r.Result.Scenario.Knee(p.Phase), Overloaded: p.Overloaded, Settled: p.Settled,
			Held: p.Held, Goodput: p.Goodput, SettleTime: p.SettleTime, Jain: p.Jain,
			Replicas: r.Result.Scenario.Replicas, Seeds: 1}
		if p.MeanService > 0 {
			row.MeanLat = float64(p.MeanLatency) / float64(p.MeanService)
			row.P99Lat = float64(p.P99Latency) / float64(p.MeanService)
		}
		if p.Admitted > 0 {
			row.DropShare = float64(p.TimedOut) / float64(p.Admitted)
		}
		if p.Offered > 0 {
			row.Rejected = float64(p.Rejected) / float64(p.Offered)
		}
		rows = append(rows, row)
	}
	return rows
}

// Anchored sets each row's LatencyOver, and then its Met, from the anchors' rows among
// anchors: their lowest mean latency in the same run of the phase (class, model, variant and
// phase) among those that reach the goodput target. The anchors' rows may come from another
// run of the same scenarios and variants, saved by SaveRows: a run of one contender alone is
// then held to the latency target as if the anchors had run beside it, whose runs are the
// longest. It then sets each row's Reachable and ReachMet from the rows of BestFixed among
// both. It changes rows in place and returns them.
func Anchored(rows, anchors []Row) []Row {
	type key struct {
		class, model string
		variant      uint64
		phase        int
	}
	best := map[key]float64{} // the anchors' lowest mean latency over the service time
	for _, a := range anchors {
		target := TargetGoodputLight
		if a.Overloaded {
			target = TargetGoodput
		}
		if !a.Anchor || a.MeanLat == 0 || a.Goodput < target {
			continue
		}
		k := key{a.Class, a.Model, a.Variant, a.Phase}
		if b := best[k]; b == 0 || a.MeanLat < b {
			best[k] = a.MeanLat
		}
	}
	for i := range rows {
		r := &rows[i]
		r.LatencyOver = 0
		if b := best[key{r.Class, r.Model, r.Variant, r.Phase}]; b > 0 && r.MeanLat > 0 {
			r.LatencyOver = r.MeanLat / b
		}
		r.Met = 0
		if r.MeetsTargets() {
			r.Met = 1
		}
	}
	reach := map[key]bool{} // BestFixed meets the targets in that run of the phase
	for _, set := range [][]Row{anchors, rows} {
		for _, r := range set {
			if r.Contender == BestFixed {
				reach[key{r.Class, r.Model, r.Variant, r.Phase}] = r.Met > 0
			}
		}
	}
	for i := range rows {
		r := &rows[i]
		r.Reachable, r.ReachMet = 0, 0
		if reach[key{r.Class, r.Model, r.Variant, r.Phase}] {
			r.Reachable, r.ReachMet = 1, r.Met
		}
	}
	return rows
}

// Worst folds the rows of the same class, model, contender and phase (runs of several seeds)
// into one, with the worst value of each figure: the lowest goodput and Jain index, the
// highest settled limit and calls held, latencies (also over the anchors'), shares of drops and
// rejections, and settle time; the counts of runs (Seeds) and of runs meeting the targets (Met)
// add up. Rows keep the order of their first appearance.
func Worst(rows []Row) []Row {
	type key struct {
		class, model, contender string
		phase                   int
	}
	at := map[key]int{}
	var out []Row
	for _, r := range rows {
		k := key{r.Class, r.Model, r.Contender, r.Phase}
		i, ok := at[k]
		if !ok {
			at[k] = len(out)
			out = append(out, r)
			continue
		}
		w := &out[i]
		w.Seeds += r.Seeds
		w.Met += r.Met
		w.Reachable += r.Reachable
		w.ReachMet += r.ReachMet
		w.Goodput = min(w.Goodput, r.Goodput)
		w.Jain = min(w.Jain, r.Jain)
		w.Settled = max(w.Settled, r.Settled)
		w.Held = max(w.Held, r.Held)
		w.MeanLat = max(w.MeanLat, r.MeanLat)
		w.P99Lat = max(w.P99Lat, r.P99Lat)
		w.DropShare = max(w.DropShare, r.DropShare)
		w.Rejected = max(w.Rejected, r.Rejected)
		w.LatencyOver = max(w.LatencyOver, r.LatencyOver)
		if w.SettleTime >= 0 && (r.SettleTime < 0 || r.SettleTime > w.SettleTime) {
			w.SettleTime = r.SettleTime
		}
	}
	return out
}

// WriteText prints the rows as an aligned text table, grouped by scenario and phase.
func WriteText(w io.Writer, rows []Row) {
	fmt.Fprintf(w, "%-9s %-4s %-2s %-5s %-10s %7s %6s %7s %6s %6s %6s %6s %7s %5s %6s\n",
		"scenario", "dep", "ph", "knee", "algorithm", "limit/k", "held/k", "goodput", "lat/s", "p99/s", "drops", "rej", "settle", "jain", "lat/an")
	for _, r := range rows {
		knee := fmt.Sprint(r.Knee)
		if !r.Overloaded {
			knee += "L" // light: the load is below the knee
		}
		over := "-" // no anchor reaches the goodput target
		if r.LatencyOver > 0 {
			over = fmt.Sprintf("%.2f", r.LatencyOver)
		}
		fmt.Fprintf(w, "%-9s %-4s %-2d %-5s %-10s %7.2f %6.2f %6.1f%% %6.2f %6.2f %5.1f%% %5.1f%% %7s %5.2f %6s\n",
			r.Class, r.Model, r.Phase, knee, r.Contender, r.Settled, r.Held, 100*r.Goodput, r.MeanLat, r.P99Lat,
			100*r.DropShare, 100*r.Rejected, settle(r.SettleTime), r.Jain, over)
	}
}

// The targets a phase is held to (see MeetsTargets).
const (
	TargetGoodput      = 0.97  // overloaded phases
	TargetGoodputLight = 0.995 // light phases: nothing needs to be rejected
	TargetSettled      = 1.5   // the limits' sum over the knee, overloaded phases
	TargetJain         = 0.95  // Jain's index of the replicas' limits, with several replicas
	// TargetLatencyOver is the most mean latency over the best anchor's: level with it, within
	// the noise of a phase's mean latency (about 1% under light load with exponential work).
	TargetLatencyOver = 1.01
)

// MeetsTargets reports whether the phase meets every target that applies to it: a goodput of
// at least TargetGoodput (TargetGoodputLight in a light phase), a mean latency no higher than
// the best of the anchors that reach that goodput (LatencyOver at most TargetLatencyOver), a settled limit of
// at most TargetSettled while overloaded, and a Jain index of at least TargetJain when several
// replicas share the dependency.
func (r Row) MeetsTargets() bool { return len(r.Missed()) == 0 }

// Missed returns the targets the phase misses (see MeetsTargets), by name: "latency",
// "goodput", "limit" and "jain", in that order; none when it meets them all.
func (r Row) Missed() []string {
	var missed []string
	if r.LatencyOver > TargetLatencyOver {
		missed = append(missed, "latency")
	}
	if r.Overloaded && r.Goodput < TargetGoodput || !r.Overloaded && r.Goodput < TargetGoodputLight {
		missed = append(missed, "goodput")
	}
	if r.Overloaded && r.Settled > TargetSettled {
		missed = append(missed, "limit")
	}
	if r.Replicas > 1 && r.Jain < TargetJain {
		missed = append(missed, "jain")
	}
	return missed
}

// Tally counts, over the rows of Worst, a contender's phases, those in which it meets the targets in
// every variant (met), the runs of a phase behind them (runs: a phase in one variant) and those
// of the runs that meet the targets (runsMet).
func Tally(worst []Row, contender string) (met, phases, runsMet, runs int) {
	for _, r := range worst {
		if r.Contender != contender {
			continue
		}
		phases++
		if r.MeetsTargets() {
			met++
		}
		runsMet += r.Met
		runs += r.Seeds
	}
	return met, phases, runsMet, runs
}

// Reach counts, over the rows of Worst, the runs of a phase in which BestFixed meets the targets
// (reachable) and those of them in which the contender meets them too (met).
func Reach(worst []Row, contender string) (met, reachable int) {
	for _, r := range worst {
		if r.Contender == contender {
			met += r.ReachMet
			reachable += r.Reachable
		}
	}
	return met, reachable
}

func settle(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return strings.TrimSuffix(d.Round(100*time.Millisecond).String(), "0ms")
}

var _ = sim.PS
