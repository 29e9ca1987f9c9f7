package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/resilience4cata/r4c"
)

func runDemo(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestOutputDeterministic(t *testing.T) {
	args := []string{"-pattern", "40:4s,10:3s,60:3s", "-seed", "7"}
	code, first, stderr := runDemo(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, second, _ := runDemo(t, args...); second != first {
		t.Errorf("two runs with the same seed printed different output:\n%s\nthen:\n%s", first, second)
	}
	// The default algorithms: knee beside gradient2, in that order.
	for _, want := range []string{"knee:      windows of 1s", "gradient2: windows of 100ms", "| knee (timeout 150ms)", "  10s   60 |",
		"- capacity", "K knee   G gradient2   k,g on capacity", "7-10s"} {
		if !strings.Contains(first, want) {
			t.Errorf("output lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "aimd") || strings.Contains(first, "vegas") {
		t.Errorf("output has algorithms that are not the default:\n%s", first)
	}
	if lines := strings.Count(first, "\n"); lines < 10+15 {
		t.Errorf("%d lines of output, want one per second plus the chart and the summary", lines)
	}
	// TestRunDeterministic checks that another seed gives another run.
}

// TestReportMatchesRuns renders the short pattern's runs, which the behaviour tests check, and
// checks the per-second lines and the summary against them.
func TestReportMatchesRuns(t *testing.T) {
	runs := shortRuns(t)
	var results []*Result
	for _, alg := range allAlgorithms() {
		results = append(results, runs[alg])
	}
	p, _ := ParsePattern(shortPattern)
	var b bytes.Buffer
	report(&b, options{pattern: p, seconds: 90, seed: 1, every: 1}, results)
	out := b.String()
	line := "  45s   10"
	for _, r := range results {
		s := r.Seconds[44]
		line += fmt.Sprintf(" | %5d %5d %7.1f %6d", s.Limit, s.InFlight, ms(s.AvgLatency), s.Rejected)
		if r.Config.Timeout > 0 {
			line += fmt.Sprintf(" %6d", s.TimedOut)
		}
	}
	if !strings.Contains(out, line+"\n") {
		t.Errorf("output lacks the line %q:\n%s", line, out)
	}
	summary := "30-60s      10    200"
	for _, r := range results {
		ph := r.Phases()[1]
		summary += fmt.Sprintf(" | %5.1f %7.1f %7.0f %7.1f", ph.MeanLimit, ph.SettledLimit, ph.Throughput, ms(ph.MeanLatency))
	}
	if !strings.Contains(out, summary+"\n") {
		t.Errorf("summary lacks %q:\n%s", summary, out)
	}
	for _, want := range []string{
		"G gradient2   A aimd   V vegas   K knee   g,a,v,k on capacity",
		"           | gradient2 (timeout 150ms)         | aimd (timeout 150ms)              | vegas (timeout 150ms)             | knee (timeout 150ms)\n",
		"                      | gradient2                     | aimd                          | vegas                         | knee\n",
		"vegas:     windows of 1s, limit from 20 (1 to 200), timeout 150ms (a drop)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Each column of the headers lines up with the columns below it.
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "           | gradient2") && !strings.HasPrefix(l, "                      | gradient2") {
			continue
		}
		if i+2 >= len(lines) {
			t.Fatalf("header %q ends the output", l)
		}
		for _, below := range lines[i+1 : i+3] {
			if !sameBars(l, below) {
				t.Errorf("header %q does not line up with %q", l, below)
			}
		}
	}
}

// sameBars reports whether the column separators of two table lines are at the same places.
func sameBars(a, b string) bool {
	bars := func(s string) []int {
		var at []int
		for i, r := range s {
			if r == '|' {
				at = append(at, i)
			}
		}
		return at
	}
	return slices.Equal(bars(a), bars(b))
}

func TestOutputOptions(t *testing.T) {
	code, out, stderr := runDemo(t, "-pattern", "20:4s,5:4s", "-duration", "12s", "-algorithm", "aimd", "-every", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"   3s   20 |", "  12s    5 |", "4-12s"} { // the last phase repeats
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{"   2s   20 |", "gradient2", "G gradient2"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("output has %q:\n%s", unwanted, out)
		}
	}
	code, out, _ = runDemo(t, "-pattern", "20:4s", "-quiet", "-algorithm", "GRADIENT2")
	if code != 0 || strings.Contains(out, "   1s   20 |") || !strings.Contains(out, "G gradient2   g on capacity") {
		t.Errorf("-quiet: exit %d, output:\n%s", code, out)
	}
	// Lists run in their order, each algorithm once.
	code, out, stderr = runDemo(t, "-pattern", "20:4s", "-quiet", "-algorithm", "vegas, AIMD,vegas")
	if code != 0 || !strings.Contains(out, "V vegas   A aimd   v,a on capacity") || strings.Count(out, "vegas:") != 2 {
		t.Errorf("-algorithm vegas,aimd,vegas: exit %d, stderr %q, output:\n%s", code, stderr, out)
	}
}

func TestParseAlgorithms(t *testing.T) {
	const (
		g, a, v, k = r4c.Gradient2, r4c.AIMD, r4c.Vegas, r4c.Knee
	)
	if got := allAlgorithms(); !slices.Equal(got, []r4c.LimitAlgorithm{g, a, v, k}) {
		t.Errorf("allAlgorithms() = %v, want every algorithm", got)
	}
	good := []struct {
		in   string
		want []r4c.LimitAlgorithm
	}{
		{"gradient2", []r4c.LimitAlgorithm{g}},
		{"aimd", []r4c.LimitAlgorithm{a}},
		{"vegas", []r4c.LimitAlgorithm{v}},
		{"knee", []r4c.LimitAlgorithm{k}},
		{"Knee", []r4c.LimitAlgorithm{k}},
		{DefaultAlgorithms, []r4c.LimitAlgorithm{k, g}},
		{"aimd,vegas,knee", []r4c.LimitAlgorithm{a, v, k}},
		{" vegas , GRADIENT2 ", []r4c.LimitAlgorithm{v, g}},
		{"knee,knee,aimd,knee", []r4c.LimitAlgorithm{k, a}},
		{"all", []r4c.LimitAlgorithm{g, a, v, k}},
		{"ALL", []r4c.LimitAlgorithm{g, a, v, k}},
		{"both", []r4c.LimitAlgorithm{g, a}},
	}
	for _, c := range good {
		if got, err := parseAlgorithms(c.in); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("parseAlgorithms(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, want string }{
		{"bogus", `unknown algorithm "bogus"`},
		{"knee,bogus", `unknown algorithm "bogus"`},
		{"all,knee", `unknown algorithm "all"`},
		{"gradient", `unknown algorithm "gradient"`},
		{"", "empty algorithm name"},
		{"knee,", "empty algorithm name"},
		{"knee,,aimd", "empty algorithm name"},
	}
	for _, c := range bad {
		got, err := parseAlgorithms(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "gradient2, aimd, vegas, knee") {
			t.Errorf("parseAlgorithms(%q) = %v, %v; want an error with %q listing the algorithms", c.in, got, err, c.want)
		}
	}
	o, err := parseFlags(nil, io.Discard)
	if err != nil || !slices.Equal(o.algorithms, []r4c.LimitAlgorithm{k, g}) {
		t.Errorf("default algorithms: %v, %v; want knee and gradient2", o.algorithms, err)
	}
}

func TestMark(t *testing.T) {
	used := []byte{'-', overlapMark}
	for _, alg := range allAlgorithms() {
		m := mark(alg.String(), used)
		used = append(used, m)
	}
	if got := string(used[2:]); got != "GAVK" {
		t.Errorf("marks %q, want GAVK", got)
	}
	// A later algorithm whose first letter is taken gets the next free letter of its name.
	if m := mark("gamma", used); m != 'M' {
		t.Errorf("mark(gamma) = %c, want M", m)
	}
	if m := mark("kav", used); m != 'B' {
		t.Errorf("mark(kav) = %c, want B (no letter of its name is free)", m)
	}
}

func TestBadFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string // in the error message
	}{
		{[]string{"-algorithm", "bogus"}, `-algorithm "bogus": unknown algorithm "bogus": want gradient2, aimd, vegas, knee, a comma-separated list`},
		{[]string{"-algorithm", "knee,sprint"}, `unknown algorithm "sprint"`},
		{[]string{"-algorithm", ""}, "empty algorithm name"},
		{[]string{"-every", "0"}, "-every 0"},
		{[]string{"-every", "x"}, "invalid value"},
		{[]string{"-duration", "-5s"}, "-duration"},
		{[]string{"-duration", "1.5s"}, "whole number of seconds"},
		{[]string{"-duration", "2h"}, "at most"},
		{[]string{"-duration", "soon"}, "-duration"},
		{[]string{"-pattern", ""}, "empty pattern"},
		{[]string{"-pattern", "40-60s"}, "want capacity:duration"},
		{[]string{"-pattern", "0:60s"}, "capacity"},
		{[]string{"-seed", "-1"}, "invalid value"},
		{[]string{"-bogus"}, "flag provided but not defined"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"-speed", "0"}, "-speed 0"},
		{[]string{"-speed", "5000"}, "at most 1000"},
	}
	for _, c := range cases {
		code, out, stderr := runDemo(t, c.args...)
		if code != 2 || out != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and an error containing %q", c.args, code, out, stderr, c.want)
		}
	}
	if code, _, stderr := runDemo(t, "-h"); code != 0 || !strings.Contains(stderr, "-pattern") {
		t.Errorf("-h: exit %d, stderr %q", code, stderr)
	}
}

func TestChart(t *testing.T) {
	var b bytes.Buffer
	Chart(&b, 60, 5,
		Series{Name: "low", Mark: 'L', Values: []float64{0, 0, 0, 0}},
		Series{Name: "high", Mark: 'H', Values: []float64{20, 20, 40, 40}},
		Series{Name: "same", Mark: 'S', Values: []float64{20, 20, 20, 20}})
	want := `   40 |  HH
      |
   20 |**SS
      |
    0 |LLLL
      +----
      0s 4s
       L low   H high   S same   h,s on low   * overlap   (one column = 1s)
`
	if got := trimLines(b.String()); got != want {
		t.Errorf("chart:\n%s\nwant:\n%s", got, want)
	}
	b.Reset()
	Chart(&b, 60, 15) // no series: nothing, no panic
	if b.Len() != 0 {
		t.Errorf("empty chart printed %q", b.String())
	}
}

func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
