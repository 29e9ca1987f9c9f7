// Command realtime runs our adaptive limits and failsafe-go's on the wall clock, side by side,
// and prints a table per scenario (package realtime). With -write DIR it writes
// DIR/quality-realtime.md. It takes about three minutes and three quarters at -scale 1 (the scenarios run one after the other, the contenders of each at once).
//
// Usage, from the benchmarks directory:
//
//	go run ./realtime/cmd/realtime [-scale 1] [-write ../docs]
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/resilience4cata/r4c/benchmarks/realtime"
)

func main() {
	scale := flag.Float64("scale", 1, "scale of the scenarios' durations")
	seed := flag.Uint64("seed", 1, "seed of the arrivals and the calls' work")
	write := flag.String("write", "", "write `DIR`/quality-realtime.md (e.g. ../docs)")
	trace := flag.Bool("trace", false, "also print each contender's limit over time, a reading a second")
	flag.Parse()
	if *scale <= 0 {
		fmt.Fprintf(os.Stderr, "realtime: -scale %v: must be above 0\n", *scale)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	scenarios := realtime.Scenarios(*scale)
	contenders := realtime.Contenders()
	var results [][]realtime.Result
	for _, sc := range scenarios {
		rs := realtime.Run(ctx, sc, contenders, *seed)
		results = append(results, rs)
		fmt.Printf("%s: %s\n", sc.Name, sc.Doc)
		realtime.Table(os.Stdout, rs)
		fmt.Println()
		if *trace {
			realtime.Trace(os.Stdout, rs)
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "realtime: interrupted")
		os.Exit(1)
	}
	if *write != "" {
		var b bytes.Buffer
		args := []string{"go run ./realtime/cmd/realtime"}
		flag.Visit(func(f *flag.Flag) {
			if f.Name != "write" && f.Name != "trace" {
				args = append(args, fmt.Sprintf("-%s %s", f.Name, f.Value))
			}
		})
		args = append(args, "-write ../docs")
		realtime.Page(&b, "(from benchmarks/) "+strings.Join(args, " "), scenarios, contenders, results)
		if err := os.WriteFile(filepath.Join(*write, "quality-realtime.md"), b.Bytes(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "realtime:", err)
			os.Exit(1)
		}
	}
}
