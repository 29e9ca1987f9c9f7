package quality

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteTrace writes the limits of one run over time, a line per second of simulated time: the
// second, the knee, then every reading of that second as the sum of the limits over the calls
// the dependency held ("limit/load"). With replicas (up to traceReplicas of them), each
// replica's limit is written instead of the sum ("12+15+13/37"): a replica that takes more than
// its share shows there, where the sum hides it. It is for reading how a contender moves,
// window by window, when a phase's figures need explaining.
func WriteTrace(w io.Writer, r Run) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s, %s, variant %d: the sum of the limits (each replica's, up to %d) / the calls in the dependency, at each reading",
		r.Class, r.Model, r.Contender.Name, r.Seed, traceReplicas)
	second := time.Duration(-1)
	for _, tk := range r.Result.Ticks {
		if s := tk.At.Truncate(time.Second); s != second {
			second = s
			fmt.Fprintf(&b, "\n%5.0fs knee %3d:", s.Seconds(), tk.Knee)
		}
		b.WriteByte(' ')
		if n := len(tk.Limits); n > 1 && n <= traceReplicas {
			for i, l := range tk.Limits {
				if i > 0 {
					b.WriteByte('+')
				}
				fmt.Fprint(&b, l)
			}
		} else {
			fmt.Fprint(&b, tk.Sum)
		}
		fmt.Fprintf(&b, "/%d", tk.Load)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// traceReplicas is the most replicas whose limits WriteTrace writes one by one; above it, a
// reading is their sum.
const traceReplicas = 10
