package quality

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// SaveRows writes rows (the rows of Rows, over every variant) as JSON, for Compare to read back
// in a later run, typically of another build of the code.
func SaveRows(w io.Writer, rows []Row) error {
	return json.NewEncoder(w).Encode(rows)
}

// LoadRows reads rows written by SaveRows.
func LoadRows(r io.Reader) ([]Row, error) {
	var rows []Row
	if err := json.NewDecoder(r).Decode(&rows); err != nil {
		return nil, fmt.Errorf("quality: reading saved rows: %w", err)
	}
	return rows, nil
}

// phaseStats sums the runs of one phase of one contender over the variants.
type phaseStats struct {
	runs, met              int
	reachable, reachMet    int            // runs best-fixed meets, and of those the runs met
	goodput, settled, jain float64        // sums
	lowest                 float64        // the lowest goodput
	missed                 map[string]int // runs that miss each target (see Row.Missed)
}

func (s *phaseStats) add(r Row) {
	if s.runs == 0 || r.Goodput < s.lowest {
		s.lowest = r.Goodput
	}
	s.runs++
	s.met += r.Met
	s.reachable += r.Reachable
	s.reachMet += r.ReachMet
	s.goodput += r.Goodput
	s.settled += r.Settled
	s.jain += r.Jain
	for _, m := range r.Missed() {
		if s.missed == nil {
			s.missed = map[string]int{}
		}
		s.missed[m]++
	}
}

// misses lists the runs that miss each target, in the order of Row.Missed ("" when none do).
func (s *phaseStats) misses() string {
	var parts []string
	for _, m := range []string{"latency", "goodput", "limit", "jain"} {
		if n := s.missed[m]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", m, n))
		}
	}
	return strings.Join(parts, ", ")
}

func (s *phaseStats) mean(sum float64) float64 { return sum / float64(max(1, s.runs)) }

type phaseKey struct {
	class, model, contender string
	phase                   int
}

// statsOf folds rows into one phaseStats per phase of each contender, in the order in which
// the phases first appear.
func statsOf(rows []Row) (map[phaseKey]*phaseStats, []phaseKey) {
	stats := map[phaseKey]*phaseStats{}
	var order []phaseKey
	for _, r := range rows {
		k := phaseKey{r.Class, r.Model, r.Contender, r.Phase}
		s := stats[k]
		if s == nil {
			s = &phaseStats{}
			stats[k] = s
			order = append(order, k)
		}
		s.add(r)
	}
	return stats, order
}

// Compare prints, for each phase of each contender that both before and after hold (rows of
// Rows over several variants, before typically saved by another build with SaveRows), the two
// side by side: the mean goodput over the variants and the lowest, the mean sum of the limits
// over the knee, the mean Jain index, and the runs that meet the targets; then each contender's
// runs meeting the targets in all. A line whose figures moved is marked "*"; a line ends with
// the runs after that miss each target (see Row.Missed), where any do, and how many runs the
// reference BestFixed meets there (see Row.Reachable), where its rows were given. The worst figure of
// a phase moves by points when a change reshuffles which variant is unlucky; the means and the
// counts say whether the change helps.
func Compare(w io.Writer, before, after []Row) {
	b, _ := statsOf(before)
	a, order := statsOf(after)
	fmt.Fprintf(w, "%-24s %-10s %15s %13s %11s %11s %9s\n", "phase", "algorithm", "goodput mean", "lowest", "limit/knee", "jain", "meeting")
	type total struct{ before, after, runsBefore, runsAfter, reachBefore, reachAfter, reachable int }
	totals := map[string]*total{}
	var names []string
	for _, k := range order {
		x, y := b[k], a[k]
		if x == nil {
			continue
		}
		t := totals[k.contender]
		if t == nil {
			t = &total{}
			totals[k.contender] = t
			names = append(names, k.contender)
		}
		t.before += x.met
		t.after += y.met
		t.runsBefore += x.runs
		t.runsAfter += y.runs
		t.reachBefore += x.reachMet
		t.reachAfter += y.reachMet
		t.reachable += y.reachable
		line := fmt.Sprintf("%-24s %-10s %7.2f→%-7.2f %6.1f→%-6.1f %5.2f→%-5.2f %5.2f→%-5.2f %4d→%-4d",
			strings.Join([]string{k.class, k.model, fmt.Sprint(k.phase)}, " "), k.contender,
			100*x.mean(x.goodput), 100*y.mean(y.goodput), 100*x.lowest, 100*y.lowest,
			x.mean(x.settled), y.mean(y.settled), x.mean(x.jain), y.mean(y.jain), x.met, y.met)
		if moved(x, y) {
			line += " *"
		} else {
			line += "  "
		}
		if m := y.misses(); m != "" {
			line += "  missed: " + m
			if y.reachable > 0 && k.contender != BestFixed {
				line += fmt.Sprintf(" (%s meets %d)", BestFixed, y.reachable)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	for _, name := range names {
		t := totals[name]
		fmt.Fprintf(w, "%-18s meets the targets in %d of %d runs of a phase before, %d of %d after", name, t.before, t.runsBefore, t.after, t.runsAfter)
		if t.reachable > 0 && name != BestFixed {
			fmt.Fprintf(w, "; of the %d %s meets, %d before, %d after", t.reachable, BestFixed, t.reachBefore, t.reachAfter)
		}
		fmt.Fprintln(w)
	}
}

// moved reports whether a phase's figures differ as Compare prints them.
func moved(x, y *phaseStats) bool {
	shown := func(s *phaseStats) string {
		return fmt.Sprintf("%.2f %.1f %.2f %.2f %d", 100*s.mean(s.goodput), 100*s.lowest, s.mean(s.settled), s.mean(s.jain), s.met)
	}
	return shown(x) != shown(y)
}
