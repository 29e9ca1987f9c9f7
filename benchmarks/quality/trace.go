package quality

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteTrace writes the limits of one run over time, a line per second of simulated time: the
// second, the knee, then every reading of that second as the sum of the limits over the calls
// the dependency held ("limit/load"). It is for reading how a contender moves, window by window,
// when a phase's figures need explaining.
func WriteTrace(w io.Writer, r Run) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s, %s, variant %d: the sum of the limits / the calls in the dependency, at each reading",
		r.Class, r.Model, r.Contender.Name, r.Seed)
	second := time.Duration(-1)
	for _, tk := range r.Result.Ticks {
		if s := tk.At.Truncate(time.Second); s != second {
			second = s
			fmt.Fprintf(&b, "\n%5.0fs knee %3d:", s.Seconds(), tk.Capacity)
		}
		fmt.Fprintf(&b, " %d/%d", tk.Sum, tk.Load)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
