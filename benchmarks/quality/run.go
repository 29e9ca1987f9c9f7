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

// RunSeeds is RunAll over seeds variants of every scenario (Run.Seed 0 to seeds-1). A
// contender with Fixed (BestFixed) runs once per distinct fixed limit, and its run is made of
// theirs, phase by phase, once the anchors' runs among runs have set the latency target.
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
	// A job is a run, or one fixed limit of a run of BestFixed, whose result goes to
	// fixed[run][candidate].
	type job struct {
		run, candidate int
		limit          fixedLimit
	}
	var jobs []job
	fixed := make([][]*sim.Result, len(runs))
	limits := make([][]fixedLimit, len(runs))
	for i, r := range runs {
		if r.Contender.Fixed == nil {
			jobs = append(jobs, job{run: i, candidate: -1})
			continue
		}
		limits[i] = fixedCandidates(scenario(r), r.Contender.Fixed)
		fixed[i] = make([]*sim.Result, len(limits[i]))
		for c, l := range limits[i] {
			jobs = append(jobs, job{run: i, candidate: c, limit: l})
		}
	}
	errs := make([]error, len(jobs))
	work := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range work {
				jb := jobs[j]
				r := &runs[jb.run]
				sc := scenario(*r)
				newLimiter := sim.KneeLimitWithin(sc, jb.limit.factor, jb.limit.most)
				if jb.candidate < 0 {
					newLimiter = r.Contender.New(sc)
				}
				res, err := sim.Run(sc, newLimiter)
				if err != nil {
					errs[j] = fmt.Errorf("%s/%s/%s: %w", r.Class, r.Model, r.Contender.Name, err)
				}
				if jb.candidate < 0 {
					r.Result = res
				} else {
					fixed[jb.run][jb.candidate] = res
				}
			}
		})
	}
	for j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	var anchors []Run
	for _, r := range runs {
		if r.Contender.Anchor {
			anchors = append(anchors, r)
		}
	}
	anchorRows := Rows(anchors)
	for i := range runs {
		if fixed[i] != nil {
			runs[i].Result = pickFixed(runs[i], limits[i], fixed[i], anchorRows)
		}
	}
	return runs, nil
}
