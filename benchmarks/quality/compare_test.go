package quality

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Rows saved by SaveRows come back whole from LoadRows, and anything else is an error.
func TestSaveAndLoadRows(t *testing.T) {
	rows := []Row{
		{Class: "c", Model: "ps", Contender: "knee", Phase: 1, Knee: 40, Overloaded: true, Settled: 1.1, Goodput: 0.98,
			SettleTime: -1, Jain: 1, Replicas: 10, Seeds: 1, Met: 1, LatencyOver: 1.01},
		{Class: "c", Model: "fifo", Contender: "knee", Phase: 2, Knee: 40, SettleTime: 3 * time.Second, Seeds: 1},
	}
	var b bytes.Buffer
	if err := SaveRows(&b, rows); err != nil {
		t.Fatal(err)
	}
	got, err := LoadRows(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rows) {
		t.Fatalf("loaded %+v, want %+v", got, rows)
	}
	if _, err := LoadRows(strings.NewReader("not json")); err == nil || !strings.Contains(err.Error(), "saved rows") {
		t.Fatalf("LoadRows of garbage: %v, want an error about the saved rows", err)
	}
}

// Compare sets a phase's figures over the variants before and after side by side, marks the
// phases that moved, counts the targets the runs after miss, leaves out phases only one side
// holds, and adds up each contender's runs that meet the targets.
func TestCompare(t *testing.T) {
	row := func(phase int, goodput, settled float64) Row {
		r := Row{Class: "c", Model: "ps", Contender: "knee", Phase: phase, Overloaded: true, Goodput: goodput, Settled: settled, Jain: 1, Replicas: 1, Seeds: 1}
		if r.MeetsTargets() {
			r.Met = 1
		}
		return r
	}
	before := []Row{row(1, 0.96, 1.2), row(1, 0.98, 1.4), row(2, 0.99, 1), row(2, 0.99, 1)}
	compared := func(after []Row, want ...string) string {
		t.Helper()
		var b strings.Builder
		Compare(&b, before, after)
		out := b.String()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("no %q in\n%s", w, out)
			}
		}
		return out
	}
	out := compared([]Row{row(1, 0.97, 1.1), row(1, 0.99, 1.3), row(2, 0.99, 1), row(2, 0.99, 1), row(3, 0.5, 1)},
		"c ps 1                   knee         97.00→98.00     96.0→97.0    1.30→1.20   1.00→1.00     1→2    *\n",
		"c ps 2                   knee         99.00→99.00     99.0→99.0    1.00→1.00   1.00→1.00     2→2\n",
		"knee               meets the targets in 3 of 4 runs of a phase before, 4 of 4 after\n")
	if strings.Contains(out, "c ps 3") {
		t.Errorf("a phase only after holds is compared:\n%s", out)
	}

	// Runs after that miss targets are counted by target, at the end of their phase's line.
	after := []Row{row(1, 0.96, 1.6), row(1, 0.99, 1.6), row(2, 0.96, 1), row(2, 0.99, 1)}
	after[1].LatencyOver, after[1].Met = 1.2, 0
	compared(after,
		"*  missed: latency 1, goodput 1, limit 2\n",
		"*  missed: goodput 1\n",
		"knee               meets the targets in 3 of 4 runs of a phase before, 1 of 4 after\n")

	// Where the rows say which runs best-fixed meets, the lines say how many, and the totals
	// count the runs met among them.
	for _, rs := range [][]Row{before, after} {
		for i := range rs {
			if rs[i].Phase == 1 {
				rs[i].Reachable, rs[i].ReachMet = 1, rs[i].Met
			}
		}
	}
	compared(after,
		"*  missed: latency 1, goodput 1, limit 2 (best-fixed meets 2)\n",
		"*  missed: goodput 1\n",
		"knee               meets the targets in 3 of 4 runs of a phase before, 1 of 4 after; of the 2 best-fixed meets, 1 before, 0 after\n")
}

// Missed names each target a phase misses, and none when it meets them all.
func TestMissed(t *testing.T) {
	for _, c := range []struct {
		row  Row
		want string
	}{
		{Row{Overloaded: true, Goodput: 0.97, Settled: 1.5, Replicas: 1}, ""},
		{Row{Overloaded: true, Goodput: 0.96, Settled: 1.6, Replicas: 10, Jain: 0.9, LatencyOver: 1.1}, "latency goodput limit jain"},
		{Row{Goodput: 0.99, Settled: 3, Replicas: 1}, "goodput"},
		{Row{Overloaded: true, Goodput: 1, Settled: 1, Replicas: 10, Jain: 0.94}, "jain"},
	} {
		if got := strings.Join(c.row.Missed(), " "); got != c.want {
			t.Errorf("%+v: Missed() = %q, want %q", c.row, got, c.want)
		}
	}
}
