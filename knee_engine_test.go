package r4c_test

import (
	"container/heap"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// Knee through the real engine: permits on a manual clock, driven by a small deterministic
// event loop in the test (no goroutine, no sleep, no real time). Calls arrive at a fixed rate;
// each admitted call takes s*max(1, n/c), n being the calls in flight once it is admitted (the
// dependency shares itself among them above its knee c: processor sharing, approximated at
// admission); the loop ends calls in order of their end time, advancing the clock to each.

// kneeSim is the event loop: one arrival every gap, calls in flight in a heap by end time.
type kneeSim struct {
	t     *testing.T
	clock *r4ctest.ManualClock
	h     *r4c.AdaptiveLimitHandle
	gap   time.Duration // between arrivals
	s     time.Duration // the no-load latency
	c     float64       // the knee
	// timeout, if not 0, ends a call that would last longer when it elapses, as a drop.
	timeout time.Duration
	drops   int // calls that timed out so far

	now         time.Duration // the clock's time since its epoch (the loop's own copy)
	nextArrival time.Duration
	calls       kneeCalls
	seq         uint64
}

type kneeCall struct {
	end    time.Duration
	seq    uint64 // ties end in order of admission
	permit r4c.AdaptiveLimitPermit
	drop   bool // the call times out at end
}

type kneeCalls []kneeCall

func (q kneeCalls) Len() int { return len(q) }
func (q kneeCalls) Less(i, j int) bool {
	return q[i].end < q[j].end || q[i].end == q[j].end && q[i].seq < q[j].seq
}
func (q kneeCalls) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *kneeCalls) Push(x any)   { *q = append(*q, x.(kneeCall)) }
func (q *kneeCalls) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

func newKneeSim(t *testing.T, gap, s time.Duration, c float64) *kneeSim {
	t.Helper()
	return newKneeSimWith(t, r4c.AdaptiveLimitConfig{Algorithm: r4c.Knee, InitialLimit: 20, MaxLimit: 200}, gap, s, c)
}

// newKneeSimWith is newKneeSim with the limit's configuration given.
func newKneeSimWith(t *testing.T, cfg r4c.AdaptiveLimitConfig, gap, s time.Duration, c float64) *kneeSim {
	t.Helper()
	clock := r4ctest.NewManualClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r4c.NewPipeline[struct{}](reg, "dep", cfg); err != nil {
		t.Fatal(err)
	}
	h, err := reg.AdaptiveLimit("dep")
	if err != nil {
		t.Fatal(err)
	}
	return &kneeSim{t: t, clock: clock, h: h, gap: gap, s: s, c: c}
}

// advanceTo moves the clock to at.
func (m *kneeSim) advanceTo(at time.Duration) {
	if at > m.now {
		m.clock.Advance(at - m.now)
		m.now = at
	}
}

// run processes every event up to until: arrivals, admitted or rejected at once, and ends of
// calls, in time order (an end before an arrival at the same instant).
func (m *kneeSim) run(until time.Duration) {
	for {
		if len(m.calls) > 0 && m.calls[0].end <= m.nextArrival && m.calls[0].end <= until {
			c := heap.Pop(&m.calls).(kneeCall)
			m.advanceTo(c.end)
			if c.drop {
				m.drops++
				c.permit.Drop()
			} else {
				c.permit.Success()
			}
			continue
		}
		if m.nextArrival > until {
			m.advanceTo(until)
			return
		}
		m.advanceTo(m.nextArrival)
		m.nextArrival += m.gap
		p, err := m.h.Acquire()
		if err != nil {
			continue // rejected: the caller moves on
		}
		n := float64(m.h.InFlight())
		lat := time.Duration(float64(m.s) * max(1, n/m.c))
		drop := m.timeout > 0 && lat > m.timeout
		if drop {
			lat = m.timeout
		}
		m.seq++
		heap.Push(&m.calls, kneeCall{end: m.now + lat, seq: m.seq, permit: p, drop: drop})
	}
}

// limits runs the loop for seconds seconds and returns the limit at the end of each second.
func (m *kneeSim) limits(seconds int) []int {
	out := make([]int, 0, seconds)
	for range seconds {
		m.run(m.now + time.Second)
		out = append(out, m.h.Limit())
	}
	return out
}

func TestKneeEngineFindsTheKneeAndFollowsItDown(t *testing.T) {
	// One call every millisecond, 60ms each without load: a demand of 60 calls in flight, 1.5
	// times a knee of 40.
	m := newKneeSim(t, time.Millisecond, 60*time.Millisecond, 40)
	first := m.limits(60)
	if s := m.h.Snapshot(); s.Windows < 50 || s.Rejected == 0 {
		t.Fatalf("after 60s: %d windows, %d rejected: the limit did not bind", s.Windows, s.Rejected)
	}
	if l := first[len(first)-1]; l < 36 || l > 60 {
		t.Fatalf("limit %d after 60s against a knee of 40, want [36, 60]; limits each second %v", l, first)
	}
	// It stays there: over the last 30s, within [36, 60] but for a drain now and then, never
	// above.
	out := 0
	for _, l := range first[30:] {
		if l > 60 {
			t.Fatalf("limit %d above 1.5 times the knee in the last 30s; limits each second %v", l, first)
		}
		if l < 36 {
			out++
		}
	}
	if out > 6 {
		t.Fatalf("limit below 0.9 times the knee in %d of the last 30s; limits each second %v", out, first)
	}

	// The knee falls to 10: 6 times the demand the dependency serves without queueing.
	m.c = 10
	fallsBelow(t, m.limits(30), 15, 15, "the knee fell from 40 to 10", "seconds")
}

// At a knee of 10 the limit is a few whole calls: a drain of 15% from 11 runs at 9, 18% below
// it. Read against the limits it ran at, such a drain crosses the knee (latency falls by the
// one call of queue), restores the limit and, agreeing with base, spaces out the drains that
// follow; read against 15%, each drain looked like a queue and left the limit below the knee
// for a second or two (in 6 of the last 60 seconds here).
func TestKneeEngineSmallKneeDrainsAcrossIt(t *testing.T) {
	// One call every half millisecond, 50ms each without load: 10 times a knee of 10.
	m := newKneeSim(t, 500*time.Microsecond, 50*time.Millisecond, 10)
	m.limits(60)
	last := m.limits(60)
	below := 0
	for _, l := range last {
		if l < 10 {
			below++
		}
		if l > 15 {
			t.Fatalf("limit %d above 1.5 times a knee of 10; limits each second %v", l, last)
		}
	}
	if below > 2 {
		t.Errorf("limit below a knee of 10 in %d of the last 60 seconds, want 2 at most; limits each second %v", below, last)
	}
}

// After the knee rises far above the limit, Knee climbs on windows shorter than the configured
// one of 1s: each window that follows a growth of 25% or more holds ten latencies and a quarter
// more (here about 0.7s), and the limit reaches the new knee sooner. The climb starts in the
// first window after the rise: its queue vanished under the limit that queued (see
// queueVanished), so that window doubles the limit (2.5s to reach 54 here; 5.1s when the climb
// waited for a row of clear windows).
func TestKneeEngineClimbsOnShortWindows(t *testing.T) {
	// One call every half millisecond, 50ms each without load: a demand of 100 calls in
	// flight, 10 times a knee of 10.
	m := newKneeSim(t, 500*time.Microsecond, 50*time.Millisecond, 10)
	m.limits(60)
	m.c = 60
	var ends []time.Duration // when each window ended, to 10ms
	var limits []int         // the limit each window set
	reached := time.Duration(0)
	for windows := m.h.Snapshot().Windows; m.now < 75*time.Second; {
		m.run(m.now + 10*time.Millisecond)
		if w := m.h.Snapshot().Windows; w != windows {
			windows = w
			ends, limits = append(ends, m.now), append(limits, m.h.Limit())
		}
		if reached == 0 && m.h.Limit() >= 54 {
			reached = m.now - 60*time.Second
		}
	}
	short := 0
	for i := 1; i+1 < len(ends); i++ {
		if d := ends[i+1] - ends[i]; limits[i]*4 >= limits[i-1]*5 && d < 800*time.Millisecond {
			short++
		} else if d < 990*time.Millisecond && !onDrainGrid(ends[i+1], 10*time.Millisecond) && (i+2 >= len(ends) || !onDrainGrid(ends[i+2], 10*time.Millisecond)) {
			// A window short of a boundary of the drain grid by less than a window and a
			// quarter is split in two, so that the drain starts on it: not a growth's.
			t.Errorf("window %d lasted %v after the limit went from %d to %d: only a growth of 25%% or more shortens the next", i+1, d, limits[i-1], limits[i])
		}
	}
	if short < 3 {
		t.Errorf("the knee rose from 10 to 60: %d windows after a fast growth were short, want 3 or more; window ends %v, limits %v", short, ends, limits)
	}
	if reached == 0 || reached > 3500*time.Millisecond {
		t.Errorf("the knee rose from 10 to 60: the limit reached 54 after %v (0: not within 15s), want 3.5s at most", reached)
	}
}

// From a cold start at the initial limit of 20, under a demand far above a knee of 150 on
// calls of 2ms, the startup's doubling runs on short windows from the first growth: each holds
// the calls that measure it, a small share of the configured 1s. Before the spread of latency
// was measured such windows were whole ones, and the limit took 3s to reach the knee, rejecting
// most calls the dependency could serve.
func TestKneeEngineColdStartClimbsOnShortWindows(t *testing.T) {
	// One call every 10µs, 2ms each without load: a demand of 200 calls in flight, 1.3 times
	// a knee of 150.
	m := newKneeSim(t, 10*time.Microsecond, 2*time.Millisecond, 150)
	reached := time.Duration(0)
	for m.now < 5*time.Second {
		m.run(m.now + 10*time.Millisecond)
		if reached == 0 && m.h.Limit() >= 135 {
			reached = m.now
		}
	}
	if reached == 0 || reached > 1200*time.Millisecond {
		t.Errorf("cold start under a knee of 150: the limit reached 135 after %v (0: not within 5s), want 1.2s at most", reached)
	}
	t.Logf("the limit reached 135 after %v", reached)
}

// onDrainGrid reports whether t is within the given span after a boundary of the drain grid
// (every 10 windows of 1s).
func onDrainGrid(t, within time.Duration) bool { return t%(10*time.Second) <= within }

// Through the engine, whose windows end on the first call after their deadline and so drift
// against the wall clock, every drain window starts at a boundary of the drain grid (every 10
// windows of the wall clock): the window before it is cut short to end there. Replicas of a
// service, whose windows drift each their own way, then drain over the same second.
func TestKneeEngineDrainsStartAtTheGridsBoundary(t *testing.T) {
	// One call every 1.2ms, 60ms each without load: a demand of 50 calls in flight,
	// above a knee of 40 by more than the queue the tolerance of losses allows (see
	// kneeLimit.lossTolerance), so the limit binds and drains; windows end on calls, off the
	// grid.
	m := newKneeSim(t, 1200*time.Microsecond, 60*time.Millisecond, 40)
	var starts []time.Duration // when each window started
	var limits []int           // the limit during each window
	windows := m.h.Snapshot().Windows
	starts, limits = append(starts, 0), append(limits, m.h.Limit())
	for m.now < 90*time.Second {
		m.run(m.now + time.Millisecond)
		if w := m.h.Snapshot().Windows; w != windows {
			windows = w
			starts, limits = append(starts, m.now), append(limits, m.h.Limit())
		}
	}
	drains, short := 0, 0
	for i := 1; i+1 < len(limits); i++ {
		if d := starts[i+1] - starts[i]; d < 990*time.Millisecond {
			short++
		}
		// A drain: the limit lowered by 10% or more for one window, then restored.
		if limits[i]*10 > limits[i-1]*9 || limits[i+1] < limits[i-1] || starts[i] < 20*time.Second {
			continue
		}
		drains++
		if off := starts[i] % (10 * time.Second); off > 5*time.Millisecond {
			t.Errorf("a drain from %d to %d began %v past a boundary of the grid, want within 5ms (window starts %v)", limits[i-1], limits[i], off, starts[i])
		}
	}
	if drains < 3 || short < drains {
		t.Fatalf("%d drains after 20s over %d windows (%d cut short): want 3 or more, each after a window cut short; limits %v", drains, len(limits), short, limits)
	}
}

// A cold start under 2x overload, behind a timeout of three service times: the initial limit
// (20) is 2.5 times the knee (8), so the first windows queue at 2.5 times the no-load latency,
// which Knee cannot tell from it, and the startup doubles the limit into timeouts. The window
// after that growth ends as soon as its drops show the overload (see kneeLimit.endsEarly),
// not after a whole window of calls that time out.
func TestKneeEngineEndsAWindowOfTimeoutsAfterAGrowthEarly(t *testing.T) {
	// One call every 3.125ms, 50ms each without load: a demand of 16 calls in flight.
	m := newKneeSim(t, 3125*time.Microsecond, 50*time.Millisecond, 8)
	m.timeout = 150 * time.Millisecond
	var starts []time.Duration // when each window started
	var drops []int            // the calls timed out by then
	windows := m.h.Snapshot().Windows
	for m.now < 10*time.Second {
		m.run(m.now + time.Millisecond)
		if w := m.h.Snapshot().Windows; w != windows {
			windows = w
			starts, drops = append(starts, m.now), append(drops, m.drops)
		}
	}
	if m.drops == 0 {
		t.Fatal("no call timed out: the scenario does not test what it says")
	}
	// The windows that timed out calls, and how long each lasted.
	early := 0
	for i := 1; i < len(starts); i++ {
		if d := drops[i] - drops[i-1]; d > 0 && starts[i]-starts[i-1] < 500*time.Millisecond {
			early++
		}
	}
	if early == 0 || m.drops > 120 {
		t.Fatalf("%d calls timed out over 10s, %d windows of timeouts ended early: want 120 at most (a whole window of them times out about 250), and one or more (window starts %v, drops by then %v)", m.drops, early, starts, drops)
	}
}

// A window that an algorithm asks to end at a drop ends there only once it holds
// MinWindowSamples. Asked before, the engine would find too few samples and extend the window
// by a whole Window from that drop, past the end it had.
func TestEngineEndsAWindowEarlyOnlyWithItsMinimumSamples(t *testing.T) {
	clock := r4ctest.NewManualClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	cfg := r4c.AdaptiveLimitConfig{Algorithm: r4c.Knee, InitialLimit: 200, MaxLimit: 200, MinWindowSamples: 100}
	if _, err := r4c.NewPipeline[struct{}](reg, "dep", cfg); err != nil {
		t.Fatal(err)
	}
	h, err := reg.AdaptiveLimit("dep")
	if err != nil {
		t.Fatal(err)
	}
	r4c.EndWindowsAtEveryDrop(h)
	calls := func(n int, after time.Duration, end func(r4c.AdaptiveLimitPermit)) {
		permits := make([]r4c.AdaptiveLimitPermit, n)
		for i := range permits {
			if permits[i], err = h.Acquire(); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(after)
		for _, p := range permits {
			end(p)
		}
	}
	calls(30, 100*time.Millisecond, r4c.AdaptiveLimitPermit.Drop)
	calls(100, 800*time.Millisecond, r4c.AdaptiveLimitPermit.Success)
	if w := h.Snapshot().Windows; w != 0 {
		t.Fatalf("%d windows ended within the Window (1s), want none: 30 drops, fewer than MinWindowSamples (100), cannot end it", w)
	}
	// The first call to end past the Window, with enough samples: the window ends.
	calls(1, 150*time.Millisecond, r4c.AdaptiveLimitPermit.Success)
	if w := h.Snapshot().Windows; w != 1 {
		t.Fatalf("%d windows ended 1.05s after the start with 131 samples, want 1 (the Window is 1s)", w)
	}
}

// A capacity that falls eightfold (40 to 5 workers) under a settled limit, behind a timeout of
// three service times: every call admitted above about 15 in flight times out. Once a drain has
// confirmed base, the first window of those timeouts ends as soon as they show the overload, as
// after a growth (see kneeLimit.watchesDrops): its cut comes within a fraction of a second, not
// after a whole window of calls that time out.
func TestKneeEngineEndsAWindowOfTimeoutsAfterACapacityDropEarly(t *testing.T) {
	// One call every 833µs, 50ms each without load: a demand of 60 calls in flight.
	m := newKneeSim(t, 833*time.Microsecond, 50*time.Millisecond, 40)
	m.timeout = 150 * time.Millisecond
	m.run(60 * time.Second)
	if l := m.h.Limit(); l < 40 || l > 48 {
		t.Fatalf("limit %d after a minute on a knee of 40: the scenario does not start where it says", l)
	}
	m.c = 5
	before := m.drops
	var firstCut time.Duration
	for at := 60 * time.Second; at < 62*time.Second && firstCut == 0; {
		at += time.Millisecond
		m.run(at)
		if m.h.Limit() < 30 {
			firstCut = at - 60*time.Second
		}
	}
	if firstCut == 0 || firstCut > 600*time.Millisecond {
		t.Fatalf("the limit fell below 30 %v after the capacity fell (0: not within 2s), %d calls timed out meanwhile: want within 600ms", firstCut, m.drops-before)
	}
}

// Calls of half a window (500ms): a drain's window would read the calls admitted before the
// drain, under the higher limit, as much as its own, and its latency, read as the no-load
// latency, raised base with every drain (by 3% over a minute, the limit with it). The drain
// lowers the limit 1.25 latencies before the grid's boundary, where its window starts: the
// calls admitted before it have ended by then. The limit then settles within a tenth of the
// knee.
func TestKneeEngineDrainsLetLongCallsEndFirst(t *testing.T) {
	// One call every 8.33ms, 500ms each without load: a demand of 60 calls in flight, 1.5
	// times a knee of 40.
	m := newKneeSim(t, 25*time.Millisecond/3, 500*time.Millisecond, 40)
	var starts []time.Duration // when each window started
	var limits []int           // the limit during each window
	windows := m.h.Snapshot().Windows
	starts, limits = append(starts, 0), append(limits, m.h.Limit())
	var sum, n float64 // the limit over the last two minutes, sampled every 10ms
	for m.now < 180*time.Second {
		m.run(m.now + 10*time.Millisecond)
		if w := m.h.Snapshot().Windows; w != windows {
			windows = w
			starts, limits = append(starts, m.now), append(limits, m.h.Limit())
		}
		if m.now > 60*time.Second {
			sum, n = sum+float64(m.h.Limit()), n+1
		}
	}
	drains := 0
	for i := 1; i+2 < len(limits); i++ {
		// A drain: the limit lowered by 10% or more for two windows (the first lets the
		// calls admitted before it end), then restored.
		if limits[i]*10 > limits[i-1]*9 || limits[i+1] != limits[i] || limits[i+2] < limits[i-1] || starts[i] < 20*time.Second {
			continue
		}
		drains++
		boundary := (starts[i+1] + 5*time.Millisecond) / (10 * time.Second) * (10 * time.Second)
		// A window ends on the first call to end after its length: the calls admitted at
		// arrivals (every 8.33ms) as slots free up end up to three arrivals apart, so within
		// 30ms (a window that is not aligned starts anywhere in the second before).
		if lead := boundary - starts[i]; starts[i+1]-boundary > 30*time.Millisecond || lead < 550*time.Millisecond {
			t.Errorf("a drain from %d to %d began at %v, its window at %v: want its window to start within 30ms of a boundary of the grid, 550ms (1.1 latencies) or more after the limit was lowered", limits[i-1], limits[i], starts[i], starts[i+1])
		}
	}
	if drains < 3 {
		t.Fatalf("%d drains after 20s: want 3 or more; limits %v", drains, limits)
	}
	t.Logf("%d drains; the limit averaged %.2f over the last two minutes", drains, sum/n)
	if mean := sum / n; mean > 44 {
		t.Errorf("the limit averaged %.1f over the last two minutes, want 44 (1.1 times the knee of 40) at most", mean)
	}
}

// firstWindowEnd runs a Knee limit (initial limit 20) under a steady demand of calls of 10ms on a
// knee of 64, one call every gap, until its first window ends, and returns when it ended and how
// many calls the limit had rejected by then.
func firstWindowEnd(t *testing.T, gap time.Duration) (time.Duration, int64) {
	t.Helper()
	m := newKneeSim(t, gap, 10*time.Millisecond, 64)
	for m.now < 3*time.Second {
		m.run(m.now + time.Millisecond)
		if s := m.h.Snapshot(); s.Windows > 0 {
			return m.now, s.Rejected
		}
	}
	t.Fatal("no window ended within 3s")
	return 0, 0
}

// A light load of 40 calls in flight on a knee of 64, from the initial limit of 20: the limit
// holds back as many calls as it serves. Its first window, read every 50ms, ends as soon as it
// has read the no-load latency (12.5 latencies and about 400 samples, see kneeLimit.endsAt), not
// after a whole Window of rejecting half the calls the dependency could serve; where the limit
// holds back few calls (21 in flight), the first window is a whole one.
func TestKneeEngineFirstWindowEndsOnceItHasReadWhenTheLimitHoldsBackHalf(t *testing.T) {
	end, rejected := firstWindowEnd(t, 250*time.Microsecond) // 4000 calls a second: 40 in flight
	if end > 260*time.Millisecond || end < 250*time.Millisecond {
		t.Errorf("the first window ended at %v with %d calls rejected: want at the first reading after it holds 404 samples (2000 a second: 202ms), at 250ms", end, rejected)
	}
	if rejected > 600 {
		t.Errorf("%d calls rejected in the first window: want 600 at most (a whole window rejects 2000)", rejected)
	}
	end, rejected = firstWindowEnd(t, 476*time.Microsecond) // 21 in flight
	if rejected == 0 {
		t.Fatal("no call rejected: the scenario does not test what it says")
	}
	if end < time.Second {
		t.Errorf("the first window ended at %v with %d calls rejected (about one in 21): want a whole window (1s)", end, rejected)
	}
}

// A window read before its end (Knee's first, every 50ms) still ends at the first call to end at
// or after its end, even where that call comes after a reading that fell due before the end: one
// call every 90ms, of 10ms, ends at 910ms (the window is then next read at 960ms) and at 1s. The
// readings before it holds MinWindowSamples (10) go on to the next reading: extended by a whole
// Window, as a window's end with too few samples is, it would end at 2s.
func TestEngineReadWindowEndsAtItsEnd(t *testing.T) {
	end, _ := firstWindowEnd(t, 90*time.Millisecond)
	if end != time.Second {
		t.Fatalf("the first window ended at %v, want 1s (the first call to end at or after it)", end)
	}
}

// A window read before its end that has too few samples at its end is extended by a whole Window
// from its end, as any window is, not from the reading that fell due before it: one call every
// 90ms, of 10ms, with MinWindowSamples 20 holds 11 samples at 1s (the call ending then passes the
// reading due at 960ms), so the window goes on to 2s and ends with the call that ends at 2.08s.
func TestEngineReadWindowWithTooFewSamplesIsExtendedFromItsEnd(t *testing.T) {
	cfg := r4c.AdaptiveLimitConfig{Algorithm: r4c.Knee, InitialLimit: 20, MaxLimit: 200, MinWindowSamples: 20}
	m := newKneeSimWith(t, cfg, 90*time.Millisecond, 10*time.Millisecond, 64)
	for m.now < 3*time.Second && m.h.Snapshot().Windows == 0 {
		m.run(m.now + time.Millisecond)
	}
	if m.now != 2080*time.Millisecond {
		t.Fatalf("the first window ended at %v, want 2.08s (the first call to end after 2s)", m.now)
	}
}
