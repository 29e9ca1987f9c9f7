// Package realtime runs adaptive limits on the wall clock, in front of an emulated dependency,
// for the limits the quality bench cannot run on its simulated clock: failsafe-go's adaptive
// limiter reads time.Now itself. Ours run beside it in the same run, each contender with a
// dependency of its own, so that the table compares them under the same load and the same
// machine (docs/quality-realtime.md; the command is ./realtime/cmd/realtime).
//
// Real time on a shared machine is noisy (timers fire late by up to a millisecond or so under
// load): the figures are one run's, good to a point or two, where the quality bench's are exact
// and repeatable.
package realtime

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/resilience4cata/r4c"
)

// Limiter is a contender: an adaptive limit that admits a call or rejects it.
type Limiter interface {
	// Acquire admits a call (ok) and returns its permit, or rejects it.
	Acquire() (p Permit, ok bool)
	// Limit returns the current limit.
	Limit() int
}

// Permit ends an admitted call exactly once.
type Permit interface {
	Success() // the call was served in time
	Timeout() // the call timed out
}

// reference is a Limiter told the knee of each phase as it begins: a fixed multiple of the
// knee, known in advance, which shows what the harness itself costs.
type reference interface{ setKnee(workers int) }

// Contender names a Limiter and makes a fresh one for each scenario.
type Contender struct {
	Name string
	Doc  string
	New  func() Limiter
}

// Phase is a span of a scenario: the dependency's workers (its knee) and the open load offered,
// in calls a second arriving at random (Poisson).
type Phase struct {
	Duration time.Duration
	Workers  int
	Rate     float64
}

// Scenario is a dependency whose calls take Service on average (uniform within ±10%, so that no
// call's own work reaches the timeout), behind a limit, with a Timeout inside the limit, over
// phases.
type Scenario struct {
	Name, Doc string
	Service   time.Duration
	Timeout   time.Duration
	Phases    []Phase
}

// PhaseResult is what a contender did in one phase.
type PhaseResult struct {
	Knee                         int
	Offered, Rejected, Succeeded int
	TimedOut                     int
	Best                         float64 // the most successful calls the phase allows
	Goodput                      float64 // Succeeded / Best
	Settled                      float64 // the limit over the knee, averaged over the second half of the phase
	MeanLatency, MeanService     time.Duration
	// Limits is the limit read at each sampling of the phase (every 50ms), for -trace.
	Limits                       []int
	latencies, services, settled float64
	settledN                     int
}

// Result is a contender's run of a scenario.
type Result struct {
	Scenario  string
	Contender string
	Phases    []PhaseResult
}

// sampleEvery is how often the limit is read for Settled.
const sampleEvery = 50 * time.Millisecond

// Run runs every contender through sc at once, each in front of its own dependency, on the
// system clock, and returns their results in the order of contenders. It returns early, with
// what was measured, if ctx is done.
func Run(ctx context.Context, sc Scenario, contenders []Contender, seed uint64) []Result {
	results := make([]Result, len(contenders))
	var wg sync.WaitGroup
	for i, c := range contenders {
		wg.Go(func() {
			results[i] = runOne(ctx, sc, c, seed)
		})
	}
	wg.Wait()
	return results
}

// call is the outcome of one admitted call.
type call struct {
	ok      bool
	latency time.Duration
	work    time.Duration
}

func runOne(ctx context.Context, sc Scenario, c Contender, seed uint64) Result {
	clock := r4c.SystemClock()
	lim := c.New()
	dep := NewDependency(clock, sc.Phases[0].Workers)
	res := Result{Scenario: sc.Name, Contender: c.Name, Phases: make([]PhaseResult, len(sc.Phases))}
	rng := rand.New(rand.NewPCG(seed, 0x5ca1ab1e))

	var mu sync.Mutex // guards res.Phases' counters from the calls' goroutines
	var calls sync.WaitGroup
	start := time.Now()
	var phaseStart time.Duration
	for i, ph := range sc.Phases {
		dep.SetWorkers(ph.Workers)
		if r, ok := lim.(reference); ok {
			r.setKnee(ph.Workers)
		}
		p := &res.Phases[i]
		p.Knee = ph.Workers
		end := phaseStart + ph.Duration
		nextSample := phaseStart
		next := phaseStart + exp(rng, ph.Rate)
		for next < end && ctx.Err() == nil {
			// Wait for the next arrival, then read the limit for the samples due by then.
			// Arrivals keep their drawn times even when the goroutine wakes late, so the
			// rate is the one drawn.
			if d := next - time.Since(start); d > 0 {
				time.Sleep(d)
			}
			for nextSample <= next {
				l := lim.Limit()
				mu.Lock()
				p.Limits = append(p.Limits, l)
				if nextSample >= phaseStart+ph.Duration/2 {
					p.settled += float64(l)
					p.settledN++
				}
				mu.Unlock()
				nextSample += sampleEvery
			}
			work := time.Duration(float64(sc.Service) * (0.9 + 0.2*rng.Float64()))
			mu.Lock()
			p.Offered++
			mu.Unlock()
			permit, ok := lim.Acquire()
			if !ok {
				mu.Lock()
				p.Rejected++
				mu.Unlock()
			} else {
				calls.Add(1)
				go func(phase int) {
					defer calls.Done()
					r := serve(clock, dep, sc.Timeout, work)
					if r.ok {
						permit.Success()
					} else {
						permit.Timeout()
					}
					mu.Lock()
					q := &res.Phases[phase] // the phase it arrived in
					if r.ok {
						q.Succeeded++
						q.latencies += float64(r.latency)
					} else {
						q.TimedOut++
					}
					q.services += float64(r.work)
					mu.Unlock()
				}(i)
			}
			next += exp(rng, ph.Rate)
		}
		if d := end - time.Since(start); d > 0 && ctx.Err() == nil {
			time.Sleep(d)
		}
		phaseStart = end
	}
	calls.Wait()
	for i := range res.Phases {
		finish(&res.Phases[i], sc, i)
	}
	return res
}

// serve makes one admitted call with the timeout inside the limit.
func serve(clock r4c.Clock, dep *Dependency, timeout, work time.Duration) call {
	done := make(chan struct{})
	t := clock.AfterFunc(timeout, func() { close(done) })
	began := clock.Nanotime()
	ok := dep.Call(done, work)
	if ok {
		t.Stop()
	}
	return call{ok: ok, latency: time.Duration(clock.Nanotime() - began), work: work}
}

// finish computes a phase's figures from its counts.
func finish(p *PhaseResult, sc Scenario, i int) {
	ph := sc.Phases[i]
	admitted := p.Succeeded + p.TimedOut
	if admitted > 0 {
		p.MeanService = time.Duration(p.services / float64(admitted))
	}
	if p.Succeeded > 0 {
		p.MeanLatency = time.Duration(p.latencies / float64(p.Succeeded))
	}
	// The most a phase allows: the calls that arrived, or what the workers serve at the mean
	// work, whichever is less (no call's own work reaches the timeout).
	p.Best = math.Min(float64(p.Offered), float64(ph.Workers)*ph.Duration.Seconds()/sc.Service.Seconds())
	if p.Best > 0 {
		p.Goodput = float64(p.Succeeded) / p.Best
	}
	if p.settledN > 0 && p.Knee > 0 {
		p.Settled = p.settled / float64(p.settledN) / float64(p.Knee)
	}
}

// exp draws the gap to the next arrival of a Poisson process of rate a second.
func exp(rng *rand.Rand, rate float64) time.Duration {
	return time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
}
