package quality

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resilience4cata/r4c/internal/sim"
)

// testScale shortens every class to a quarter of its full length, where the anchors' failures
// below already show. Every class and contender then take about 5s of CPU, but about 85s under
// the race detector, almost all of it in the simulator's event heap.
const testScale = 0.25

// raceSkips are the classes left out under the race detector, the two that cost the most
// (together half of the time), to keep the test near 30s on two cores. The detector checks
// RunAll's goroutines, which the other classes exercise as well.
var raceSkips = []string{"steps", "closed"}

// testClasses returns the classes the tests run: all of them, but raceSkips under -race.
func testClasses() []Class {
	var cs []Class
	for _, c := range Classes() {
		if !raceEnabled || !slices.Contains(raceSkips, c.Name) {
			cs = append(cs, c)
		}
	}
	return cs
}

var (
	benchOnce sync.Once
	benchRuns []Run
	benchErr  error
)

// benchmark returns the runs of the testClasses and every contender at testScale, made once and
// shared by the tests, which must not modify them.
func benchmark(t *testing.T) []Run {
	t.Helper()
	benchOnce.Do(func() { benchRuns, benchErr = RunAll(testClasses(), Contenders(), testScale) })
	if benchErr != nil {
		t.Fatal(benchErr)
	}
	return benchRuns
}

// findRow returns the row of one phase (from 1) of one run.
func findRow(t *testing.T, rows []Row, class string, model sim.Model, contender string, phase int) Row {
	t.Helper()
	for _, r := range rows {
		if r.Class == class && r.Model == model.String() && r.Contender == contender && r.Phase == phase {
			return r
		}
	}
	t.Fatalf("no row for %s/%s/%s phase %d", class, model, contender, phase)
	return Row{}
}

func classByName(t *testing.T, name string) Class {
	t.Helper()
	for _, c := range Classes() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no class %q", name)
	return Class{}
}

func TestEveryRunMeasuresEveryPhase(t *testing.T) {
	runs := benchmark(t)
	if want := len(testClasses()) * 2 * len(Contenders()); len(runs) != want {
		t.Fatalf("%d runs, want %d", len(runs), want)
	}
	phases := 0
	for _, r := range runs {
		name := r.Class + "/" + r.Model.String() + "/" + r.Contender.Name
		if r.Result == nil {
			t.Errorf("%s: no result", name)
			continue
		}
		sc := classByName(t, r.Class).Make(r.Model, testScale)
		if len(r.Result.Phases) != len(sc.Phases) {
			t.Errorf("%s: %d phases measured, want %d", name, len(r.Result.Phases), len(sc.Phases))
			continue
		}
		phases += len(sc.Phases)
		replicas := max(1, sc.Replicas)
		ticks := make([]int, len(sc.Phases))
		for _, tk := range r.Result.Ticks {
			ticks[tk.Phase]++
		}
		for i, p := range r.Result.Phases {
			switch {
			case p.Offered == 0 || p.Admitted == 0:
				t.Errorf("%s phase %d: %d calls offered, %d admitted", name, i+1, p.Offered, p.Admitted)
			case p.Offered != p.Rejected+p.Admitted || p.Admitted != p.Succeeded+p.TimedOut:
				t.Errorf("%s phase %d: counts do not add up: %+v", name, i+1, p)
			case p.Best <= 0 || p.MeanService <= 0:
				t.Errorf("%s phase %d: best %v, mean service %v", name, i+1, p.Best, p.MeanService)
			case ticks[i] == 0 || len(p.ReplicaLimits) != replicas || p.Settled <= 0:
				t.Errorf("%s phase %d: %d readings of the limits, %d replicas' limits (want %d), settled %v",
					name, i+1, ticks[i], len(p.ReplicaLimits), replicas, p.Settled)
			case p.Jain <= 0 || p.Jain > 1+1e-9:
				t.Errorf("%s phase %d: Jain %v outside (0, 1]", name, i+1, p.Jain)
			}
		}
	}
	if rows := Rows(runs); len(rows) != phases {
		t.Errorf("%d rows, want one per phase of every run: %d", len(rows), phases)
	}
}

// The same scenario gives the same figures and the same limit at every reading, whatever else
// runs beside it: the shared runs ran with every class, these with two (the cheapest; light
// has an open and a closed loop).
func TestDeterministic(t *testing.T) {
	shared := benchmark(t)
	classes := []Class{classByName(t, "cold"), classByName(t, "light")}
	var pages [2]string
	for k := range 2 {
		runs, err := RunAll(classes, Contenders(), testScale)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			var same *Run
			for i := range shared {
				s := &shared[i]
				if s.Class == r.Class && s.Model == r.Model && s.Contender.Name == r.Contender.Name {
					same = s
					break
				}
			}
			name := r.Class + "/" + r.Model.String() + "/" + r.Contender.Name
			if same == nil {
				t.Fatalf("%s: not in the shared runs", name)
			}
			if a, b := Rows([]Run{*same}), Rows([]Run{r}); !reflect.DeepEqual(a, b) {
				t.Errorf("%s: rows differ between two runs:\n%+v\n%+v", name, a, b)
			}
			if !reflect.DeepEqual(same.Result.Ticks, r.Result.Ticks) {
				t.Errorf("%s: the limits differ between two runs", name)
			}
		}
		var b strings.Builder
		if err := WriteMarkdown(&b, runs, MarkdownOptions{Command: "cmd", PlotDir: "quality"}); err != nil {
			t.Fatal(err)
		}
		pages[k] = b.String()
	}
	if pages[0] != pages[1] {
		t.Error("two runs of the same classes write different pages")
	}
}

// contenderByName returns the contender of Contenders with that name.
func contenderByName(t *testing.T, name string) Contender {
	t.Helper()
	for _, c := range Contenders() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no contender %q", name)
	return Contender{}
}

// The bench reproduces the failures of the anchor that the issue describes.
func TestAnchorFailures(t *testing.T) {
	// The anchor whose failures the issue describes: Netflix's Gradient2 end to end, which
	// r4c.Gradient2 is with its drop guard off.
	anchor := contenderByName(t, "gradient2-netflix")
	runs, err := RunAll([]Class{classByName(t, "cold"), classByName(t, "replicas")}, []Contender{anchor}, testScale)
	if err != nil {
		t.Fatal(err)
	}
	rows := Rows(runs)
	for _, r := range rows {
		t.Logf("%s/%s: %s settled at %.2fx the knee, goodput %.1f%%", r.Class, r.Model, r.Contender, r.Settled, 100*r.Goodput)
	}
	for _, m := range []sim.Model{sim.PS, sim.FIFO} {
		// A cold start below the initial limit: the timeouts teach the long-term latency that
		// overload is normal, and the limit climbs far above the knee while most calls time out.
		if r := findRow(t, rows, "cold", m, anchor.Name, 1); r.Settled <= 3 || r.Goodput >= 0.5 {
			t.Errorf("cold/%s: %s settled at %.2fx the knee with goodput %.1f%%; want above 3x and below 50%%",
				m, anchor.Name, r.Settled, 100*r.Goodput)
		}
		// Ten replicas, each with its own limit: their sum ends far above the shared knee.
		if r := findRow(t, rows, "replicas", m, anchor.Name, 1); r.Settled <= 5 || r.Goodput >= 0.5 {
			t.Errorf("replicas/%s: %s's limits sum to %.2fx the knee with goodput %.1f%%; want above 5x and below 50%%",
				m, anchor.Name, r.Settled, 100*r.Goodput)
		}
	}
}

// tableRow is a row of a Markdown table in the page: the heading it is under and its cells.
type tableRow struct {
	heading string
	cells   []string
}

// parseTables returns the rows (not the header or the separator) of every table in page, and
// fails the test on a table that is not well formed.
func parseTables(t *testing.T, page string) []tableRow {
	t.Helper()
	var rows []tableRow
	heading := ""
	lines := strings.Split(page, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.HasPrefix(line, "#") {
			heading = line
			continue
		}
		if !strings.HasPrefix(line, "|") {
			continue
		}
		header := cells(line)
		if i+1 >= len(lines) || !isSeparator(lines[i+1], len(header)) {
			t.Fatalf("line %d: a table header without a separator after it: %q", i+1, line)
		}
		for i += 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
			c := cells(lines[i])
			if len(c) != len(header) || !strings.HasSuffix(lines[i], " |") {
				t.Fatalf("line %d: %d cells under a header of %d: %q", i+1, len(c), len(header), lines[i])
			}
			rows = append(rows, tableRow{heading, c})
		}
		if i < len(lines) && lines[i] != "" {
			t.Fatalf("line %d: a table must end with a blank line: %q", i+1, lines[i])
		}
	}
	return rows
}

func cells(line string) []string {
	c := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|"), "|")
	for i := range c {
		c[i] = strings.TrimSpace(c[i])
	}
	return c
}

func isSeparator(line string, n int) bool {
	c := cells(line)
	if len(c) != n {
		return false
	}
	for _, s := range c {
		if strings.Trim(s, "-:") != "" || !strings.Contains(s, "---") {
			return false
		}
	}
	return true
}

func TestWriteMarkdown(t *testing.T) {
	runs := benchmark(t)
	const command = "cd benchmarks && go run ./quality/cmd/quality -write ../docs"
	var b strings.Builder
	if err := WriteMarkdown(&b, runs, MarkdownOptions{Command: command, PlotDir: "quality"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.HasPrefix(page, "# ") || !strings.Contains(page, "```sh\n"+command+"\n```") {
		t.Error("the page does not start with its title or does not show its command")
	}
	rows := parseTables(t, page)

	// Every phase of every run has exactly one row, under its class's heading.
	want := map[string]bool{}
	for _, r := range Rows(runs) {
		want[strings.Join([]string{r.Class, r.Model, r.Contender, strconv.Itoa(r.Phase)}, "/")] = true
	}
	seen := map[string]int{}
	bold := map[string][2]bool{} // class/phase/model: a goodput, a latency in bold
	summary := map[string]bool{}
	for _, r := range rows {
		switch {
		case strings.HasPrefix(r.heading, "### "):
			class := strings.TrimPrefix(r.heading, "### ")
			phase, _, _ := strings.Cut(r.cells[0], " ")
			seen[strings.Join([]string{class, r.cells[1], r.cells[3], phase}, "/")]++
			g := class + "/" + phase + "/" + r.cells[1]
			bold[g] = [2]bool{bold[g][0] || strings.HasPrefix(r.cells[6], "**"), bold[g][1] || strings.HasPrefix(r.cells[7], "**")}
		case r.heading == "## Summary":
			summary[r.cells[0]] = true
		}
	}
	for k := range want {
		if seen[k] != 1 {
			t.Errorf("%s: %d rows in the page, want 1", k, seen[k])
		}
	}
	for k, n := range seen {
		if !want[k] {
			t.Errorf("%s: %d rows in the page for no phase of a run", k, n)
		}
	}
	for g, b := range bold {
		if !b[0] || !b[1] {
			t.Errorf("%s: no goodput or no latency in bold", g)
		}
	}
	for _, c := range Contenders() {
		if !summary[c.Name] {
			t.Errorf("no summary row for %s", c.Name)
		}
	}
	for _, g := range Groups(runs) {
		if !strings.Contains(page, "](quality/"+g.PlotFile()+")") {
			t.Errorf("the page does not show %s", g.PlotFile())
		}
	}
}

// With the worst figures of several variants, the summary counts, per contender, the phases that
// meet the targets in every variant: here two variants, one of them spoiled so that its first
// phase misses the goodput target for every contender.
func TestWriteMarkdownCountsThePhasesMetInEveryVariant(t *testing.T) {
	runs := benchmark(t)
	rows := Rows(runs)
	spoiled := slices.Clone(rows)
	for i := range spoiled {
		if spoiled[i].Phase == 1 {
			// best-fixed misses there too: no run of phase 1 in this variant is within reach.
			spoiled[i].Goodput, spoiled[i].Met, spoiled[i].Reachable, spoiled[i].ReachMet = 0, 0, 0, 0
		}
	}
	worst := Worst(append(slices.Clone(rows), spoiled...))
	var b strings.Builder
	if err := WriteMarkdown(&b, runs, MarkdownOptions{Worst: worst}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.Contains(page, "| in every one of 2 variants | runs of a phase meeting them | of the runs best-fixed meets |") {
		t.Fatal("the summary has no columns for the phases met in every variant, the runs that meet them and those best-fixed meets")
	}
	for _, c := range Contenders() {
		once, every := 0, 0
		phases := 0
		reachable, reachMet := 0, 0 // over both variants
		for i, r := range rows {
			if r.Contender != c.Name {
				continue
			}
			phases++
			if r.MeetsTargets() {
				once++
			}
			if r.MeetsTargets() && r.Phase != 1 {
				every++ // a phase 1 is spoiled in the other variant
			}
			reachable += r.Reachable
			reachMet += r.ReachMet
			if r.Phase != 1 {
				reachable += r.Reachable
				reachMet += r.ReachMet
			}
			if worst[i].MeetsTargets() != (r.MeetsTargets() && r.Phase != 1) {
				t.Errorf("%s/%s/%s phase %d: met in every variant %v", r.Class, r.Model, r.Contender, r.Phase, worst[i].MeetsTargets())
			}
		}
		// The runs that meet the targets: those of the first variant, and those of the spoiled
		// one but its phases 1.
		met := once + every
		want := fmt.Sprintf("| %d of %d | %d of %d | %d of %d (%.0f%%) | %d of %d (%.0f%%) |", once, phases, every, phases, met, 2*phases, 100*float64(met)/float64(2*phases),
			reachMet, reachable, 100*float64(reachMet)/float64(reachable))
		found := false
		for _, line := range strings.Split(page, "\n") {
			if strings.HasPrefix(line, "| "+c.Name+" |") && strings.HasSuffix(line, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("no summary row of %s ending %q", c.Name, want)
		}
	}
}

// WriteDocs writes the page and a well-formed plot for every class and model, and the page
// shows exactly those plots.
func TestWriteDocs(t *testing.T) {
	runs := benchmark(t)
	dir := t.TempDir()
	if err := WriteDocs(dir, runs, MarkdownOptions{Command: "cmd"}); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "quality.md"))
	if err != nil {
		t.Fatal(err)
	}
	groups := Groups(runs)
	if want := len(testClasses()) * 2; len(groups) != want {
		t.Fatalf("%d groups, want %d", len(groups), want)
	}
	files, err := os.ReadDir(filepath.Join(dir, "quality"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(groups) {
		t.Errorf("%d files in quality/, want %d", len(files), len(groups))
	}
	if n := bytes.Count(page, []byte("](quality/")); n != len(groups) {
		t.Errorf("the page shows %d plots, want %d", n, len(groups))
	}
	for _, g := range groups {
		svg, err := os.ReadFile(filepath.Join(dir, "quality", g.PlotFile()))
		if err != nil {
			t.Error(err)
			continue
		}
		checkSVG(t, g, svg)
	}
}

// checkSVG parses a plot and checks it draws the knee and every run's limits, a point per
// reading.
func checkSVG(t *testing.T, g Group, svg []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	depth, root, lines := 0, "", 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Errorf("%s: %v", g.PlotFile(), err)
			return
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				root = e.Name.Local
			}
			depth++
			if e.Name.Local != "polyline" {
				continue
			}
			lines++
			for _, a := range e.Attr {
				if a.Name.Local == "points" {
					checkPoints(t, g, a.Value)
				}
			}
		case xml.EndElement:
			depth--
		}
	}
	if root != "svg" || depth != 0 {
		t.Errorf("%s: root element %q, %d elements left open", g.PlotFile(), root, depth)
	}
	if want := 1 + len(g.Runs); lines != want {
		t.Errorf("%s: %d lines, want the knee and one per run: %d", g.PlotFile(), lines, want)
	}
}

// checkPoints checks a polyline: from 2 points to one per reading, from left to right, all
// inside the plot.
func checkPoints(t *testing.T, g Group, points string) {
	t.Helper()
	ps := strings.Fields(points)
	if n, most := len(ps), len(g.Runs[0].Result.Ticks); n < 2 || n > most {
		t.Errorf("%s: a line of %d points, want 2 to %d", g.PlotFile(), n, most)
	}
	last := math.Inf(-1)
	for _, p := range ps {
		xs, ys, ok := strings.Cut(p, ",")
		x, errX := strconv.ParseFloat(xs, 64)
		y, errY := strconv.ParseFloat(ys, 64)
		if !ok || errX != nil || errY != nil || x < last || x < 0 || x > 760 || y < 0 || y > 300 {
			t.Errorf("%s: point %q out of order or outside the plot", g.PlotFile(), p)
			return
		}
		last = x
	}
}

func TestMeetsTargets(t *testing.T) {
	for _, c := range []struct {
		row  Row
		want bool
	}{
		{Row{Overloaded: true, Goodput: 0.97, Settled: 1.5, Replicas: 1, Jain: 0.5}, true},
		{Row{Overloaded: true, Goodput: 0.969, Settled: 1, Replicas: 1, Jain: 1}, false},
		{Row{Overloaded: true, Goodput: 1, Settled: 1.51, Replicas: 1, Jain: 1}, false},
		{Row{Overloaded: true, Goodput: 1, Settled: 1, Replicas: 10, Jain: 0.94}, false},
		{Row{Overloaded: true, Goodput: 1, Settled: 1, Replicas: 10, Jain: 0.95}, true},
		{Row{Goodput: 0.99, Settled: 1, Replicas: 1, Jain: 1}, false},
		{Row{Goodput: 0.995, Settled: 5, Replicas: 1, Jain: 1}, true},
		{Row{Overloaded: true, Goodput: 1, Settled: 1, Replicas: 1, Jain: 1, LatencyOver: 1.01}, true},
		{Row{Overloaded: true, Goodput: 1, Settled: 1, Replicas: 1, Jain: 1, LatencyOver: 1.02}, false},
		{Row{Goodput: 1, Settled: 1, Replicas: 1, Jain: 1, LatencyOver: 1.5}, false},
	} {
		if got := c.row.MeetsTargets(); got != c.want {
			t.Errorf("%+v: MeetsTargets() = %v, want %v", c.row, got, c.want)
		}
	}
}

// Worst folds the runs of one phase into its worst figures, keeps phases apart, counts "never
// settled" as the worst settle time, and adds up the runs that meet the targets.
func TestWorstFoldsSeeds(t *testing.T) {
	row := func(phase int, good, settled, jain float64, settle time.Duration) Row {
		r := Row{Class: "c", Model: "ps", Contender: "k", Phase: phase, Goodput: good, Settled: settled,
			Jain: jain, SettleTime: settle, MeanLat: settled, Seeds: 1, Overloaded: true, Replicas: 10}
		if r.MeetsTargets() {
			r.Met = 1
		}
		return r
	}
	got := Worst([]Row{
		row(1, 0.99, 1.1, 0.97, time.Second),
		row(2, 0.90, 1.0, 1.00, 0),
		row(1, 0.95, 1.3, 0.99, -1),
		row(1, 0.98, 1.2, 0.90, 2*time.Second),
	})
	if len(got) != 2 || got[0].Phase != 1 || got[1].Phase != 2 {
		t.Fatalf("%+v: want phases 1 and 2, in that order", got)
	}
	w := got[0]
	if w.Seeds != 3 || w.Goodput != 0.95 || w.Settled != 1.3 || w.MeanLat != 1.3 || w.Jain != 0.90 || w.SettleTime != -1 {
		t.Fatalf("phase 1 folded into %+v, want 3 seeds, goodput 0.95, settled and latency 1.3, Jain 0.90, never settled", w)
	}
	// Of the three runs of phase 1 only the first meets the targets (the second's goodput and
	// the third's Jain index are too low); the folded figures, worst of all, do not.
	if w.Met != 1 || w.MeetsTargets() {
		t.Fatalf("phase 1: %d runs meeting the targets (folded figures meet them: %v), want 1 (false)", w.Met, w.MeetsTargets())
	}
	if got[1].Seeds != 1 || got[1].Goodput != 0.90 || got[1].Met != 0 {
		t.Fatalf("phase 2: %+v", got[1])
	}
}

// The references know the knee: a limit at the knee itself settles at 1 in every phase, and
// the tables never put a reference's figure in bold.
func TestReferencesAreShownButNotInBold(t *testing.T) {
	runs := benchmark(t)
	for _, r := range Rows(runs) {
		if r.Contender == "at-knee" && r.Replicas <= 1 && math.Abs(r.Settled-1) > 1e-9 {
			t.Errorf("%s/%s phase %d: at-knee settled at %v, want 1", r.Class, r.Model, r.Phase, r.Settled)
		}
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, runs, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, row := range parseTables(t, b.String()) {
		if !strings.HasPrefix(row.heading, "### ") || !contenderByName(t, row.cells[3]).Reference {
			continue
		}
		seen++
		if strings.Contains(row.cells[6], "**") || strings.Contains(row.cells[7], "**") {
			t.Errorf("%s: a reference's figure in bold: %v", row.heading, row.cells)
		}
	}
	if seen == 0 {
		t.Error("no reference in the tables")
	}
}

// TestRowsMeasureLatencyAgainstTheBestAnchor checks the latency target's bar: the lowest mean
// latency of the anchors that reach the goodput target in the same run of the phase, and no
// bar where none reaches it, nor from a contender that is not an anchor.
func TestRowsMeasureLatencyAgainstTheBestAnchor(t *testing.T) {
	phase := func(goodput float64, lat time.Duration) sim.PhaseResult {
		return sim.PhaseResult{Overloaded: true, Goodput: goodput, MeanService: 100, MeanLatency: lat}
	}
	run := func(name string, anchor bool, seed uint64, phases ...sim.PhaseResult) Run {
		return Run{Class: "c", Model: sim.PS, Seed: seed, Contender: Contender{Name: name, Anchor: anchor},
			Result: &sim.Result{Scenario: &sim.Scenario{}, Phases: phases}}
	}
	runs := []Run{
		run("ours", false, 0, phase(0.99, 120), phase(0.99, 100), phase(0.99, 110)),
		// Phase 1: the best anchor reaching 97% has 110 (the other misses the goodput target
		// with 90). Phase 2: no anchor reaches it. Phase 3: the faster contender is no anchor.
		run("a", true, 0, phase(0.98, 110), phase(0.5, 50), phase(0.99, 100)),
		run("b", true, 0, phase(0.96, 90), phase(0.9, 60), phase(0.99, 105)),
		run("fast", false, 0, phase(0.99, 80), phase(0.99, 80), phase(0.99, 80)),
		// Another variant: its anchors set no bar for variant 0.
		run("a", true, 1, phase(0.99, 60), phase(0.99, 60), phase(0.99, 60)),
	}
	want := []float64{120.0 / 110, 0, 110.0 / 100}
	for _, r := range Rows(runs) {
		if r.Contender != "ours" {
			continue
		}
		if got := r.LatencyOver; math.Abs(got-want[r.Phase-1]) > 1e-12 {
			t.Errorf("phase %d: LatencyOver = %v, want %v", r.Phase, got, want[r.Phase-1])
		}
	}
	worst := Worst(Rows(runs))
	for _, r := range worst {
		if r.Contender == "ours" && r.Phase == 1 && r.MeetsTargets() {
			t.Errorf("phase 1, 9%% slower than the best anchor, meets the targets")
		}
		if r.Contender == "ours" && r.Phase == 2 && !r.MeetsTargets() {
			t.Errorf("phase 2, with no anchor reaching the goodput target, misses the targets: %+v", r)
		}
	}
}

// TestAnchoredFromSavedRows checks -anchors: a contender run alone, held to the anchors' rows
// saved from another run of the same scenarios, gets the latency bar and the verdicts that it
// gets when the anchors run beside it.
func TestAnchoredFromSavedRows(t *testing.T) {
	phase := func(goodput float64, lat time.Duration) sim.PhaseResult {
		return sim.PhaseResult{Overloaded: true, Goodput: goodput, MeanService: 100, MeanLatency: lat}
	}
	run := func(name string, anchor bool, seed uint64, phases ...sim.PhaseResult) Run {
		return Run{Class: "c", Model: sim.PS, Seed: seed, Contender: Contender{Name: name, Anchor: anchor},
			Result: &sim.Result{Scenario: &sim.Scenario{Replicas: 1}, Phases: phases}}
	}
	ours := []Run{
		run("ours", false, 0, phase(0.99, 120), phase(0.99, 100)),
		run("ours", false, 1, phase(0.99, 100), phase(0.99, 100)),
	}
	anchors := []Run{
		run("a", true, 0, phase(0.98, 110), phase(0.99, 101)),
		run("a", true, 1, phase(0.99, 90), phase(0.5, 50)),
	}
	joint := Rows(append(append([]Run{}, ours...), anchors...))
	var saved bytes.Buffer
	if err := SaveRows(&saved, Rows(anchors)); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadRows(&saved)
	if err != nil {
		t.Fatal(err)
	}
	alone := Rows(ours)
	for _, r := range alone {
		if r.LatencyOver != 0 {
			t.Fatalf("variant %d phase %d: a bar with no anchor run: %v", r.Variant, r.Phase, r.LatencyOver)
		}
	}
	got := Anchored(alone, loaded)
	met := 0
	for i, r := range got {
		w := joint[i]
		if r.LatencyOver != w.LatencyOver || r.Met != w.Met {
			t.Errorf("variant %d phase %d: LatencyOver %v, Met %d; beside the anchors %v, %d", r.Variant, r.Phase, r.LatencyOver, r.Met, w.LatencyOver, w.Met)
		}
		met += r.Met
	}
	// Variant 0 phase 1 (9% over 110) and variant 1 phase 1 (11% over 90) miss; the others meet.
	if met != 2 {
		t.Errorf("%d runs of a phase meet the targets, want 2", met)
	}
}
