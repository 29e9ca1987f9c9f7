package quality

import (
	"fmt"
	"runtime"
	"slices"
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

// RunSeeds is RunAll over seeds variants of every scenario (Run.Seed 0 to seeds-1). A
// contender with Fixed (BestFixed) runs once per fixed limit it needs (pickFixed), once the
// anchors' runs among runs have set the latency target: the other contenders run first, and
// where one of them (Contender.Knee) held the same limits in the same scenario, its run serves.
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
	scenario := func(r Run) sim.Scenario {
		sc := byName[r.Class].Make(r.Model, scale)
		sc.Seed += 100 * r.Seed
		return sc
	}
	wrap := func(r *Run, err error) error {
		if err != nil {
			return fmt.Errorf("%s/%s/%s: %w", r.Class, r.Model, r.Contender.Name, err)
		}
		return nil
	}
	var plain, fixed []int
	for i, r := range runs {
		if r.Contender.Fixed == nil {
			plain = append(plain, i)
		} else {
			fixed = append(fixed, i)
		}
	}
	err := parallel(plain, func(i int) error {
		r := &runs[i]
		sc := scenario(*r)
		res, err := sim.Run(sc, r.Contender.New(sc))
		r.Result = res
		return wrap(r, err)
	})
	if err != nil {
		return nil, err
	}
	var anchors []Run
	for _, r := range runs {
		if r.Contender.Anchor {
			anchors = append(anchors, r)
		}
	}
	anchorRows := Rows(anchors)
	type variant struct {
		class string
		model sim.Model
		seed  uint64
	}
	knees := map[variant][]int{}
	for i, r := range runs {
		if r.Contender.Knee > 0 {
			v := variant{r.Class, r.Model, r.Seed}
			knees[v] = append(knees[v], i)
		}
	}
	err = parallel(fixed, func(i int) error {
		r := &runs[i]
		sc := scenario(*r)
		limits := fixedCandidates(sc, r.Contender.Fixed)
		res, err := pickFixed(*r, limits, func(c int) (*sim.Result, error) {
			shares := limits[c].shares(sc)
			for _, k := range knees[variant{r.Class, r.Model, r.Seed}] {
				if slices.Equal(fixedLimit{runs[k].Contender.Knee, 0}.shares(sc), shares) {
					return runs[k].Result, nil
				}
			}
			return sim.Run(sc, sim.KneeLimitWithin(sc, limits[c].factor, limits[c].most))
		}, anchorRows)
		r.Result = res
		return wrap(r, err)
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// parallel calls f with each of items on as many goroutines as there are CPUs, and returns the
// first error in the order of items.
func parallel(items []int, f func(int) error) error {
	errs := make([]error, len(items))
	work := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range work {
				errs[j] = f(items[j])
			}
		})
	}
	for j := range items {
		work <- j
	}
	close(work)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
