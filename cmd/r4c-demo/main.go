// Command r4c-demo shows adaptive limits following a dependency whose capacity changes: by
// default Knee beside Gradient2 (the library's default algorithm), or any of the library's
// algorithms side by side.
//
// It simulates minutes of traffic in about a second of real time: every run uses an
// r4ctest.ManualClock, and the simulator advances it from one event to the next.
//
// # The model
//
// The dependency serves C(t) calls at once, C(t) following a pattern of phases (by default 40
// calls for 60 s, then 10 for 60 s, then 60 for 60 s). A call's latency is fixed when it starts:
// the base latency (50 ms) while the dependency serves at most C calls, and base*n/C when it
// serves n > C: the excess queues, every call getting a 1/n share of the C workers, so the
// dependency never completes more than C/base calls a second however many it is given. Each
// latency is multiplied by a seeded jitter factor in [0.9, 1.1] (math/rand/v2), so the curves are
// not artificially smooth, and every run with the same seed is identical.
//
// Calls arrive at a constant rate, evenly spaced: 1.5 times the most the dependency can ever
// complete (1.5*max(C)/base: 1800 calls/s for the default pattern). The load always exceeds
// the capacity, so the limit, not the load, decides how many calls run at once; the excess is
// rejected.
//
// # The algorithms
//
// Each algorithm chosen with -algorithm runs its own limit (its instance id is the algorithm's
// name) on the same traffic, in front of its own copy of the dependency; the limits share one
// registry and one simulated clock and nothing else. Every limit starts at 20 and may go up to
// 200. Every algorithm has the same timeout inside the limit, as the library recommends, so that
// they are compared on the same calls: calls time out after 150 ms (3x the base latency, as in
// the quality bench), a call that would take longer ending at the timeout, leaving the
// dependency, with an error wrapping r4c.ErrCallTimeout, which is a drop by default. The timeout
// is simulated inside the dependency call, so that every call's end stays in the simulation's
// own event queue; the library's Timeout policy (which, for asynchronous calls, schedules the
// deadline on the registry's clock) would end the call at the same moment, where the policy sits
// (the canonical order puts Timeout inside AdaptiveLimit), with the same kind of error.
//
// With the default pattern (the summary's settled limits, over each phase's second half):
//
//   - Gradient2 grows while a window's mean latency stays within RTTTolerance (1.5) times its
//     long-term average, and shrinks when calls queue; its drop guard backs it off on windows
//     whose calls time out. With that tolerance it settles where calls queue: about 1.7-2.3x the
//     capacity in this model, with the latency up by as much.
//   - AIMD ignores latency and reacts only to drops, here the timeouts. It settles just under
//     the concurrency at which calls start to time out, about 2.4-2.5x the capacity, with the
//     latency up by as much: it keeps the dependency busy, but every call waits.
//   - Vegas estimates the queue from the window's latency over the lowest it has seen, and holds
//     it between 3 and 6 calls (below a limit of 100): a few calls above the capacity (44 at 40,
//     63 at 60), the latency up by 3% to 8%. When the capacity falls from 40 to 10, every call
//     times out, and a window with a drop lowers the limit by log10(limit), 1: with windows of
//     1 s it takes about 15 s to fall below 3x the capacity, where calls stop timing out, and 30
//     s to settle at 15 (1.5x, the latency up by half).
//   - Knee seeks the smallest concurrency at which the dependency delivers its full throughput:
//     it settles at about the capacity (1.07-1.08x, the latency within 10% of the base), cuts
//     the limit in proportion to the queue and the timeouts when the capacity falls (down in
//     about 3 s), and climbs back in about 3 s when it rises (the first window after the rise
//     doubles the limit, and after a growth of a quarter or more the next window is shorter than
//     a second). Every 10 s or more it lowers its limit by
//     15% for one window, to measure the latency without load (a drain): a dip of one second in
//     the table and the chart. With -every a multiple of 10 the table shows only those seconds.
//
// Keeping the calls in flight above the capacity costs nothing in goodput in this model, whose
// calls never fail below the timeout: Gradient2 and AIMD serve 98% of the best possible, Knee
// 97% (it loses its share in the seconds after each change of the capacity) with the latency
// 1.07 to 1.17 times the base over each phase, where theirs is 1.6 to 2.5 times it.
//
// Windows. Gradient2 and AIMD use windows of 100 ms: ten recomputations of the limit a simulated
// second, so that each phase gives them hundreds of windows (AIMD, for one, grows by one a
// window). Gradient2's LongWindow is raised in proportion (6000 windows, ten minutes as with the
// defaults' 600 windows of 1 s), or its long-term average would learn the queueing latency
// within a phase and let the limit drift up. Knee and Vegas use the library's defaults, windows
// of 1 s: Knee is designed for them (it plans its drains in windows, on a grid of the wall
// clock), and Vegas is shown as it is configured out of the box. With windows of 100 ms Vegas
// comes down in about 3 s, but windows of 20 calls at capacity 10 are noisy: it then swings
// between 12 and 18 with about half of the calls timing out, no better in all. All other
// settings are the defaults. The output's first lines give each algorithm's settings.
//
// Calls go through r4c.Pipeline.ExecuteAsync: the dependency returns an r4c.Future that the
// simulator completes when the call's time comes, which releases the slot and records the sample
// (or the drop). Rejections come back as futures already failed with r4c.ErrLimitExceeded.
//
// # Usage
//
//	go run ./cmd/r4c-demo [-pattern 40:60s,10:60s,60:60s] [-duration 180s]
//	    [-algorithm knee,gradient2] [-every N] [-quiet] [-seed N] [-svg FILE]
//	    [-serve ADDR [-speed X]]
//
// -svg also writes the chart of the limits against the capacity to FILE, as SVG (the README's
// picture). -serve runs the simulation in real time instead (-speed X simulated seconds a
// second) and serves the live dashboard of its registry (r4chttp.Dashboard) on ADDR; port 0
// picks a free one, which the first line of output gives.
//
// -algorithm takes gradient2, aimd, vegas or knee, a comma-separated list of them (run and shown
// in that order), all (the four), or both (gradient2 and aimd, the demo's former default).
//
// It prints each algorithm's settings, a line per simulated second (the capacity, then for each
// limit: the limit and the calls in flight at the end of the second, the mean latency of the
// calls that ended during it, timeouts included, and its rejections and, with a timeout, its
// timeouts), a chart of the capacity and the limits over time (each algorithm marked by its
// initial: G, A, V, K), and a summary per phase: mean limits, the throughput achieved and the
// latency.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/resilience4cata/r4c"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the parsed flags.
type options struct {
	pattern    Pattern
	seconds    int
	algorithms []r4c.LimitAlgorithm
	every      int // print every Nth second; 0: none
	seed       uint64
	svg        string  // -svg: the file to write the chart to
	serve      string  // -serve: the address to serve the dashboard on
	speed      float64 // -speed: simulated seconds per second with -serve
}

// run is the command: it returns the exit code (2 for bad flags).
func run(args []string, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errReported):
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "r4c-demo: %v (see -h)\n", err)
		return 2
	}
	if opts.serve != "" {
		return serve(opts, stdout, stderr)
	}
	results, err := simulate(opts)
	if err != nil {
		fmt.Fprintf(stderr, "r4c-demo: %v\n", err)
		return 1
	}
	report(stdout, opts, results)
	if opts.svg != "" {
		if err := writeSVGFile(opts.svg, results); err != nil {
			fmt.Fprintf(stderr, "r4c-demo: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "\nwrote the chart to %s\n", opts.svg)
	}
	return 0
}

// writeSVGFile writes the chart of results to path.
func writeSVGFile(path string, results []*Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeSVG(f, results); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// errReported is a flag error that the flag package has already printed.
var errReported = errors.New("bad flags")

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("r4c-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pattern := fs.String("pattern", DefaultPattern, "the dependency's capacity over time: capacity:duration pairs; the last one repeats")
	duration := fs.String("duration", "", "simulated time, in whole seconds (default: the pattern's length)")
	algorithm := fs.String("algorithm", DefaultAlgorithms, "the algorithms to run: "+algorithmChoices())
	every := fs.Int("every", 1, "print every Nth second")
	quiet := fs.Bool("quiet", false, "print only the chart and the summary")
	seed := fs.Uint64("seed", 1, "seed of the latency jitter")
	svg := fs.String("svg", "", "also write the chart of the limits against the capacity to this SVG file")
	serveAddr := fs.String("serve", "", "run the simulation in real time and serve its live dashboard on this address (e.g. 127.0.0.1:8080; port 0 picks one)")
	speed := fs.Float64("speed", 1, "with -serve: simulated seconds per second of real time")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: r4c-demo [flags]\n\nSimulates an adaptive limit in front of a dependency whose capacity changes.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return options{}, err
		}
		return options{}, errReported // the flag package printed it, with the usage
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var o options
	var err error
	if o.pattern, err = ParsePattern(*pattern); err != nil {
		return options{}, fmt.Errorf("-pattern: %v", err)
	}
	o.seconds = int(o.pattern.Duration() / time.Second)
	if *duration != "" {
		d, err := ParseSeconds(*duration)
		if err != nil {
			return options{}, fmt.Errorf("-duration: %v", err)
		}
		o.seconds = int(d / time.Second)
	}
	if o.algorithms, err = parseAlgorithms(*algorithm); err != nil {
		return options{}, fmt.Errorf("-algorithm %q: %v", *algorithm, err)
	}
	if *every < 1 {
		return options{}, fmt.Errorf("-every %d: want at least 1", *every)
	}
	if !*quiet {
		o.every = *every
	}
	o.seed = *seed
	o.svg, o.serve, o.speed = *svg, *serveAddr, *speed
	if o.speed <= 0 || o.speed > 1000 {
		return options{}, fmt.Errorf("-speed %v: want more than 0, at most 1000", o.speed)
	}
	return o, nil
}

// DefaultAlgorithms is the default of -algorithm: the newest algorithm beside the library's default.
const DefaultAlgorithms = "knee,gradient2"

// allAlgorithms returns every algorithm of the library, in the order of their constants. It reads
// their names from String, which formats an unknown value as "LimitAlgorithm(N)", so that an
// algorithm added to the library is picked up here.
func allAlgorithms() []r4c.LimitAlgorithm {
	var all []r4c.LimitAlgorithm
	for a := r4c.LimitAlgorithm(1); a != 0; a++ {
		if name := a.String(); name == "" || strings.HasPrefix(name, "LimitAlgorithm(") {
			break
		}
		all = append(all, a)
	}
	return all
}

// algorithmChoices describes the values of -algorithm.
func algorithmChoices() string {
	var names []string
	for _, a := range allAlgorithms() {
		names = append(names, a.String())
	}
	return strings.Join(names, ", ") + ", a comma-separated list of them (such as " + DefaultAlgorithms +
		"), all, or both (gradient2,aimd)"
}

// parseAlgorithms parses the value of -algorithm: "all", "both" (gradient2 and aimd, as before
// there were more), or a comma-separated list of algorithm names, in any case. A name given twice
// runs once.
func parseAlgorithms(s string) ([]r4c.LimitAlgorithm, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "all":
		return allAlgorithms(), nil
	case "both":
		return []r4c.LimitAlgorithm{r4c.Gradient2, r4c.AIMD}, nil
	}
	var algs []r4c.LimitAlgorithm
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		alg, ok := r4c.LimitAlgorithm(0), false
		for _, a := range allAlgorithms() {
			if strings.EqualFold(name, a.String()) {
				alg, ok = a, true
				break
			}
		}
		switch {
		case name == "":
			return nil, fmt.Errorf("empty algorithm name: want %s", algorithmChoices())
		case !ok:
			return nil, fmt.Errorf("unknown algorithm %q: want %s", name, algorithmChoices())
		case !slices.Contains(algs, alg):
			algs = append(algs, alg)
		}
	}
	return algs, nil
}

// simulate runs every algorithm side by side, on one clock and one registry (see RunAll).
func simulate(o options) ([]*Result, error) {
	return RunAll(configs(o), RunOptions{})
}

// configs returns the demo's configuration of each algorithm of o.
func configs(o options) []Config {
	cfgs := make([]Config, len(o.algorithms))
	for i, alg := range o.algorithms {
		cfgs[i] = DemoConfig(alg, o.pattern, o.seconds, o.seed)
	}
	return cfgs
}

// report prints the per-second lines, the chart and the summary.
func report(w io.Writer, o options, results []*Result) {
	fmt.Fprintf(w, "pattern %s over %ds, seed %d; offered load %d calls/s, base latency %v\n",
		o.pattern, o.seconds, o.seed, results[0].Offered, results[0].Config.Base)
	for _, r := range results {
		fmt.Fprintf(w, "%-10s %s\n", r.Config.Limit.Algorithm.String()+":", settings(r))
	}
	if o.every > 0 {
		fmt.Fprintln(w)
		printSeconds(w, o.every, results)
	}

	fmt.Fprintln(w)
	series := []Series{{Name: "capacity", Mark: '-', Values: values(results[0], func(s Second) int { return s.Capacity })}}
	used := []byte{'-', overlapMark}
	for _, r := range results {
		name := r.Config.Limit.Algorithm.String()
		m := mark(name, used)
		used = append(used, m)
		series = append(series, Series{Name: name, Mark: m, Values: values(r, func(s Second) int { return s.Limit })})
	}
	Chart(w, 90, 15, series...)

	fmt.Fprintln(w)
	printSummary(w, results)
}

// settings describes the run's limit and timeout: "windows of 1s, limit 20 to 200, timeout 150ms".
func settings(r *Result) string {
	c := r.Resolved
	text := fmt.Sprintf("windows of %v, limit from %d (%d to %d)", c.Window, c.InitialLimit, c.MinLimit, c.MaxLimit)
	if c.Algorithm == r4c.Gradient2 {
		text += fmt.Sprintf(", long window %d windows", c.LongWindow)
	}
	if r.Config.Timeout > 0 {
		return text + fmt.Sprintf(", timeout %v (a drop)", r.Config.Timeout)
	}
	return text + ", no timeout"
}

// mark returns the chart mark of the algorithm name: its first letter in upper case (G, A, V, K),
// or, if an earlier series took that one, its first letter that is still free.
func mark(name string, used []byte) byte {
	for i := range len(name) {
		if m := upper(name[i]); 'A' <= m && m <= 'Z' && !slices.Contains(used, m) {
			return m
		}
	}
	for m := byte('A'); m <= 'Z'; m++ {
		if !slices.Contains(used, m) {
			return m
		}
	}
	return '?'
}

func upper(b byte) byte {
	if 'a' <= b && b <= 'z' {
		return b - 'a' + 'A'
	}
	return b
}

func values(r *Result, f func(Second) int) []float64 {
	v := make([]float64, len(r.Seconds))
	for i, s := range r.Seconds {
		v[i] = float64(f(s))
	}
	return v
}

func printSeconds(w io.Writer, every int, results []*Result) {
	var h1, h2 strings.Builder
	fmt.Fprintf(&h1, "%-10s", "")
	fmt.Fprintf(&h2, "%5s %4s", "time", "cap")
	for _, r := range results {
		if r.Config.Timeout > 0 {
			fmt.Fprintf(&h1, " | %-33s", r.Config.Limit.Algorithm.String()+" (timeout "+r.Config.Timeout.String()+")")
			fmt.Fprintf(&h2, " | %5s %5s %7s %6s %6s", "limit", "infl", "lat ms", "rej/s", "tmo/s")
		} else {
			fmt.Fprintf(&h1, " | %-26s", r.Config.Limit.Algorithm.String())
			fmt.Fprintf(&h2, " | %5s %5s %7s %6s", "limit", "infl", "lat ms", "rej/s")
		}
	}
	fmt.Fprintln(w, strings.TrimRight(h1.String(), " "))
	fmt.Fprintln(w, h2.String())
	for i := range results[0].Seconds {
		if (i+1)%every != 0 {
			continue
		}
		s0 := results[0].Seconds[i]
		fmt.Fprintf(w, "%4ds %4d", s0.Time, s0.Capacity)
		for _, r := range results {
			s := r.Seconds[i]
			fmt.Fprintf(w, " | %5d %5d %7.1f %6d", s.Limit, s.InFlight, ms(s.AvgLatency), s.Rejected)
			if r.Config.Timeout > 0 {
				fmt.Fprintf(w, " %6d", s.TimedOut)
			}
		}
		fmt.Fprintln(w)
	}
}

func printSummary(w io.Writer, results []*Result) {
	perSecond := float64(time.Second) / float64(results[0].Config.Base) // calls/s per unit of capacity
	fmt.Fprintf(w, "Per phase: the mean limit over the phase and over its second half (settled), successful\n")
	fmt.Fprintf(w, "calls per second (best possible: capacity/base latency) and the mean latency.\n\n")
	var h1, h2 strings.Builder
	fmt.Fprintf(&h1, "%-21s", "")
	fmt.Fprintf(&h2, "%-9s %4s %6s", "phase", "cap", "best/s")
	for _, r := range results {
		fmt.Fprintf(&h1, " | %-29s", r.Config.Limit.Algorithm)
		fmt.Fprintf(&h2, " | %5s %7s %7s %7s", "limit", "settled", "calls/s", "lat ms")
	}
	fmt.Fprintln(w, strings.TrimRight(h1.String(), " "))
	fmt.Fprintln(w, h2.String())
	phases := make([][]PhaseStats, len(results))
	for i, r := range results {
		phases[i] = r.Phases()
	}
	for p, sp := range phases[0] {
		fmt.Fprintf(w, "%-9s %4d %6.0f", fmt.Sprintf("%d-%ds", sp.Start, sp.End), sp.Capacity, float64(sp.Capacity)*perSecond)
		for i := range results {
			st := phases[i][p]
			fmt.Fprintf(w, " | %5.1f %7.1f %7.0f %7.1f", st.MeanLimit, st.SettledLimit, st.Throughput, ms(st.MeanLatency))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	best := 0.0
	for _, s := range results[0].Seconds {
		best += float64(s.Capacity) * perSecond
	}
	for _, r := range results {
		var ok, rej, tmo int
		for _, s := range r.Seconds {
			ok += s.Succeeded
			rej += s.Rejected
			tmo += s.TimedOut
		}
		fmt.Fprintf(w, "%-10s %d succeeded (%.0f/s, %.1f%% of the best possible), %d rejected, %d timed out; final limit %d after %d windows\n",
			r.Config.Limit.Algorithm.String()+":", ok, float64(ok)/float64(len(r.Seconds)), 100*float64(ok)/best, rej, tmo,
			r.Final.Limit, r.Final.Windows)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
