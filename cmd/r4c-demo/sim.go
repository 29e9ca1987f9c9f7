package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// Limits of the pattern syntax: enough for any demonstration, small enough that a run stays fast
// and that the limits (MaxLimit 200) have room above the capacity.
const (
	maxCapacity = 100
	maxDuration = time.Hour
)

// Phase is a stretch of time during which the dependency serves Capacity calls at once.
type Phase struct {
	Capacity int
	Duration time.Duration // a whole number of seconds
}

// Pattern is the dependency's capacity over time: its phases in order, the last one repeated for
// as long as the run lasts.
type Pattern []Phase

// DefaultPattern is 40 concurrent calls for a minute, then 10, then 60.
const DefaultPattern = "40:60s,10:60s,60:60s"

// ParsePattern parses capacity:duration pairs separated by commas, such as "40:60s,10:1m,60:90".
// A capacity is a whole number from 1 to 100; a duration is a Go duration or a bare number of
// seconds, positive, in whole seconds.
func ParsePattern(s string) (Pattern, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("empty pattern: want capacity:duration pairs such as " + DefaultPattern)
	}
	var p Pattern
	var total time.Duration
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		c, d, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("phase %d %q: want capacity:duration, such as 40:60s", i+1, part)
		}
		capacity, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || capacity < 1 || capacity > maxCapacity {
			return nil, fmt.Errorf("phase %d %q: capacity %q is not a whole number from 1 to %d", i+1, part, c, maxCapacity)
		}
		dur, err := ParseSeconds(d)
		if err != nil {
			return nil, fmt.Errorf("phase %d %q: %v", i+1, part, err)
		}
		if total += dur; total > maxDuration {
			return nil, fmt.Errorf("pattern longer than %v", maxDuration)
		}
		p = append(p, Phase{Capacity: capacity, Duration: dur})
	}
	return p, nil
}

// ParseSeconds parses a positive duration of whole seconds, at most an hour: a Go duration
// ("90s", "1m30s") or a bare number of seconds ("90").
func ParseSeconds(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil {
		n, nerr := strconv.Atoi(s)
		if nerr != nil {
			return 0, fmt.Errorf("duration %q: want a duration such as 60s or 1m, or a number of seconds", s)
		}
		if n > int(maxDuration/time.Second) {
			return 0, fmt.Errorf("duration %q: must be at most %v", s, maxDuration)
		}
		d = time.Duration(n) * time.Second
	}
	switch {
	case d <= 0:
		return 0, fmt.Errorf("duration %q: must be positive", s)
	case d > maxDuration:
		return 0, fmt.Errorf("duration %q: must be at most %v", s, maxDuration)
	case d%time.Second != 0:
		return 0, fmt.Errorf("duration %q: must be a whole number of seconds", s)
	}
	return d, nil
}

// Duration returns the total length of the pattern.
func (p Pattern) Duration() time.Duration {
	var d time.Duration
	for _, ph := range p {
		d += ph.Duration
	}
	return d
}

// String formats the pattern as ParsePattern reads it.
func (p Pattern) String() string {
	parts := make([]string, len(p))
	for i, ph := range p {
		parts[i] = fmt.Sprintf("%d:%ds", ph.Capacity, ph.Duration/time.Second)
	}
	return strings.Join(parts, ",")
}

// Span is one phase of a run, in whole seconds: [Start, End).
type Span struct {
	Capacity   int
	Start, End int
}

// Spans lays the pattern over a run of the given number of seconds: phases past the end are cut,
// and the last phase is stretched when the run is longer than the pattern.
func (p Pattern) Spans(seconds int) []Span {
	var spans []Span
	start := 0
	for i, ph := range p {
		if start >= seconds {
			break
		}
		end := min(start+int(ph.Duration/time.Second), seconds)
		if i == len(p)-1 {
			end = seconds
		}
		spans = append(spans, Span{Capacity: ph.Capacity, Start: start, End: end})
		start = end
	}
	return spans
}

// Config describes one simulation run: a single adaptive limit in front of its own copy of the
// dependency (RunAll runs several side by side on one clock).
type Config struct {
	Pattern  Pattern
	Seconds  int    // length of the run
	Seed     uint64 // seeds the latency jitter
	Limit    r4c.AdaptiveLimitConfig
	Base     time.Duration // the dependency's latency when it is not over capacity
	Jitter   float64       // each latency is multiplied by a uniform factor in [1-Jitter, 1+Jitter]
	Timeout  time.Duration // calls longer than this end at it with ErrCallTimeout; 0: never
	Overload float64       // offered load as a multiple of the highest capacity's throughput
}

// Demo settings, tuned so that every algorithm visibly follows the capacity (see the package doc).
const (
	demoBase     = 50 * time.Millisecond
	demoJitter   = 0.1
	demoTimeout  = 150 * time.Millisecond // every algorithm: 3x the base latency, as in the quality bench
	demoOverload = 1.5
)

// DemoLimit returns the adaptive limit configuration the demo uses for alg: a limit from 20 up to
// 200 (the defaults, spelled out), with windows that suit the algorithm (see the package doc).
func DemoLimit(alg r4c.LimitAlgorithm) r4c.AdaptiveLimitConfig {
	c := r4c.AdaptiveLimitConfig{Algorithm: alg, InitialLimit: 20, MaxLimit: 200}
	switch alg {
	case r4c.Gradient2, r4c.AIMD:
		// Ten windows a second, so that a phase is hundreds of windows, and (Gradient2) a
		// long-term average over ten minutes, as with the default 600 windows of 1s.
		c.Window = 100 * time.Millisecond
		c.LongWindow = 6000
	default:
		// Knee, Vegas and any later algorithm: the library's defaults (windows of 1s). Knee
		// is designed for them; Vegas is shown as configured out of the box.
	}
	return c
}

// DemoConfig returns the demo's configuration of a run of alg over pattern. Every algorithm has
// the same timeout inside the limit, as the library recommends (AIMD reacts to nothing else;
// Vegas and Knee cut the limit on drops too, and Gradient2's drop guard backs it off on them),
// so that the algorithms are compared on the same calls.
func DemoConfig(alg r4c.LimitAlgorithm, pattern Pattern, seconds int, seed uint64) Config {
	return Config{
		Pattern: pattern, Seconds: seconds, Seed: seed, Limit: DemoLimit(alg),
		Base: demoBase, Jitter: demoJitter, Overload: demoOverload, Timeout: demoTimeout,
	}
}

// Second is what happened during one simulated second of a run.
type Second struct {
	Time     int // seconds since the start, at the end of this second
	Capacity int // the dependency's capacity during this second
	// Limit and InFlight are read from the adaptive limit at the end of the second.
	Limit, InFlight int
	// AvgLatency is the mean latency of the calls that finished during the second, timeouts
	// included (they count as the timeout); 0 when none finished.
	AvgLatency time.Duration
	Succeeded  int // calls that finished without error
	TimedOut   int // calls that ended at the timeout
	Rejected   int // calls the limit rejected
}

// Result is one run.
type Result struct {
	Config   Config
	Resolved r4c.AdaptiveLimitConfig // the limit's configuration with the library's defaults filled in
	Seconds  []Second
	Final    r4c.AdaptiveLimitSnapshot // the limit's state at the end
	Offered  int                       // calls offered, per second
	Admitted int                       // calls admitted over the run
}

// Run simulates cfg. It is deterministic: the same Config gives the same Result.
func Run(cfg Config) (*Result, error) {
	rs, err := RunAll([]Config{cfg}, RunOptions{})
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// RunOptions are how RunAll runs: on its own clock and registry by default.
type RunOptions struct {
	// Clock and Registry, if set, are the manual clock and the registry (on that clock) the runs
	// use: the -serve dashboard shows that registry while the runs go on.
	Clock    *r4ctest.ManualClock
	Registry *r4c.Registry
	// Pace, if set, is called with the simulated time before each arrival: -serve sleeps in it so
	// that the simulation keeps to the wall clock.
	Pace func(simulated time.Duration)
}

// RunAll simulates cfgs side by side, in one loop on one manual clock and one registry: each
// config has its own limit (instance id: its algorithm's name) in front of its own copy of the
// dependency, and the runs share nothing else, so each one's result is what Run gives it alone.
// The configs must offer the same load (the same pattern, base latency and overload), since
// their calls arrive together. It is deterministic.
func RunAll(cfgs []Config, o RunOptions) ([]*Result, error) {
	if len(cfgs) == 0 {
		return nil, errors.New("simulation: no run")
	}
	clock, reg := o.Clock, o.Registry
	if clock == nil {
		clock = r4ctest.NewManualClock()
	}
	if reg == nil {
		var err error
		if reg, err = r4c.NewRegistry(r4c.WithClock(clock)); err != nil {
			return nil, err
		}
	}
	sims := make([]*sim, len(cfgs))
	results := make([]*Result, len(cfgs))
	for i, cfg := range cfgs {
		if len(cfg.Pattern) == 0 || cfg.Seconds < 1 || cfg.Base <= 0 || cfg.Overload <= 0 {
			return nil, errors.New("simulation: the pattern and run must not be empty, the base latency and overload must be positive")
		}
		maxCap := 0
		for _, ph := range cfg.Pattern {
			maxCap = max(maxCap, ph.Capacity)
		}
		// The offered load: Overload times the most the dependency can ever serve, spread evenly.
		offered := int(math.Ceil(cfg.Overload * float64(maxCap) * float64(time.Second) / float64(cfg.Base)))
		s := &sim{
			cfg:      cfg,
			clock:    clock,
			rng:      rand.New(rand.NewPCG(cfg.Seed, 0x7234c)),
			interval: int64(time.Second) / int64(offered),
		}
		if i > 0 && (s.interval != sims[0].interval || cfg.Seconds != cfgs[0].Seconds) {
			return nil, errors.New("simulation: runs side by side must offer the same load for as long")
		}
		if cfg.Timeout > 0 {
			s.errTimeout = fmt.Errorf("dependency: %w after %v", r4c.ErrCallTimeout, cfg.Timeout)
		}
		id := cfg.Limit.Algorithm.String()
		if id == "" {
			id = "dependency"
		}
		var err error
		if s.p, err = r4c.NewPipeline[string](reg, id, cfg.Limit); err != nil {
			return nil, err
		}
		if s.h, err = reg.AdaptiveLimit(id); err != nil {
			return nil, err
		}
		s.callFn = s.call
		s.res = &Result{Config: cfg, Offered: offered, Seconds: make([]Second, 0, cfg.Seconds)}
		sims[i], results[i] = s, s.res
	}
	if err := runTogether(sims, o.Pace); err != nil {
		return nil, err
	}
	for _, s := range sims {
		s.res.Final, s.res.Resolved = s.h.Snapshot(), s.h.Config()
		s.res.Admitted = s.admitted
	}
	return results, nil
}

// sim is the state of one run. Everything happens in one goroutine: the loop advances the
// manual clock from one event (an arrival or a completion, of any run) to the next.
type sim struct {
	cfg        Config
	clock      *r4ctest.ManualClock
	rng        *rand.Rand
	interval   int64 // nanoseconds between arrivals
	errTimeout error
	p          *r4c.Pipeline[string]
	h          *r4c.AdaptiveLimitHandle
	callFn     func(context.Context) *r4c.Future[string] // s.call, one method value for the run
	res        *Result

	capacity int    // the dependency's capacity now
	inFlight int    // calls the dependency is serving
	pending  events // completions to come, by time
	seq      uint64

	cur      Second // the second being simulated
	latSum   time.Duration
	latCount int
	admitted int
}

// event is the completion of a call admitted by the limit.
type event struct {
	at       int64 // clock reading at which the call ends
	seq      uint64
	lat      time.Duration
	timedOut bool
	f        *r4c.Future[string]
}

func (s *sim) now() int64 { return s.clock.Nanotime() }

func (s *sim) advanceTo(t int64) {
	if d := t - s.now(); d > 0 {
		s.clock.Advance(time.Duration(d))
	}
}

// runTogether runs the sims second by second. Within a second, the completions of every run are
// taken in time order, and each arrival goes to every run at once (they offer the same load).
func runTogether(sims []*sim, pace func(time.Duration)) error {
	ctx := context.Background()
	first := sims[0]
	spans := first.cfg.Pattern.Spans(first.cfg.Seconds)
	next := int64(0) // the next arrival
	for sec := 0; sec < first.cfg.Seconds; sec++ {
		for _, s := range sims {
			for _, sp := range spans {
				if sec >= sp.Start && sec < sp.End {
					s.capacity = sp.Capacity
				}
			}
			s.cur = Second{Time: sec + 1, Capacity: s.capacity}
		}
		end := int64(sec+1) * int64(time.Second)
		for {
			// The earliest completion of any run, if it comes before the next arrival.
			var soonest *sim
			for _, s := range sims {
				if len(s.pending) > 0 && (soonest == nil || s.pending.less0(soonest.pending)) {
					soonest = s
				}
			}
			if soonest != nil && soonest.pending[0].at <= next && soonest.pending[0].at < end {
				soonest.complete(soonest.pending.pop())
				continue
			}
			if next >= end {
				break
			}
			first.advanceTo(next)
			if pace != nil {
				pace(time.Duration(next))
			}
			next += first.interval
			for _, s := range sims {
				if err := s.arrive(ctx); err != nil {
					return err
				}
			}
		}
		first.advanceTo(end)
		for _, s := range sims {
			s.cur.Limit, s.cur.InFlight = s.h.Limit(), s.h.InFlight()
			if s.latCount > 0 {
				s.cur.AvgLatency = s.latSum / time.Duration(s.latCount)
			}
			s.latSum, s.latCount = 0, 0
			s.res.Seconds = append(s.res.Seconds, s.cur)
		}
	}
	return nil
}

// arrive offers one call to the run's limit.
func (s *sim) arrive(ctx context.Context) error {
	f := s.p.ExecuteAsync(ctx, s.callFn)
	select {
	case <-f.Done(): // done at once: the limit rejected the call
		if _, err := f.Get(ctx); !errors.Is(err, r4c.ErrLimitExceeded) {
			return fmt.Errorf("simulation: unexpected immediate result: %v", err)
		}
		s.cur.Rejected++
	default:
		s.admitted++
	}
	return nil
}

// call is the dependency: it starts serving a call and returns the future that the loop
// completes when the call's time is up.
//
// Its latency is fixed when it starts: Base while the dependency serves at most its capacity,
// Base*n/capacity when it serves n > capacity calls (they queue: each gets a 1/n share of
// capacity workers), times a jitter factor. A call that would take longer than Timeout ends at
// the timeout instead.
func (s *sim) call(context.Context) *r4c.Future[string] {
	s.inFlight++
	load := max(1, float64(s.inFlight)/float64(s.capacity))
	jitter := 1 + s.cfg.Jitter*(2*s.rng.Float64()-1)
	lat := time.Duration(float64(s.cfg.Base) * load * jitter)
	ev := event{lat: lat, f: r4c.NewFuture[string]()}
	if s.cfg.Timeout > 0 && lat > s.cfg.Timeout {
		// The simulated dependency enforces the timeout itself, so that every call's end stays
		// in the simulation's own event queue: a call that would take longer ends at the
		// timeout, failing with an error that wraps r4c.ErrCallTimeout (in DropOn by default),
		// as a TimeoutConfig in the pipeline would on the registry's clock.
		ev.lat, ev.timedOut = s.cfg.Timeout, true
	}
	s.seq++
	ev.at, ev.seq = s.now()+int64(ev.lat), s.seq
	s.pending.push(ev)
	return ev.f
}

// complete ends a call at its time: the pipeline's callbacks release the slot and record the
// sample (or the drop) synchronously, inside Complete.
func (s *sim) complete(ev event) {
	s.advanceTo(ev.at)
	s.inFlight--
	s.latSum += ev.lat
	s.latCount++
	if ev.timedOut {
		s.cur.TimedOut++
		ev.f.Complete("", s.errTimeout)
		return
	}
	s.cur.Succeeded++
	ev.f.Complete("ok", nil)
}

// events is a min-heap of completions ordered by time, then by start.
type events []event

// less0 reports whether h's first completion comes before o's (both non-empty).
func (h events) less0(o events) bool { return h[0].at < o[0].at }

func (h events) less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}

func (h *events) push(e event) {
	*h = append(*h, e)
	q := *h
	for i := len(q) - 1; i > 0; {
		parent := (i - 1) / 2
		if !q.less(i, parent) {
			break
		}
		q[i], q[parent] = q[parent], q[i]
		i = parent
	}
}

func (h *events) pop() event {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q[last] = event{}
	q = q[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(q) && q.less(l, m) {
			m = l
		}
		if r < len(q) && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}

// PhaseStats summarises a run over one span of its pattern.
type PhaseStats struct {
	Span
	MeanLimit    float64 // mean of the per-second limits over the span
	SettledLimit float64 // the same over the span's second half
	Throughput   float64 // successful calls per second
	RejectedRate float64 // rejections per second
	TimedOutRate float64 // timeouts per second
	MeanLatency  time.Duration
}

// Phases summarises res per span of its pattern.
func (res *Result) Phases() []PhaseStats {
	var out []PhaseStats
	for _, sp := range res.Config.Pattern.Spans(len(res.Seconds)) {
		st := PhaseStats{Span: sp}
		mid := sp.Start + (sp.End-sp.Start)/2
		var lat time.Duration
		var latN int
		for i := sp.Start; i < sp.End; i++ {
			s := res.Seconds[i]
			st.MeanLimit += float64(s.Limit)
			if i >= mid {
				st.SettledLimit += float64(s.Limit)
			}
			st.Throughput += float64(s.Succeeded)
			st.RejectedRate += float64(s.Rejected)
			st.TimedOutRate += float64(s.TimedOut)
			if n := s.Succeeded + s.TimedOut; n > 0 {
				lat += s.AvgLatency * time.Duration(n)
				latN += n
			}
		}
		n := float64(sp.End - sp.Start)
		st.MeanLimit /= n
		st.SettledLimit /= float64(sp.End - mid)
		st.Throughput /= n
		st.RejectedRate /= n
		st.TimedOutRate /= n
		if latN > 0 {
			st.MeanLatency = lat / time.Duration(latN)
		}
		out = append(out, st)
	}
	return out
}
