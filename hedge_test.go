package r4c_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// hedgeAttempt is one attempt of a hedged call as its function saw it.
type hedgeAttempt struct {
	n   int             // the attempt's number, from 1
	ctx context.Context // the context it received
	at  time.Duration   // the clock's reading when it started
}

// hedgeScript gives each attempt of a hedged call its own behaviour, in launch order, and
// reports on channels when each starts and when its function returns.
type hedgeScript struct {
	clock   *r4ctest.ManualClock
	do      []func(context.Context) (string, error)
	calls   atomic.Int32
	started chan hedgeAttempt
	ended   chan int
	seen    int // attempts seen to end, by waitEnded
}

func newHedgeScript(clock *r4ctest.ManualClock, do ...func(context.Context) (string, error)) *hedgeScript {
	return &hedgeScript{clock: clock, do: do, started: make(chan hedgeAttempt, 16), ended: make(chan int, 16)}
}

// fn is the function given to the pipeline.
func (s *hedgeScript) fn(ctx context.Context) (string, error) {
	n := int(s.calls.Add(1))
	s.started <- hedgeAttempt{n: n, ctx: ctx, at: time.Duration(s.clock.Nanotime())}
	defer func() { s.ended <- n }()
	return s.do[n-1](ctx)
}

// next waits for the next attempt to start and checks its number.
func (s *hedgeScript) next(t *testing.T, n int) hedgeAttempt {
	t.Helper()
	select {
	case a := <-s.started:
		if a.n != n {
			t.Fatalf("attempt %d started, want %d", a.n, n)
		}
		return a
	case <-t.Context().Done():
		t.Fatalf("attempt %d never started", n)
	}
	panic("unreachable")
}

// waitEnded waits until one more attempt's function has returned and returns its number.
func (s *hedgeScript) waitEnded(t *testing.T) int {
	t.Helper()
	select {
	case n := <-s.ended:
		s.seen++
		return n
	case <-t.Context().Done():
		t.Fatalf("an attempt's function never returned")
	}
	panic("unreachable")
}

// allEnded checks that n attempts were made and waits until all their functions have returned.
func (s *hedgeScript) allEnded(t *testing.T, n int) {
	t.Helper()
	if got := int(s.calls.Load()); got != n {
		t.Fatalf("%d attempts, want %d", got, n)
	}
	for s.seen < n {
		s.waitEnded(t)
	}
}

// hedgeBlocks is an attempt that runs until its context is cancelled.
func hedgeBlocks(ctx context.Context) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

// hedgeAfter is an attempt that ignores its context: it waits for release, then returns v, err.
func hedgeAfter(release <-chan struct{}, v string, err error) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		<-release
		return v, err
	}
}

func hedgeReturns(v string, err error) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return v, err }
}

// hedgeEventually polls cond, yielding the processor between tries, a bounded number of times.
func hedgeEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 1_000_000 {
		if cond() {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("never: %s", what)
}

// hedgeGoroutines returns a check that every goroutine started since the call has ended.
func hedgeGoroutines(t *testing.T) func() {
	t.Helper()
	base := runtime.NumGoroutine()
	return func() {
		t.Helper()
		hedgeEventually(t, fmt.Sprintf("goroutines back to %d (now %d)", base, runtime.NumGoroutine()),
			func() bool { return runtime.NumGoroutine() <= base })
	}
}

func hedgeHandle(t *testing.T, reg *r4c.Registry, id string) *r4c.HedgeHandle {
	t.Helper()
	h, err := reg.Hedge(id)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func expectHedgeCounters(t *testing.T, h *r4c.HedgeHandle, calls, hedges, wins int64) {
	t.Helper()
	if s := h.Snapshot(); s.Calls != calls || s.Hedges != hedges || s.HedgeWins != wins {
		t.Fatalf("calls %d hedges %d wins %d, want %d %d %d", s.Calls, s.Hedges, s.HedgeWins, calls, hedges, wins)
	}
}

func expectNoTimers(t *testing.T, clock *r4ctest.ManualClock) {
	t.Helper()
	if n := clock.Pending(); n != 0 {
		t.Fatalf("%d timers left", n)
	}
}

// expectNotDone checks that the call has not returned (yet).
func expectNotDone(t *testing.T, done <-chan error, when string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("returned %s: %v", when, err)
	default:
	}
}

func TestHedgeFastFirstAttemptLaunchesNothing(t *testing.T) {
	check := hedgeGoroutines(t)
	log := &eventLog{}
	reg, clock := newRegistry(t, r4c.WithObserver(log.Observe))
	p := newPipeline[string](t, reg, "fast", r4c.HedgeConfig{Delay: 100 * time.Millisecond})
	s := newHedgeScript(clock, hedgeReturns("ok", nil))
	if v, err := p.Execute(context.Background(), s.fn); v != "ok" || err != nil {
		t.Fatal(v, err)
	}
	expectNoTimers(t, clock)
	clock.Advance(time.Second) // nothing is left to launch anything
	s.allEnded(t, 1)
	expectHedgeCounters(t, hedgeHandle(t, reg, "fast"), 1, 0, 0)
	if evs := log.of(r4c.EventHedged); len(evs) != 0 {
		t.Fatalf("%+v", evs)
	}
	check()
}

func TestHedgeSlowFirstAttemptIsHedgedAfterExactlyDelay(t *testing.T) {
	check := hedgeGoroutines(t)
	log := &eventLog{}
	reg, clock := newRegistry(t, r4c.WithObserver(log.Observe))
	p := newPipeline[string](t, reg, "search", r4c.HedgeConfig{Delay: 100 * time.Millisecond})
	s := newHedgeScript(clock, hedgeBlocks, hedgeReturns("second", nil))
	got, done := startHedged(p, s.fn)
	first := s.next(t, 1)
	waitPending(t, clock, 1)
	clock.Advance(99 * time.Millisecond)
	if clock.Pending() != 1 || s.calls.Load() != 1 {
		t.Fatalf("hedged before the delay: %d timers, %d attempts", clock.Pending(), s.calls.Load())
	}
	expectNotDone(t, done, "before the delay")
	clock.Advance(time.Millisecond)
	second := s.next(t, 2)
	if second.at != 100*time.Millisecond {
		t.Fatalf("the hedge started at %v", second.at)
	}
	if err := <-done; err != nil || *got != "second" {
		t.Fatal(*got, err)
	}
	if first.ctx.Err() != context.Canceled {
		t.Fatalf("the losing attempt's context: %v", first.ctx.Err())
	}
	s.allEnded(t, 2) // the first attempt returns once cancelled
	expectNoTimers(t, clock)
	expectHedgeCounters(t, hedgeHandle(t, reg, "search"), 1, 1, 1)
	evs := log.of(r4c.EventHedged)
	if len(evs) != 1 || evs[0].Kind != r4c.KindHedge || evs[0].Instance != "search" || evs[0].Attempt != 2 {
		t.Fatalf("%+v", evs)
	}
	check()
}

func TestHedgeMaxHedgesCapsLaunches(t *testing.T) {
	check := hedgeGoroutines(t)
	log := &eventLog{}
	reg, clock := newRegistry(t, r4c.WithObserver(log.Observe))
	p := newPipeline[string](t, reg, "capped", r4c.HedgeConfig{Delay: 100 * time.Millisecond, MaxHedges: 3})
	release := make(chan struct{})
	s := newHedgeScript(clock, hedgeBlocks, hedgeBlocks, hedgeAfter(release, "third", nil), hedgeBlocks)
	got, done := startHedged(p, s.fn)
	s.next(t, 1)
	for n := 2; n <= 4; n++ {
		waitPending(t, clock, 1)
		clock.Advance(100 * time.Millisecond)
		if a := s.next(t, n); a.at != time.Duration(n-1)*100*time.Millisecond {
			t.Fatalf("attempt %d started at %v", n, a.at)
		}
	}
	// Every attempt is launched: no timer is left and time launches nothing more.
	hedgeEventually(t, "the delay timer is not re-armed after the last hedge", func() bool { return clock.Pending() == 0 })
	clock.Advance(time.Second)
	if n := s.calls.Load(); n != 4 {
		t.Fatalf("%d attempts", n)
	}
	expectNotDone(t, done, "before any attempt ended")
	close(release)
	if err := <-done; err != nil || *got != "third" {
		t.Fatal(*got, err)
	}
	s.allEnded(t, 4)
	expectNoTimers(t, clock)
	expectHedgeCounters(t, hedgeHandle(t, reg, "capped"), 1, 3, 1)
	evs := log.of(r4c.EventHedged)
	if len(evs) != 3 || evs[0].Attempt != 2 || evs[1].Attempt != 3 || evs[2].Attempt != 4 {
		t.Fatalf("%+v", evs)
	}
	check()
}

func TestHedgeFailureBeforeDelayReturnsWithoutHedging(t *testing.T) {
	check := hedgeGoroutines(t)
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "failing", r4c.HedgeConfig{Delay: 100 * time.Millisecond, MaxHedges: 2})
	s := newHedgeScript(clock, hedgeReturns("", errNotFound))
	if _, err := p.Execute(context.Background(), s.fn); !errors.Is(err, errNotFound) {
		t.Fatal(err)
	}
	expectNoTimers(t, clock)
	clock.Advance(time.Second)
	s.allEnded(t, 1)
	expectHedgeCounters(t, hedgeHandle(t, reg, "failing"), 1, 0, 0)
	check()
}

func TestHedgeFailureWaitsForTheOtherAttempts(t *testing.T) {
	cases := []struct {
		name    string
		results [2]error // of attempts 1 and 2
		order   [2]int   // which attempt returns first, then second
		want    string
		wantErr error
		wins    int64
	}{
		{"first fails, hedge succeeds", [2]error{errOverloaded, nil}, [2]int{1, 2}, "2", nil, 1},
		{"hedge fails, first succeeds", [2]error{nil, errOverloaded}, [2]int{2, 1}, "1", nil, 0},
		// The call returns the failure it receives last; which one that is depends on which
		// goroutine delivers first, which the test cannot order.
		{"both fail: a failure", [2]error{errOverloaded, errNotFound}, [2]int{1, 2}, "", errNotFound, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := hedgeGoroutines(t)
			reg, clock := newRegistry(t)
			p := newPipeline[string](t, reg, "h", r4c.HedgeConfig{Delay: 100 * time.Millisecond})
			release := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
			s := newHedgeScript(clock, hedgeAfter(release[0], "1", c.results[0]), hedgeAfter(release[1], "2", c.results[1]))
			got, done := startHedged(p, s.fn)
			s.next(t, 1)
			waitPending(t, clock, 1)
			clock.Advance(100 * time.Millisecond)
			s.next(t, 2)
			close(release[c.order[0]-1])
			if n := s.waitEnded(t); n != c.order[0] {
				t.Fatalf("attempt %d ended", n)
			}
			if c.results[c.order[0]-1] != nil {
				expectNotDone(t, done, "on a failure while another attempt ran")
			}
			close(release[c.order[1]-1])
			err := <-done
			failed := errors.Is(err, c.results[0]) || errors.Is(err, c.results[1])
			if *got != c.want || (c.wantErr == nil) != (err == nil) || (err != nil && !failed) {
				t.Fatalf("*got %q %v, want %q %v", *got, err, c.want, c.wantErr)
			}
			s.allEnded(t, 2)
			expectNoTimers(t, clock)
			expectHedgeCounters(t, hedgeHandle(t, reg, "h"), 1, 1, c.wins)
			check()
		})
	}
}

// A failure launches nothing, but the delay keeps running while another attempt does.
func TestHedgeFailureDoesNotStopTheDelay(t *testing.T) {
	check := hedgeGoroutines(t)
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "h", r4c.HedgeConfig{Delay: 100 * time.Millisecond, MaxHedges: 2})
	release := make(chan struct{})
	s := newHedgeScript(clock, hedgeAfter(release, "", errOverloaded), hedgeBlocks, hedgeReturns("third", nil))
	got, done := startHedged(p, s.fn)
	s.next(t, 1)
	waitPending(t, clock, 1)
	clock.Advance(100 * time.Millisecond)
	s.next(t, 2)
	close(release) // attempt 1 fails at 100ms; attempt 2 still runs
	if n := s.waitEnded(t); n != 1 {
		t.Fatalf("attempt %d ended", n)
	}
	expectNotDone(t, done, "on a failure while another attempt ran")
	waitPending(t, clock, 1)
	clock.Advance(99 * time.Millisecond)
	if s.calls.Load() != 2 {
		t.Fatal("the failure launched an attempt")
	}
	clock.Advance(time.Millisecond)
	if a := s.next(t, 3); a.at != 200*time.Millisecond {
		t.Fatalf("attempt 3 at %v", a.at)
	}
	if err := <-done; err != nil || *got != "third" {
		t.Fatal(*got, err)
	}
	s.allEnded(t, 3)
	expectNoTimers(t, clock)
	expectHedgeCounters(t, hedgeHandle(t, reg, "h"), 1, 2, 1)
	check()
}

func TestHedgeStopsLaunchingWhenAnInnerLimitRejects(t *testing.T) {
	check := hedgeGoroutines(t)
	log := &eventLog{}
	reg, clock := newRegistry(t, r4c.WithObserver(log.Observe))
	p := newPipeline[string](t, reg, "limited",
		r4c.HedgeConfig{Delay: 100 * time.Millisecond, MaxHedges: 3},
		r4c.AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1})
	limit := handle(t, reg, "limited")
	release := make(chan struct{})
	s := newHedgeScript(clock, hedgeAfter(release, "first", nil))
	got, done := startHedged(p, s.fn)
	s.next(t, 1) // holds the only slot
	waitPending(t, clock, 1)
	clock.Advance(100 * time.Millisecond) // the hedge is launched and rejected by the limit
	hedgeEventually(t, "the hedge is rejected and the delay stopped", func() bool {
		return limit.Snapshot().Rejected == 1 && clock.Pending() == 0
	})
	clock.Advance(time.Second) // no more launches
	expectNotDone(t, done, "on a rejection while the first attempt ran")
	close(release)
	if err := <-done; err != nil || *got != "first" {
		t.Fatal(*got, err)
	}
	s.allEnded(t, 1) // the function was never called for the hedge
	expectNoTimers(t, clock)
	expectHedgeCounters(t, hedgeHandle(t, reg, "limited"), 1, 1, 0)
	if evs := log.of(r4c.EventHedged); len(evs) != 1 || evs[0].Attempt != 2 {
		t.Fatalf("%+v", evs)
	}
	if limit.InFlight() != 0 {
		t.Fatalf("%d slots held", limit.InFlight())
	}
	check()
}

func TestHedgeRejectedFirstAttemptReturnsTheRejection(t *testing.T) {
	check := hedgeGoroutines(t)
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "full",
		r4c.HedgeConfig{Delay: 100 * time.Millisecond},
		r4c.AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1})
	held := acquire(t, handle(t, reg, "full"))
	defer held.Success()
	s := newHedgeScript(clock)
	_, err := p.Execute(context.Background(), s.fn)
	expectRejected(t, err, "full")
	expectNoTimers(t, clock)
	if s.calls.Load() != 0 {
		t.Fatal("the function ran")
	}
	expectHedgeCounters(t, hedgeHandle(t, reg, "full"), 1, 0, 0)
	check()
}

func TestHedgeCallerCancellation(t *testing.T) {
	t.Run("attempts that honour their context", func(t *testing.T) {
		check := hedgeGoroutines(t)
		reg, clock := newRegistry(t)
		p := newPipeline[string](t, reg, "c", r4c.HedgeConfig{Delay: 100 * time.Millisecond})
		s := newHedgeScript(clock, hedgeBlocks, hedgeBlocks)
		ctx, cancel := context.WithCancel(context.Background())
		done := start(p, ctx, s.fn)
		s.next(t, 1)
		waitPending(t, clock, 1)
		clock.Advance(100 * time.Millisecond)
		s.next(t, 2)
		cancel()
		if err := <-done; err != context.Canceled {
			t.Fatalf("%v", err)
		}
		s.allEnded(t, 2)
		expectNoTimers(t, clock)
		expectHedgeCounters(t, hedgeHandle(t, reg, "c"), 1, 1, 0)
		check()
	})
	t.Run("attempts that ignore it: the call returns at once", func(t *testing.T) {
		check := hedgeGoroutines(t)
		reg, clock := newRegistry(t)
		p := newPipeline[string](t, reg, "c", r4c.HedgeConfig{Delay: 100 * time.Millisecond, MaxHedges: 2})
		release := make(chan struct{})
		s := newHedgeScript(clock, hedgeAfter(release, "late", nil), hedgeAfter(release, "late", nil))
		ctx, cancel := context.WithCancel(context.Background())
		done := start(p, ctx, s.fn)
		first := s.next(t, 1)
		waitPending(t, clock, 1)
		clock.Advance(100 * time.Millisecond)
		s.next(t, 2)
		waitPending(t, clock, 1) // the delay is re-armed for a third attempt
		cancel()
		if err := <-done; err != context.Canceled {
			t.Fatalf("%v", err)
		}
		expectNoTimers(t, clock)
		if first.ctx.Err() == nil {
			t.Fatal("the attempts' context is not cancelled")
		}
		close(release) // the abandoned attempts end; their successes are discarded
		s.allEnded(t, 2)
		expectHedgeCounters(t, hedgeHandle(t, reg, "c"), 1, 1, 0)
		check()
	})
	t.Run("before the first hedge", func(t *testing.T) {
		check := hedgeGoroutines(t)
		reg, clock := newRegistry(t)
		p := newPipeline[string](t, reg, "c", r4c.HedgeConfig{Delay: 100 * time.Millisecond})
		s := newHedgeScript(clock, hedgeBlocks)
		ctx, cancel := context.WithCancel(context.Background())
		done := start(p, ctx, s.fn)
		s.next(t, 1)
		waitPending(t, clock, 1)
		cancel()
		if err := <-done; err != context.Canceled {
			t.Fatalf("%v", err)
		}
		expectNoTimers(t, clock)
		s.allEnded(t, 1)
		expectHedgeCounters(t, hedgeHandle(t, reg, "c"), 1, 0, 0)
		check()
	})
}

// Attempts beyond the result buffer's capacity that end after the call returned do not block.
func TestHedgeManyAbandonedAttemptsEnd(t *testing.T) {
	check := hedgeGoroutines(t)
	reg, clock := newRegistry(t)
	const hedges = 40
	p := newPipeline[string](t, reg, "many", r4c.HedgeConfig{Delay: time.Millisecond, MaxHedges: hedges})
	release := make(chan struct{})
	do := make([]func(context.Context) (string, error), hedges+1)
	for i := range do {
		do[i] = hedgeAfter(release, "late", nil) // each ignores its context
	}
	s := newHedgeScript(clock, do...)
	s.started = make(chan hedgeAttempt, hedges+1)
	s.ended = make(chan int, hedges+1)
	ctx, cancel := context.WithCancel(context.Background())
	done := start(p, ctx, s.fn)
	s.next(t, 1)
	for n := 2; n <= hedges+1; n++ {
		waitPending(t, clock, 1)
		clock.Advance(time.Millisecond)
		s.next(t, n)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("%v", err)
	}
	expectNoTimers(t, clock)
	close(release)
	s.allEnded(t, hedges+1)
	expectHedgeCounters(t, hedgeHandle(t, reg, "many"), 1, hedges, 0)
	check()
}

// hedgeOutcome is what a call returned, or what it panicked with.
type hedgeOutcome struct {
	v        string
	err      error
	panicked any
}

// hedgeRecover runs p.Execute in a new goroutine and delivers its outcome.
func hedgeRecover(p *r4c.Pipeline[string], fn func(context.Context) (string, error)) <-chan hedgeOutcome {
	out := make(chan hedgeOutcome, 1)
	go func() {
		var o hedgeOutcome
		defer func() { o.panicked = recover(); out <- o }()
		o.v, o.err = p.Execute(context.Background(), fn)
	}()
	return out
}

func TestHedgeReraisesPanics(t *testing.T) {
	t.Run("first attempt", func(t *testing.T) {
		check := hedgeGoroutines(t)
		reg, clock := newRegistry(t)
		p := newPipeline[string](t, reg, "p", r4c.HedgeConfig{})
		s := newHedgeScript(clock, func(context.Context) (string, error) { panic("inner") })
		if o := <-hedgeRecover(p, s.fn); o.panicked != "inner" {
			t.Fatalf("%+v", o)
		}
		expectNoTimers(t, clock)
		s.allEnded(t, 1)
		check()
	})
	t.Run("hedge while the first runs", func(t *testing.T) {
		check := hedgeGoroutines(t)
		reg, clock := newRegistry(t)
		p := newPipeline[string](t, reg, "p", r4c.HedgeConfig{Delay: 100 * time.Millisecond})
		boom := errors.New("boom")
		s := newHedgeScript(clock, hedgeBlocks, func(context.Context) (string, error) { panic(boom) })
		outcome := hedgeRecover(p, s.fn)
		s.next(t, 1)
		waitPending(t, clock, 1)
		clock.Advance(100 * time.Millisecond)
		if o := <-outcome; o.panicked != boom {
			t.Fatalf("%+v", o)
		}
		expectNoTimers(t, clock)
		s.allEnded(t, 2) // the first attempt was cancelled
		check()
	})
	t.Run("after a success: discarded", func(t *testing.T) {
		check := hedgeGoroutines(t)
		reg, clock := newRegistry(t)
		p := newPipeline[string](t, reg, "p", r4c.HedgeConfig{Delay: 100 * time.Millisecond})
		release := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
		s := newHedgeScript(clock, hedgeAfter(release[0], "ok", nil), func(context.Context) (string, error) {
			<-release[1]
			panic("late")
		})
		outcome := hedgeRecover(p, s.fn)
		s.next(t, 1)
		waitPending(t, clock, 1)
		clock.Advance(100 * time.Millisecond)
		s.next(t, 2)
		close(release[0])
		if o := <-outcome; o.panicked != nil || o.v != "ok" || o.err != nil {
			t.Fatalf("%+v", o)
		}
		close(release[1]) // panics in an abandoned goroutine: recovered there and dropped
		s.allEnded(t, 2)
		expectNoTimers(t, clock)
		expectHedgeCounters(t, hedgeHandle(t, reg, "p"), 1, 1, 0)
		check()
	})
}

func TestHedgeCountsEveryCall(t *testing.T) {
	check := hedgeGoroutines(t)
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "n", r4c.HedgeConfig{})
	for i := range 5 {
		var err error
		if i%2 == 1 {
			err = errNotFound
		}
		if _, got := p.Execute(context.Background(), hedgeReturns("ok", err)); !errors.Is(got, err) {
			t.Fatal(got)
		}
	}
	expectNoTimers(t, clock)
	h := hedgeHandle(t, reg, "n")
	expectHedgeCounters(t, h, 5, 0, 0)
	if s := h.Snapshot(); s.ID != "n" || !s.Enabled || s.Delay != 100*time.Millisecond || s.MaxHedges != 1 {
		t.Fatalf("%+v", s)
	}
	if snap := reg.Snapshot().Hedges; len(snap) != 1 || snap[0].Calls != 5 {
		t.Fatalf("%+v", snap)
	}
	check()
}

func TestHedgeDisabledRunsOneAttempt(t *testing.T) {
	check := hedgeGoroutines(t)
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "off", r4c.HedgeConfig{Enabled: r4c.Off})
	release := make(chan struct{})
	s := newHedgeScript(clock, hedgeAfter(release, "only", nil))
	done := start(p, context.Background(), s.fn)
	s.next(t, 1)
	expectNoTimers(t, clock)
	clock.Advance(time.Second)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.allEnded(t, 1)
	if snap := hedgeHandle(t, reg, "off").Snapshot(); snap.Enabled || snap.Calls != 0 {
		t.Fatalf("%+v", snap)
	}
	check()
}

// A hedge sends a second request when the first is slow; the first success wins and the slow
// request's context is cancelled.
func ExampleHedgeConfig() {
	clock := r4ctest.NewManualClock()
	reg, _ := r4c.NewRegistry(r4c.WithClock(clock), r4c.WithObserver(func(e r4c.Event) {
		fmt.Println(e.Type, e.Kind, e.Instance, "attempt", e.Attempt)
	}))
	p, _ := r4c.NewPipeline[string](reg, "search", r4c.HedgeConfig{Delay: 50 * time.Millisecond})

	firstSent := make(chan struct{})
	go func() { // time passes: 50ms after the first request, the hedge sends another
		<-firstSent
		_ = clock.WaitPending(context.Background(), 1)
		clock.Advance(50 * time.Millisecond)
	}()
	var requests atomic.Int32
	s, err := p.Execute(context.Background(), func(ctx context.Context) (string, error) {
		if requests.Add(1) == 1 {
			close(firstSent)
			<-ctx.Done() // the first replica is stuck until the hedge cancels it
			return "", ctx.Err()
		}
		return "results from the second replica", nil
	})
	fmt.Println(s, err)

	h, _ := reg.Hedge("search")
	snap := h.Snapshot()
	fmt.Println(snap.Calls, snap.Hedges, snap.HedgeWins)
	// Output:
	// hedged hedge search attempt 2
	// results from the second replica <nil>
	// 1 1 1
}

// startHedged runs p.Execute(fn) in a goroutine; the value is in *got once done delivers.
func startHedged(p *r4c.Pipeline[string], fn func(context.Context) (string, error)) (got *string, done chan error) {
	got, done = new(string), make(chan error, 1)
	go func() {
		v, err := p.Execute(context.Background(), fn)
		*got = v
		done <- err
	}()
	return got, done
}
