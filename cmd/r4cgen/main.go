// Command r4cgen writes resilient wrappers from //r4c: directives (docs/codegen.md).
//
// Typical use, in the package that declares the types:
//
//	//go:generate go run github.com/resilience4cata/r4c/cmd/r4cgen -type SearchClient,OrderClient
//
// For each type it writes <file>_r4c.go next to the file declaring the type, with
// <Type>Resilient and New<Type>Resilient. Directive problems are reported as
// file.go:LINE:COL: CODE: message, every problem of every type in one run; the exit status is
// then 1 and nothing is written for the package. See docs/codegen.md.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// run is main without the process: it returns the exit status.
func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("r4cgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	typeNames := fs.String("type", "", "comma-separated list of type names; required")
	dir := fs.String("dir", "", "directory of the package (default: the directory of $GOFILE, or the current directory)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: r4cgen -type T[,T...] [-dir directory]\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *typeNames == "" {
		fs.Usage()
		return 2
	}
	d := *dir
	if d == "" && fs.NArg() > 0 {
		d = fs.Arg(0)
	}
	if d == "" {
		d = "." // go generate runs us in the directory of $GOFILE
	}
	var names []string
	for _, n := range strings.Split(*typeNames, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	errs := Generate(d, names)
	for _, e := range errs {
		fmt.Fprintln(stderr, e)
	}
	if len(errs) > 0 {
		return 1
	}
	return 0
}
