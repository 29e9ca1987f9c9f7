// Command quality runs the quality bench of the adaptive limits and prints its table. With
// -write DIR it also writes DIR/quality.md and its plots, DIR/quality/<class>-<model>.svg:
//
//	cd benchmarks && go run ./quality/cmd/quality -seeds 8 -write ../docs
//
// The latency target compares each phase's mean latency with the best anchor's in the same run
// (column lat/an): with -alg, name the anchors too (aimd, vegas, gradient2-netflix, envoy), or
// no phase has a latency to beat.
// With -each it also prints every variant's rows, to find the one behind a worst figure.
// To judge a change of an algorithm, save the rows of the code before it and compare the code
// after it against them (the same -seeds, -only and -alg), from two builds:
//
//	cd benchmarks && go run ./quality/cmd/quality -alg knee -seeds 16 -save /tmp/before.json
//	(change the code)
//	cd benchmarks && go run ./quality/cmd/quality -alg knee -seeds 16 -against /tmp/before.json
//
// The anchors' runs are most of the time of a run. To hold -alg knee alone to the latency
// target, save every contender's rows once and give them to later builds with -anchors:
//
//	cd benchmarks && go run ./quality/cmd/quality -alg knee,aimd,vegas,gradient2-netflix,envoy,best-fixed -seeds 16 -save /tmp/all.json
//	(change the code)
//	cd benchmarks && go run ./quality/cmd/quality -alg knee -seeds 16 -anchors /tmp/all.json -against /tmp/all.json
//
// Compare prints the means over the variants and the runs that meet the targets beside the
// lowest goodput (a worst figure moves by points when a change reshuffles which variant is
// unlucky), and counts the runs after the change that miss each target (latency, goodput,
// limit, jain).
// With -set wide it runs the wider set of classes (quality.WideClasses) instead, and -write DIR
// writes DIR/quality-wide.md and its plots in DIR/quality-wide/:
//
//	cd benchmarks && go run ./quality/cmd/quality -set wide -seeds 2 -write ../docs
//
// With -set random it runs a set of classes drawn at random from a fixed seed
// (quality.RandomClasses), and -write DIR writes DIR/quality-random.md and DIR/quality-random/:
//
//	cd benchmarks && go run ./quality/cmd/quality -set random -seeds 2 -write ../docs
//
// With -draw SEED1,SEED2,N as well it runs another draw of N classes of the same kind instead
// (quality.DrawClasses), to check a change on scenarios the published draw did not pick:
//
//	cd benchmarks && go run ./quality/cmd/quality -set random -draw 2027,7,30 -seeds 2 -save draw.json
//
// Every scenario's wall clock starts on a boundary of Knee's drain grid, as r4ctest's manual clock
// does, so that phases of whole tens of seconds change on one. With -offset D it starts D past
// one instead (quality.ClockOffset), to measure how much a result owes to that alignment:
//
//	cd benchmarks && go run ./quality/cmd/quality -alg knee -seeds 8 -offset 3.7s -anchors /tmp/all.json -against /tmp/all.json
//
// With -seeds N it runs N variants of every scenario (other arrivals and work, the same phases)
// and prints, for each phase, the worst figure over them, then how many phases each contender
// meets the targets in, in every variant, and in how many of the runs the reference best-fixed
// meets (the best of limits fixed at 1 to 1.5 times the knee: run it, with the anchors, or save
// its rows with theirs for -anchors). The page's tables and plots are written from variant
// 0 alone; its summary adds those counts over every variant. With -trace it
// also prints each run's limits over time, a line per second (each replica's limit, up to ten
// replicas), to read how a contender moves:
//
//	cd benchmarks && go run ./quality/cmd/quality -only steps -alg knee -seeds 8 -trace -variant 3
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/resilience4cata/r4c/benchmarks/quality"
)

func main() {
	scale := flag.Float64("scale", 1, "scale of the scenarios' durations")
	set := flag.String("set", "main", "the set of scenario classes: main (quality.Classes), wide (quality.WideClasses, written after Knee's rules were set) or random (quality.RandomClasses, drawn at random)")
	only := flag.String("only", "", "comma-separated scenario classes to run (default: all)")
	algs := flag.String("alg", "", "comma-separated algorithms to run (default: all)")
	write := flag.String("write", "", "write `DIR`/quality.md and its plots in DIR/quality/ (e.g. ../docs); with -set wide, DIR/quality-wide.md and DIR/quality-wide/; with -set random, DIR/quality-random.md and DIR/quality-random/")
	seeds := flag.Int("seeds", 1, "run `N` variants of every scenario and print the worst figures")
	trace := flag.Bool("trace", false, "also print every run's limits over time, a line per second, each replica's up to ten (narrow it with -only, -alg and -variant)")
	variant := flag.Int("variant", -1, "with -trace, print only variant `K` (0 to seeds-1)")
	each := flag.Bool("each", false, "also print every variant's rows, not only the worst (narrow it with -variant)")
	save := flag.String("save", "", "save every variant's rows in `FILE` (JSON), for -against")
	against := flag.String("against", "", "compare this run's rows with those saved in `FILE` by -save (another build of the code): means over the variants, lowest goodput, runs meeting the targets")
	draw := flag.String("draw", "", "with -set random, run another draw of random classes instead of the published one: `SEED1,SEED2,N` draws N classes from the generator seeded with SEED1 and SEED2 (quality.DrawClasses); not with -write")
	offset := flag.Duration("offset", 0, "start every scenario's wall clock `D` past a boundary of Knee's drain grid (quality.ClockOffset), so that the phases change between its boundaries; the published pages start on one; not with -write")
	anchors := flag.String("anchors", "", "hold the contenders run to the latency target of the anchors' rows saved in `FILE` by -save (the same -set, -only and -seeds), so that -alg knee alone runs in a fraction of the time; not with -write")
	flag.Parse()
	if *anchors != "" && *write != "" {
		fmt.Fprintln(os.Stderr, "quality: -anchors is for comparing builds; a page is written from the anchors' own runs (drop -anchors or -write)")
		os.Exit(2)
	}
	var classes []quality.Class
	switch *set {
	case "main":
		classes = quality.Classes()
	case "wide":
		classes = quality.WideClasses()
	case "random":
		classes = quality.RandomClasses()
		if *draw != "" {
			var seed1, seed2 uint64
			var n int
			if _, err := fmt.Sscanf(*draw, "%d,%d,%d", &seed1, &seed2, &n); err != nil || n < 1 || *write != "" {
				fmt.Fprintf(os.Stderr, "quality: -draw %q: want SEED1,SEED2,N (N at least 1), and no -write (the page is the published draw)\n", *draw)
				os.Exit(2)
			}
			classes = quality.DrawClasses(seed1, seed2, n)
		}
	default:
		fmt.Fprintf(os.Stderr, "quality: -set %q: want main, wide or random\n", *set)
		os.Exit(2)
	}
	if *draw != "" && *set != "random" {
		fmt.Fprintln(os.Stderr, "quality: -draw is for -set random")
		os.Exit(2)
	}
	if *offset != 0 {
		if *write != "" {
			fmt.Fprintln(os.Stderr, "quality: -offset is for measuring; a page is written with the clock on the grid (drop -offset or -write)")
			os.Exit(2)
		}
		classes = quality.ClockOffset(classes, *offset)
	}
	if *only != "" {
		classes = filter(classes, *only, func(c quality.Class) string { return c.Name })
	}
	contenders := quality.Contenders()
	if *algs != "" {
		contenders = filter(contenders, *algs, func(c quality.Contender) string { return c.Name })
	}
	runs, err := quality.RunSeeds(classes, contenders, *scale, *seeds)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *trace {
		for _, r := range runs {
			if *variant < 0 || r.Seed == uint64(*variant) {
				quality.WriteTrace(os.Stdout, r)
			}
		}
	}
	if *each {
		for _, r := range runs {
			if *variant < 0 || r.Seed == uint64(*variant) {
				fmt.Printf("variant %d:\n", r.Seed)
				quality.WriteText(os.Stdout, quality.Rows([]quality.Run{r}))
			}
		}
	}
	rows := quality.Rows(runs)
	if *anchors != "" {
		saved, err := loadRows(*anchors)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		rows = quality.Anchored(rows, saved)
	}
	if *save != "" {
		if err := saveRows(*save, rows); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if *against != "" {
		before, err := loadRows(*against)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("Against %s, over every variant:\n", *against)
		quality.Compare(os.Stdout, before, rows)
		fmt.Println()
	}
	var worst []quality.Row
	if *seeds > 1 {
		fmt.Printf("The worst of %d variants of every scenario:\n", *seeds)
		worst = quality.Worst(rows)
		quality.WriteText(os.Stdout, worst)
		fmt.Println()
		for _, c := range contenders {
			met, all, runsMet, runs := quality.Tally(worst, c.Name)
			fmt.Printf("%-18s meets the targets in %d of %d phases in every variant, in %d of %d runs of a phase", c.Name, met, all, runsMet, runs)
			if reachMet, reachable := quality.Reach(worst, c.Name); reachable > 0 && c.Name != quality.BestFixed {
				fmt.Printf(", in %d of the %d that %s meets", reachMet, reachable, quality.BestFixed)
			}
			fmt.Println()
		}
		var first []quality.Run
		for _, r := range runs {
			if r.Seed == 0 {
				first = append(first, r)
			}
		}
		runs = first
	} else {
		quality.WriteText(os.Stdout, rows)
	}
	if *write != "" {
		opts := quality.MarkdownOptions{Command: command(), PlotDir: "quality", Classes: classes, Worst: worst}
		opts.Lead = mainLead
		if *set == "wide" {
			opts.Page, opts.PlotDir, opts.Title, opts.Lead, opts.NoWeak = "quality-wide.md", "quality-wide", wideTitle, wideLead, true
		}
		if *set == "random" {
			opts.Page, opts.PlotDir, opts.Title, opts.Lead, opts.NoWeak = "quality-random.md", "quality-random", randomTitle, randomLead, true
		}
		if err := quality.WriteDocs(*write, runs, opts); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// The pages' leads, and the wide set's page (-set wide -write DIR): DIR/quality-wide.md.
const (
	mainLead = "Knee was designed against these classes. A wider set, written after its rules were set, with other knees, service times, spreads, loads and replica counts, " +
		"is run by the same bench on [its own page](quality-wide.md), and a set drawn at random on [another](quality-random.md)."
	wideTitle = "Quality of the adaptive limits: a wider set of scenarios"
	wideLead  = "A second set of scenario classes (`quality.WideClasses`), written after Knee's rules were set and run by the same bench: " +
		"the same kinds of trouble as the [main set](quality.md) (capacity steps, cold starts, drift, noise, replicas, light load, slow and fast dependencies), " +
		"with other knees (3 to 100), service times (5ms to 700ms), spreads, loads (1.1 to 5 times the capacity) and replica counts (3 to 20), and one kind of trouble the main set lacks: answers that take time to come back (a network's round trip outside the dependency: `w-transit`, `w-transit-far`, `w-transit-replicas`), so that the knee, counted in calls in flight, is larger than the workers. " +
		"Knee was designed against the main set; this page shows where its rules carry over and where they do not. " +
		"The references show which targets are within reach of a limit that knows the knee: where at-1.2knee misses the goodput target, a limit held at 1.2 times the knee does not suffice, and where best-fixed misses a target, no limit held at 1 to 1.5 times the knee meets it. " +
		"What each contender is, and where the main set shows it weak, is on the main page."
	randomTitle = "Quality of the adaptive limits: scenarios drawn at random"
	randomLead  = "A third set of scenario classes (`quality.RandomClasses`), drawn at random from a fixed seed rather than written, so that no rule could have been tuned to them: " +
		"knees of 6 to 100, calls of 5ms to 300ms (uniform, exponential or lognormal), timeouts of three to five mean service times, one to three phases with loads of 0.25 to 6 times the capacity, " +
		"capacities that halve or double, and up to eight replicas with shares of three slots or more. " +
		"Many of these phases meet no contender's every target: the references at-1.2knee and best-fixed show where a limit that knows the knee falls short too, and the summary counts each contender's runs among those best-fixed meets. " +
		"What each contender is, and where the main set shows it weak, is on the [main page](quality.md)."
)

// loadRows reads the rows saved in the file name by saveRows.
func loadRows(name string) ([]quality.Row, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return quality.LoadRows(f)
}

// saveRows writes rows to the file name with quality.SaveRows.
func saveRows(name string, rows []quality.Row) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := quality.SaveRows(f, rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// command returns the command line that reproduces this run, from the repository's root: the
// flags that were set, in the order of their names.
func command() string {
	args := []string{"cd benchmarks && go run ./quality/cmd/quality"}
	flag.Visit(func(f *flag.Flag) {
		args = append(args, "-"+f.Name, shellQuote(f.Value.String()))
	})
	return strings.Join(args, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._,/+-=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func filter[T any](xs []T, names string, name func(T) string) []T {
	want := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		want[n] = true
	}
	var out []T
	for _, x := range xs {
		if want[name(x)] {
			out = append(out, x)
		}
	}
	return out
}
