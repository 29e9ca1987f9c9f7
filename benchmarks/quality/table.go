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
	Phase                   int
	Knee                    int
	Overloaded              bool
	Settled                 float64 // the limits' sum over the knee, second half of the phase
	Goodput                 float64 // over the best possible
	MeanLat, P99Lat         float64 // over the mean service time
	DropShare               float64 // timed-out calls over admitted ones
	Rejected                float64 // rejected calls over offered ones
	SettleTime              time.Duration
	Jain                    float64
}

// Rows returns one row per phase of every run.
func Rows(runs []Run) []Row {
	var rows []Row
	for _, r := range runs {
		for i, p := range r.Result.Phases {
			row := Row{Class: r.Class, Model: r.Model.String(), Contender: r.Contender.Name, Phase: i + 1,
				Knee: p.Phase.Capacity, Overloaded: p.Overloaded, Settled: p.Settled, Goodput: p.Goodput,
				SettleTime: p.SettleTime, Jain: p.Jain}
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
	}
	return rows
}

// WriteText prints the rows as an aligned text table, grouped by scenario and phase.
func WriteText(w io.Writer, rows []Row) {
	fmt.Fprintf(w, "%-9s %-4s %-2s %-5s %-10s %7s %7s %6s %6s %6s %6s %7s %5s\n",
		"scenario", "dep", "ph", "knee", "algorithm", "limit/k", "goodput", "lat/s", "p99/s", "drops", "rej", "settle", "jain")
	for _, r := range rows {
		knee := fmt.Sprint(r.Knee)
		if !r.Overloaded {
			knee += "L" // light: the load is below the knee
		}
		fmt.Fprintf(w, "%-9s %-4s %-2d %-5s %-10s %7.2f %6.1f%% %6.2f %6.2f %5.1f%% %5.1f%% %7s %5.2f\n",
			r.Class, r.Model, r.Phase, knee, r.Contender, r.Settled, 100*r.Goodput, r.MeanLat, r.P99Lat,
			100*r.DropShare, 100*r.Rejected, settle(r.SettleTime), r.Jain)
	}
}

func settle(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return strings.TrimSuffix(d.Round(100*time.Millisecond).String(), "0ms")
}

var _ = sim.PS
