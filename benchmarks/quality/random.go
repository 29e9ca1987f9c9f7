package quality

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/resilience4cata/r4c/internal/sim"
)

// RandomClasses returns a third set of scenario classes, drawn at random (from a fixed seed, so
// the same every run) rather than written: knees, service times, spreads, timeouts, loads,
// capacity changes and replica counts that nobody chose, so that no rule of Knee's could have
// been tuned to them. Each class has one to three phases. The draws stay within the ranges the
// targets speak of: a timeout of three to five mean service times (inside the limit, as the
// reference page recommends; at twice the mean, a limit near the knee is a loss system, see
// own-drops), and shares of at least three slots per replica (a replica whose share is one or two
// slots cannot hold the knee without idling them, whatever the algorithm).
func RandomClasses() []Class { return DrawClasses(2026, 12, randomClasses) }

// DrawClasses draws n classes the way RandomClasses does, from the generator seeded with seed1
// and seed2: another draw of the same kind, to check that what the published draw shows holds
// on scenarios it did not pick (cmd/quality -draw). RandomClasses is DrawClasses(2026, 12, 20).
func DrawClasses(seed1, seed2 uint64, n int) []Class {
	r := rand.New(rand.NewPCG(seed1, seed2))
	pick := func(xs ...float64) float64 { return xs[r.IntN(len(xs))] }
	classes := make([]Class, 0, n)
	for i := 1; i <= n; i++ {
		knee := int(pick(6, 10, 16, 24, 40, 64, 100))
		replicas := int(pick(1, 1, 1, 2, 4, 8))
		for replicas > 1 && knee/replicas < 4 {
			replicas /= 2
		}
		svc := time.Duration(pick(5, 10, 25, 50, 120, 300)) * time.Millisecond
		var spread sim.Dist
		switch r.IntN(3) {
		case 0:
			spread = sim.Uniform{Spread: pick(0.1, 0.2, 0.3, 0.4)}
		case 1:
			spread = sim.Exponential{}
		default:
			spread = sim.LogNormal{Sigma: pick(0.3, 0.5, 0.7, 0.9)}
		}
		timeout := pick(3, 4, 5)
		phases := make([]sim.Phase, 1+r.IntN(3))
		seconds := make([]int, len(phases))
		var doc strings.Builder
		if replicas == 1 {
			doc.WriteString("one limit")
		} else {
			fmt.Fprintf(&doc, "%d replicas", replicas)
		}
		fmt.Fprintf(&doc, ", calls of %v (%v), a timeout of %gx: ", svc, spread, timeout)
		for p := range phases {
			c := knee
			if f := pick(1, 1, 0.5, 2); p > 0 && int(float64(knee)*f)/replicas >= 3 {
				c = int(float64(knee) * f)
			}
			load := pick(0.5, 0.8, 1.3, 1.5, 2, 3)
			seconds[p] = int(pick(60, 90))
			phases[p] = sim.Phase{Capacity: c, Service: svc, Rate: rate(load, knee, svc)}
			if p > 0 {
				doc.WriteString(", then ")
			}
			fmt.Fprintf(&doc, "knee %d at %.2gx for %ds", c, load*float64(knee)/float64(c), seconds[p])
		}
		name := fmt.Sprintf("r-%02d", i)
		seed := uint64(300 + i)
		classes = append(classes, Class{Name: name, Doc: doc.String(), Make: func(m sim.Model, scale float64) sim.Scenario {
			sc := sim.Scenario{Name: name, Model: m, Spread: spread, Timeout: time.Duration(timeout * float64(svc)), Seed: seed, Replicas: replicas}
			for p, ph := range phases {
				ph.Duration = secs(scale, seconds[p])
				sc.Phases = append(sc.Phases, ph)
			}
			return sc
		}})
	}
	return classes
}

// randomClasses is how many classes RandomClasses draws.
const randomClasses = 20
