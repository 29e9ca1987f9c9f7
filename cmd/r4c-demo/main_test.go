package main

import (
	"bytes"
	"fmt"
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
	for _, want := range []string{"gradient2", "aimd", "  10s   60 |", "- capacity", "G gradient2   A aimd", "7-10s"} {
		if !strings.Contains(first, want) {
			t.Errorf("output lacks %q:\n%s", want, first)
		}
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
	g2, aimd := runs[r4c.Gradient2], runs[r4c.AIMD]
	p, _ := ParsePattern(shortPattern)
	var b bytes.Buffer
	report(&b, options{pattern: p, seconds: 90, seed: 1, every: 1}, []*Result{g2, aimd})
	out := b.String()
	s, a := g2.Seconds[44], aimd.Seconds[44]
	line := fmt.Sprintf("  45s   10 | %5d %5d %7.1f %6d | %5d %5d %7.1f %6d %6d\n",
		s.Limit, s.InFlight, ms(s.AvgLatency), s.Rejected, a.Limit, a.InFlight, ms(a.AvgLatency), a.Rejected, a.TimedOut)
	if !strings.Contains(out, line) {
		t.Errorf("output lacks the line %q:\n%s", line, out)
	}
	ph := g2.Phases()[1]
	if want := fmt.Sprintf("30-60s      10    200 | %5.1f %7.1f", ph.MeanLimit, ph.SettledLimit); !strings.Contains(out, want) {
		t.Errorf("summary lacks %q:\n%s", want, out)
	}
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
}

func TestBadFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string // in the error message
	}{
		{[]string{"-algorithm", "vegas"}, `-algorithm "vegas"`},
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
