// Package sim is a discrete-event simulation of clients, adaptive limits and a dependency, on a
// simulated clock: minutes of traffic in a fraction of a second of real time, the same result
// for the same scenario on every run. The quality bench (benchmarks/quality) drives it. The demo
// (cmd/r4c-demo) has a smaller simulation of its own, which sends its calls through
// Pipeline.ExecuteAsync and the manual clock.
//
// A scenario has one dependency (processor sharing or a FIFO pool of workers, whose knee is its
// number of workers), one or more replicas each with its own limiter in front of it, and a load
// (open loop: Poisson arrivals; closed loop: clients that wait for each answer), in phases
// during which the capacity, the mean service time (which may drift) and the load are fixed.
// A timeout may sit inside each limiter: a call that takes longer ends at the timeout as a drop.
package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/heapq"
)

// Phase is a stretch of a scenario with one capacity, service time and load.
type Phase struct {
	Duration time.Duration
	// Capacity is the dependency's number of workers: its knee.
	Capacity int
	// Service is the mean work of a call at the start of the phase (at full speed).
	Service time.Duration
	// ServiceTo, when set, is the mean work at the end of the phase: it moves linearly from
	// Service (a drift: heavier calls, the same knee).
	ServiceTo time.Duration
	// Rate is the open-loop arrival rate, in calls per second over all replicas.
	Rate float64
	// Clients is the number of closed-loop clients over all replicas, spread evenly; each
	// thinks for an exponential time of mean Think between an answer and its next call.
	Clients int
	Think   time.Duration
}

// service returns the phase's mean work at offset t into it.
func (p Phase) service(t int64) float64 {
	if p.ServiceTo == 0 || p.Duration <= 0 {
		return float64(p.Service)
	}
	f := min(1, float64(t)/float64(p.Duration))
	return float64(p.Service) + f*float64(p.ServiceTo-p.Service)
}

// Scenario is one simulated run.
type Scenario struct {
	Name   string
	Model  Model
	Phases []Phase
	// Spread is the distribution of a call's work around the phase's mean (mean 1).
	Spread Dist
	// Timeout, when set, ends a call that takes longer than it as a drop (a timeout inside the
	// limit). Unless KeepWork, the dependency stops working on it.
	Timeout  time.Duration
	KeepWork bool
	// Transit, when set, is the time an answer takes to reach its caller once the dependency
	// is done with the call (a network's round trip): the call holds its slot of the limit but
	// no worker, so the knee, the calls in flight at which the dependency is busy without a
	// queue, is Capacity times (Service + Transit) / Service (see Knee). The timeout counts it.
	Transit time.Duration
	// Replicas each have a limiter and an even share of the load (default 1).
	Replicas int
	// Backoff is how long a closed-loop client waits after a rejection (default: the first
	// phase's mean service time).
	Backoff time.Duration
	Seed    uint64
	// Tick is how often the limits are recorded (default 100ms).
	Tick time.Duration
	// ClockOffset is where the wall clock (Clock.Now) reads at the start, past Epoch: 0 starts
	// on a boundary of Knee's drain grid, so that phases of whole tens of seconds change on
	// one; any other offset moves every phase change off it by that much.
	ClockOffset time.Duration
}

// Limiter is one replica's concurrency limiter, as the simulation sees it.
type Limiter interface {
	// Acquire takes a slot, or reports a rejection.
	Acquire() (Permit, bool)
	// Limit returns the current limit.
	Limit() int
}

// Permit ends an admitted call.
type Permit interface {
	Success() // the call returned: a sample
	Drop()    // the call timed out: an overload signal
}

// NewLimiter makes the limiter of replica i on the simulation's clock.
type NewLimiter func(clock r4c.Clock, replica int) (Limiter, error)

// Sim is the state of one run.
type Sim struct {
	sc     Scenario
	now    int64
	events *heapq.Heap[event]
	// Timeouts and answers come a fixed delay (Scenario.Timeout, Scenario.Transit) after they
	// are scheduled, so they are due in the order they are made: queues rather than the heap,
	// which they would otherwise fill (a timeout stays there, cancelled, until it is due).
	timeouts eventQueue
	answers  eventQueue
	spare    []*event // events of the heap done with, for schedule to use again
	seq      uint64
	dep      dependency
	limiters []Limiter
	rngLoad  []*rand.Rand // per replica: arrivals and think times
	rngWork  []*rand.Rand // per replica: the work of each call, drawn for every arrival
	phase    int
	phaseAt  int64 // start of the current phase
	clients  []int // closed loop: active clients per replica
	want     []int // closed loop: clients per replica the phase asks for
	arrival  []*event
	transit  int // answers on their way back (Scenario.Transit)
	res      *Result
	cur      *PhaseResult
}

type eventKind uint8

const (
	evArrival eventKind = iota // an open-loop arrival at a replica
	evClient                   // a closed-loop client makes its next call
	evTimeout                  // a call's timeout
	evPhase                    // the next phase starts
	evTick                     // record the limits
	evTimer                    // a timer of Clock
	evAnswer                   // an answer reaches its caller after Transit
)

type event struct {
	at        int64
	seq       uint64
	kind      eventKind
	replica   int
	c         *call
	timer     *timer
	cancelled bool
	index     int
}

// call is one admitted call, with its job and events: one allocation per call.
type call struct {
	replica int
	start   int64
	permit  Permit
	job     job
	timeout event // at (when scheduled) after the start, when the scenario has a timeout
	answer  event // at after the dependency is done, when the scenario has a transit
	closed  bool  // made by a closed-loop client
	done    bool
}

// eventQueue holds events in the order they are due: each is due no earlier than the one
// before it.
type eventQueue struct {
	items []*event
	head  int
}

func (q *eventQueue) push(ev *event) {
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0 // empty: reuse the array from its start
	}
	q.items = append(q.items, ev)
}

// min returns the first event, nil when there is none.
func (q *eventQueue) min() *event {
	if q.head == len(q.items) {
		return nil
	}
	return q.items[q.head]
}

func (q *eventQueue) pop() {
	q.items[q.head] = nil
	q.head++
	if q.head > 1024 && q.head > len(q.items)/2 {
		// Slide the pending events back to the start rather than let the array grow.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
}

// Run simulates sc with the limiters that newLimiter makes.
func Run(sc Scenario, newLimiter NewLimiter) (*Result, error) {
	if err := sc.check(); err != nil {
		return nil, err
	}
	if sc.Replicas == 0 {
		sc.Replicas = 1
	}
	if sc.Tick == 0 {
		sc.Tick = 100 * time.Millisecond
	}
	if sc.Spread == nil {
		sc.Spread = Fixed{}
	}
	if sc.Backoff == 0 {
		sc.Backoff = sc.Phases[0].Service
	}
	s := &Sim{sc: sc, dep: newDependency(sc.Model, sc.Phases[0].Capacity), events: heapq.New(eventBefore, func(e *event) *int { return &e.index })}
	s.res = newResult(&s.sc)
	clock := Clock{s}
	for i := range sc.Replicas {
		l, err := newLimiter(clock, i)
		if err != nil {
			return nil, err
		}
		s.limiters = append(s.limiters, l)
		s.rngLoad = append(s.rngLoad, rand.New(rand.NewPCG(sc.Seed, uint64(2*i+1))))
		s.rngWork = append(s.rngWork, rand.New(rand.NewPCG(sc.Seed, uint64(2*i+2))))
	}
	s.clients = make([]int, sc.Replicas)
	s.want = make([]int, sc.Replicas)
	s.arrival = make([]*event, sc.Replicas)
	s.startPhase(0)
	s.schedule(0, evTick, nil)
	end := s.res.end
	for {
		at := s.dep.next()
		next := s.nextEvent()
		if next != nil && next.at < at {
			at = next.at
		}
		if at >= end {
			break
		}
		s.now = at
		if j := s.dep.done(at); j != nil {
			s.finish(j)
			continue
		}
		if next = s.nextEvent(); next == nil || next.at > at {
			continue // a completion computed for this time, not quite due: the next pass takes it
		}
		ev, fromHeap := s.popEvent(next)
		if !ev.cancelled {
			s.handle(ev)
		}
		if fromHeap {
			// Nothing refers to an event of the heap once it is due (an arrival, a timer, a
			// client, a tick or a phase forgets its event when it comes or is cancelled); the
			// queues' events belong to their calls.
			s.spare = append(s.spare, ev)
		}
	}
	s.now = end
	s.res.finish(s)
	return s.res, nil
}

func (sc *Scenario) check() error {
	if len(sc.Phases) == 0 {
		return errors.New("sim: a scenario needs at least one phase")
	}
	if sc.Replicas < 0 || sc.Timeout < 0 || sc.Tick < 0 || sc.Backoff < 0 || sc.Transit < 0 {
		return errors.New("sim: negative replicas, timeout, tick, backoff or transit")
	}
	if sc.Transit > 0 && sc.Timeout > 0 && sc.Timeout <= sc.Transit {
		return errors.New("sim: a timeout no longer than the transit fails every call")
	}
	for i, p := range sc.Phases {
		if p.Duration <= 0 || p.Capacity < 1 || p.Service <= 0 || p.ServiceTo < 0 || p.Rate < 0 || p.Clients < 0 || p.Think < 0 {
			return fmt.Errorf("sim: phase %d: want a positive duration, capacity and service, and no negative load", i+1)
		}
		if sc.Transit > 0 && p.ServiceTo != 0 {
			// The knee is Capacity * (Service + Transit) / Service: a drift would move it.
			return fmt.Errorf("sim: phase %d: a drift of the service time moves the knee of a scenario with a transit", i+1)
		}
	}
	return nil
}

func (s *Sim) schedule(at int64, kind eventKind, c *call) *event {
	var ev *event
	if n := len(s.spare); n > 0 {
		ev, s.spare = s.spare[n-1], s.spare[:n-1]
	} else {
		ev = &event{}
	}
	s.setEvent(ev, at, kind, c)
	s.events.Push(ev)
	return ev
}

// setEvent fills in ev, due at at: events due at the same time are taken in the order they
// were made.
func (s *Sim) setEvent(ev *event, at int64, kind eventKind, c *call) {
	s.seq++
	*ev = event{at: at, seq: s.seq, kind: kind, c: c, index: -1}
}

// nextEvent returns the event due first, of the heap's and the two queues', nil when none is.
func (s *Sim) nextEvent() *event {
	ev := s.events.Min()
	for _, q := range [...]*event{s.timeouts.min(), s.answers.min()} {
		if q != nil && (ev == nil || eventBefore(q, ev)) {
			ev = q
		}
	}
	return ev
}

// popEvent takes ev, which nextEvent returned, from where it waits, and reports whether that
// was the heap.
func (s *Sim) popEvent(ev *event) (*event, bool) {
	switch {
	case ev == s.timeouts.min():
		s.timeouts.pop()
	case ev == s.answers.min():
		s.answers.pop()
	default:
		s.events.Pop()
		return ev, true
	}
	return ev, false
}

func (s *Sim) handle(ev *event) {
	switch ev.kind {
	case evArrival:
		s.arrival[ev.replica] = nil
		s.arrive(ev.replica, false)
		s.nextArrival(ev.replica)
	case evClient:
		r := ev.replica
		if s.clients[r] > s.want[r] {
			s.clients[r]-- // the phase asks for fewer clients: this one leaves
			return
		}
		s.arrive(r, true)
	case evTimeout:
		c := ev.c
		c.done = true
		c.permit.Drop()
		s.cur.record(c.replica, outcomeTimeout, s.now-c.start)
		if !s.sc.KeepWork {
			s.dep.cancel(s.now, &c.job)
		}
		if c.closed {
			s.think(c.replica)
		}
	case evPhase:
		s.startPhase(s.phase + 1)
	case evTick:
		s.res.tick(s)
		s.schedule(s.now+int64(s.sc.Tick), evTick, nil)
	case evTimer:
		ev.timer.fire()
	case evAnswer:
		s.transit--
		s.answer(ev.c)
	}
}

// arrive offers one call to replica r.
func (s *Sim) arrive(r int, closed bool) {
	ph := s.sc.Phases[s.phase]
	// Drawn for every arrival, admitted or not, so that every limiter sees the same calls.
	mean := ph.service(s.now - s.phaseAt)
	work := s.sc.Spread.Sample(s.rngWork[r]) * mean
	s.res.arrived(s.cur, mean, work)
	p, ok := s.limiters[r].Acquire()
	if !ok {
		s.cur.record(r, outcomeRejected, 0)
		if closed {
			s.schedule(s.now+int64(s.sc.Backoff), evClient, nil).replica = r
		}
		return
	}
	c := &call{replica: r, start: s.now, permit: p, closed: closed}
	c.job = job{c: c, work: max(1, work), index: -1}
	s.dep.add(s.now, &c.job)
	if s.sc.Timeout > 0 {
		s.setEvent(&c.timeout, s.now+int64(s.sc.Timeout), evTimeout, c)
		s.timeouts.push(&c.timeout)
	}
}

// finish takes a call that the dependency completed: its answer reaches the caller now, or
// after the scenario's transit.
func (s *Sim) finish(j *job) {
	c := j.c
	if c == nil || c.done {
		return // its caller timed out and left; the dependency kept working on it
	}
	if s.sc.Transit > 0 {
		s.transit++
		s.setEvent(&c.answer, s.now+int64(s.sc.Transit), evAnswer, c)
		s.answers.push(&c.answer)
		return
	}
	s.answer(c)
}

// answer ends a call whose answer reached its caller, unless its timeout came first.
func (s *Sim) answer(c *call) {
	if c.done {
		return
	}
	c.done = true
	c.timeout.cancelled = true // when there is none, it changes nothing
	c.permit.Success()
	s.cur.record(c.replica, outcomeSuccess, s.now-c.start)
	if c.closed {
		s.think(c.replica)
	}
}

func (s *Sim) think(r int) {
	ph := s.sc.Phases[s.phase]
	d := int64(s.rngLoad[r].ExpFloat64() * float64(ph.Think))
	s.res.thought(s.cur, d)
	s.schedule(s.now+d, evClient, nil).replica = r
}

func (s *Sim) nextArrival(r int) {
	rate := s.sc.Phases[s.phase].Rate / float64(s.sc.Replicas)
	if rate <= 0 {
		return
	}
	d := s.rngLoad[r].ExpFloat64() / rate * float64(time.Second)
	ev := s.schedule(s.now+int64(math.Ceil(d)), evArrival, nil)
	ev.replica = r
	s.arrival[r] = ev
}

func (s *Sim) startPhase(i int) {
	s.phase = i
	s.phaseAt = s.now
	ph := s.sc.Phases[i]
	s.cur = &s.res.Phases[i]
	s.dep.setCapacity(s.now, ph.Capacity)
	for r := range s.sc.Replicas {
		// Arrivals are memoryless: the next one is drawn again at the new rate.
		if s.arrival[r] != nil {
			s.arrival[r].cancelled = true
			s.arrival[r] = nil
		}
		s.nextArrival(r)
		s.want[r] = ph.Clients / s.sc.Replicas
		if r < ph.Clients%s.sc.Replicas {
			s.want[r]++
		}
		for s.clients[r] < s.want[r] {
			s.clients[r]++
			s.think(r)
		}
	}
	if i+1 < len(s.sc.Phases) {
		s.schedule(s.now+int64(ph.Duration), evPhase, nil)
	}
}

// eventBefore orders events by time, then by scheduling.
func eventBefore(a, b *event) bool { return a.at < b.at || a.at == b.at && a.seq < b.seq }
