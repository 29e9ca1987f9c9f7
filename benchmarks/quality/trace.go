package quality

import (
	"fmt"
	"io"
	"time"
)

// WriteTrace writes the limits of one run over time, a line per second of simulated time: the
// second, the knee, then every reading of that second as the sum of the limits over the calls
// the dependency held ("limit/load"). It is for reading how a contender moves, window by window,
// when a phase's figures need explaining.
func WriteTrace(w io.Writer, r Run) error {
	if _, err := fmt.Fprintf(w, "%s on %s, %s, variant %d: the sum of the limits / the calls in the dependency, at each reading\n",
		r.Class, r.Model, r.Contender.Name, r.Seed); err != nil {
		return err
	}
	second := time.Duration(-1)
	for _, tk := range r.Result.Ticks {
		if s := tk.At.Truncate(time.Second); s != second {
			if second >= 0 {
				if _, err := fmt.Fprintln(w); err != nil {
					return err
				}
			}
			second = s
			if _, err := fmt.Fprintf(w, "%5.0fs knee %3d:", s.Seconds(), tk.Capacity); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintf(w, " %d/%d", tk.Sum, tk.Load); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}
