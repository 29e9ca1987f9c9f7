package quality

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/resilience4cata/r4c/internal/sim"
)

// Run is one contender through one scenario.
type Run struct {
	Class     string
	Model     sim.Model
	Contender Contender
	// Seed is the run's variant of the class's scenario: 0 is the scenario as the class makes
	// it; variant k adds 100*k to its seed (other arrivals, other work, the same phases).
	Seed   uint64
	Result *sim.Result
}

// RunAll runs every contender through every class on both models, scaled by scale, on as
// many goroutines as there are CPUs. Runs share nothing, so the results do not depend on the
// order in which they finish.
func RunAll(classes []Class, contenders []Contender, scale float64) ([]Run, error) {
	return RunSeeds(classes, contenders, scale, 1)
}

// RunSeeds is RunAll over seeds variants of every scenario (Run.Seed 0 to seeds-1).
func RunSeeds(classes []Class, contenders []Contender, scale float64, seeds int) ([]Run, error) {
	var runs []Run
	for _, cl := range classes {
		for _, m := range []sim.Model{sim.PS, sim.FIFO} {
			for _, c := range contenders {
				for seed := range uint64(max(1, seeds)) {
					runs = append(runs, Run{Class: cl.Name, Model: m, Contender: c, Seed: seed})
				}
			}
		}
	}
	byName := map[string]Class{}
	for _, cl := range classes {
		byName[cl.Name] = cl
	}
	errs := make([]error, len(runs))
	work := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range work {
				r := &runs[i]
				sc := byName[r.Class].Make(r.Model, scale)
				sc.Seed += 100 * r.Seed
				res, err := sim.Run(sc, r.Contender.New(sc))
				if err != nil {
					errs[i] = fmt.Errorf("%s/%s/%s: %w", r.Class, r.Model, r.Contender.Name, err)
				}
				r.Result = res
			}
		})
	}
	for i := range runs {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return runs, nil
}
