// Command quality runs the quality bench of the adaptive limits and prints its table.
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
	only := flag.String("only", "", "comma-separated scenario classes to run (default: all)")
	algs := flag.String("alg", "", "comma-separated algorithms to run (default: all)")
	flag.Parse()
	classes := quality.Classes()
	if *only != "" {
		classes = filter(classes, *only, func(c quality.Class) string { return c.Name })
	}
	contenders := quality.Contenders()
	if *algs != "" {
		contenders = filter(contenders, *algs, func(c quality.Contender) string { return c.Name })
	}
	runs, err := quality.RunAll(classes, contenders, *scale)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	quality.WriteText(os.Stdout, quality.Rows(runs))
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
