package sim

import (
	"math"
	"slices"
	"time"
)

// The band in which a limit counts as settled at the knee, as a multiple of it.
const (
	SettleLow  = 0.8
	SettleHigh = 1.5
)

// Result is what a run measured.
type Result struct {
	Scenario *Scenario
	// Ticks are the limits read every Scenario.Tick.
	Ticks  []Tick
	Phases []PhaseResult
	end    int64
	table  *spreadTable
	last   struct{ s, ok, work float64 } // the last answer of under (s is never 0)
}

// Tick is a reading of the limits.
type Tick struct {
	At     time.Duration
	Phase  int
	Knee   int   // the phase's (Scenario.Knee)
	Limits []int // per replica
	Sum    int   // of Limits
	Load   int   // calls the dependency holds, and answers on their way back (Scenario.Transit)
}

// PhaseResult is what happened during one phase.
type PhaseResult struct {
	Phase      Phase
	Start, End time.Duration
	// Counts of calls: offered to the limiters, rejected by them, admitted, answered in time
	// (Succeeded) and timed out.
	Offered, Rejected, Admitted, Succeeded, TimedOut int
	// PerReplica counts the successful calls of each replica.
	PerReplica []int
	// Overloaded reports whether the load offered was above what the dependency can serve.
	Overloaded bool
	// Best is the most successful calls the phase allows: its offered load (in an open loop, the
	// calls that arrived) or the dependency's capacity, whichever is less, less the calls whose
	// own work exceeds the timeout.
	Best float64
	// Goodput is Succeeded/Best.
	Goodput float64
	// MeanService is the mean work of a call over the phase.
	MeanService time.Duration
	// Latencies of the successful calls.
	MeanLatency, P99Latency time.Duration
	// Settled is the sum of the limits over the knee, averaged over the second half of the
	// phase; ReplicaLimits are each replica's mean limit over the same time.
	Settled       float64
	ReplicaLimits []float64
	// Held is the calls in flight (Tick.Load) over the knee, averaged over the same readings as
	// Settled: what the limits let in, where Settled also counts the slots each limit leaves
	// idle between its own arrivals.
	Held float64
	// Jain is Jain's fairness index of ReplicaLimits (1 is perfectly fair).
	Jain float64
	// SettleTime is when, from the start of the phase, the sum of the limits entered
	// [SettleLow, SettleHigh] times the knee for the rest of the phase; -1 if it did not.
	SettleTime time.Duration

	latencies []int64
	// Of the calls that arrived, those whose own work fits in the timeout, and the number
	// expected to (the sum of each one's chance): Best takes the drawn share, not the expected.
	fits, fitsExpected float64
	// A closed loop's cycle as drawn, and as expected: the thinking times drawn and their
	// number, and the work the calls that arrived use (see arrived).
	thinkSum, thinks, workSum, workExpected, works float64
}

type outcomeKind uint8

const (
	outcomeSuccess outcomeKind = iota
	outcomeTimeout
	outcomeRejected
)

func newResult(sc *Scenario) *Result {
	r := &Result{Scenario: sc, table: spreadTableOf(sc.Spread, sc.Seed)}
	var at int64
	for _, p := range sc.Phases {
		pr := PhaseResult{Phase: p, Start: time.Duration(at), End: time.Duration(at + int64(p.Duration)),
			PerReplica: make([]int, max(1, sc.Replicas))}
		at += int64(p.Duration)
		r.Phases = append(r.Phases, pr)
	}
	r.end = at
	return r
}

func (p *PhaseResult) record(replica int, o outcomeKind, lat int64) {
	p.Offered++
	switch o {
	case outcomeRejected:
		p.Rejected++
		return
	case outcomeSuccess:
		p.Succeeded++
		p.PerReplica[replica]++
		p.latencies = append(p.latencies, lat)
	case outcomeTimeout:
		p.TimedOut++
	}
	p.Admitted++
}

// arrived counts a call that arrived in phase p, of mean work mean and drawn work work: for the
// share of calls whose own work fits in the timeout, and for a closed loop's cycle, the work it
// uses as drawn and as expected (up to the timeout, unless the dependency keeps working).
func (r *Result) arrived(p *PhaseResult, mean, work float64) {
	timeout := float64(r.Scenario.Timeout)
	ok, expected := r.under(mean)
	used := work
	if timeout > 0 && !r.Scenario.KeepWork {
		used = min(work, timeout)
	}
	p.works++
	p.workSum += used
	p.workExpected += expected
	if timeout > 0 {
		p.fitsExpected += ok
		if work <= timeout-float64(r.Scenario.Transit) {
			p.fits++
		}
	}
}

// under returns, for calls of mean work s, the share whose answer comes within the timeout
// (their work within it less the answer's transit) and the work a call uses on average (up to
// the timeout, unless the dependency keeps working).
func (r *Result) under(s float64) (ok, work float64) {
	if s == r.last.s {
		return r.last.ok, r.last.work // asked for every arrival: the mean changes only with the phase or a drift
	}
	sc := r.Scenario
	ok, work = r.table.under(s, float64(sc.Timeout), sc.KeepWork)
	if sc.Transit > 0 && sc.Timeout > 0 {
		ok, _ = r.table.under(s, float64(sc.Timeout-sc.Transit), sc.KeepWork)
	}
	r.last.s, r.last.ok, r.last.work = s, ok, work
	return ok, work
}

// thought counts a closed-loop client's thinking time d in phase p.
func (r *Result) thought(p *PhaseResult, d int64) {
	p.thinkSum += float64(d)
	p.thinks++
}

func (r *Result) tick(s *Sim) {
	t := Tick{At: time.Duration(s.now), Phase: s.phase, Knee: s.sc.Knee(s.sc.Phases[s.phase]),
		Limits: make([]int, len(s.limiters)), Load: s.dep.load() + s.transit}
	for i, l := range s.limiters {
		t.Limits[i] = l.Limit()
		t.Sum += t.Limits[i]
	}
	r.Ticks = append(r.Ticks, t)
}

// finish computes each phase's figures.
func (r *Result) finish(s *Sim) {
	for i := range r.Phases {
		p := &r.Phases[i]
		// Offered counts answers and rejections; an admitted call is counted when it ends.
		p.Offered = p.Succeeded + p.TimedOut + p.Rejected
		r.best(p)
		if p.Best > 0 {
			p.Goodput = float64(p.Succeeded) / p.Best
		}
		if n := len(p.latencies); n > 0 {
			slices.Sort(p.latencies)
			var sum float64
			for _, l := range p.latencies {
				sum += float64(l)
			}
			p.MeanLatency = time.Duration(sum / float64(n))
			p.P99Latency = time.Duration(p.latencies[min(n-1, int(math.Ceil(0.99*float64(n)))-1)])
			p.latencies = nil
		}
		r.settle(p, i)
	}
	// The spread's table (1 MB) is not the result's to keep: a bench holds thousands of results.
	r.table = nil
}

// best integrates, over the phase in steps of a tick, the most successful calls a second the
// dependency allows: the load offered (open loop: the rate; closed loop: what the clients ask
// when every call takes its mean work) or the capacity, whichever is less, times the share of
// calls whose own work fits in the timeout. Both are taken as drawn, not as expected: an open
// loop's load is the arrivals drawn, and the share that fits is that of the calls that arrived
// (every arrival draws its work, admitted or not). Their noise (about 0.5% over a 90-second
// phase at 400 calls a second; as much from the timeouts of 3,600 exponential calls) would
// otherwise read as goodput gained or lost.
func (r *Result) best(p *PhaseResult) {
	sc := r.Scenario
	ph := p.Phase
	step := int64(sc.Tick)
	drawn := 1.0
	if expected := ph.Rate * ph.Duration.Seconds(); ph.Clients == 0 && expected > 0 && p.Offered > 0 {
		drawn = float64(p.Offered) / expected
	}
	// A closed loop's load is what its clients ask: one call per cycle of thinking and work.
	// The cycle is taken as drawn (the thinking times and the work of the calls that arrived),
	// not as expected: with 10 clients over 90 seconds their noise reads as 1% of goodput.
	// An answer's transit is part of both.
	transit := float64(sc.Transit)
	cycle := 1.0
	if ph.Clients > 0 && p.thinks > 0 && p.works > 0 && p.workSum > 0 {
		cycle = (float64(ph.Think) + p.workExpected/p.works + transit) / (p.thinkSum/p.thinks + p.workSum/p.works + transit)
	}
	var best, service, demand, capacity float64
	n := 0
	for t := int64(0); t < int64(ph.Duration); t += step {
		dt := float64(min(step, int64(ph.Duration)-t)) / float64(time.Second)
		s := ph.service(t + step/2)
		ok, work := r.under(s)
		rate := ph.Rate
		if ph.Clients > 0 {
			rate += cycle * float64(ph.Clients) / ((float64(ph.Think) + work + transit) / float64(time.Second))
		}
		cap := float64(ph.Capacity) / (work / float64(time.Second))
		best += ok * min(rate*drawn, cap) * dt
		service += s
		demand += rate * dt
		capacity += cap * dt
		n++
	}
	if p.fitsExpected > 0 {
		// The share of calls whose work fits in the timeout, as drawn: with few calls a phase
		// (a slow dependency), its binomial noise would otherwise read as goodput gained or lost.
		best *= p.fits / p.fitsExpected
	}
	p.Best = best
	p.MeanService = time.Duration(service / float64(n))
	p.Overloaded = demand > capacity
}

// settle computes the settled limits and the settle time of phase i from the ticks.
func (r *Result) settle(p *PhaseResult, i int) {
	var ticks []Tick
	for _, t := range r.Ticks {
		if t.Phase == i {
			ticks = append(ticks, t)
		}
	}
	if len(ticks) == 0 {
		return
	}
	half := ticks[len(ticks)/2:]
	replicas := len(half[0].Limits)
	p.ReplicaLimits = make([]float64, replicas)
	var sum, held float64
	for _, t := range half {
		sum += float64(t.Sum)
		held += float64(t.Load)
		for k, l := range t.Limits {
			p.ReplicaLimits[k] += float64(l)
		}
	}
	knee := float64(r.Scenario.Knee(p.Phase))
	p.Settled = sum / float64(len(half)) / knee
	p.Held = held / float64(len(half)) / knee
	var s1, s2 float64
	for k := range p.ReplicaLimits {
		p.ReplicaLimits[k] /= float64(len(half))
		s1 += p.ReplicaLimits[k]
		s2 += p.ReplicaLimits[k] * p.ReplicaLimits[k]
	}
	if s2 > 0 {
		p.Jain = s1 * s1 / (float64(replicas) * s2)
	}
	p.SettleTime = -1
	for k := len(ticks) - 1; k >= 0; k-- {
		x := float64(ticks[k].Sum) / knee
		if x < SettleLow || x > SettleHigh {
			if k < len(ticks)-1 {
				p.SettleTime = ticks[k+1].At - p.Start
			}
			return
		}
	}
	p.SettleTime = 0
}
