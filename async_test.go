package r4c_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// The asynchronous driver, on the manual clock: every policy admits before ExecuteAsync
// returns, settles before Complete returns, and waits on timers of the clock.

// asyncFns records the inner futures an asynchronous function hands out, and their contexts.
type asyncFns struct {
	mu    sync.Mutex
	calls []*asyncCallOf
}

type asyncCallOf struct {
	ctx context.Context
	f   *r4c.Future[string]
}

// fn returns a function for ExecuteAsync that hands out a pending future each call.
func (a *asyncFns) fn(ctx context.Context) *r4c.Future[string] {
	f := r4c.NewFuture[string]()
	a.mu.Lock()
	a.calls = append(a.calls, &asyncCallOf{ctx: ctx, f: f})
	a.mu.Unlock()
	return f
}

func (a *asyncFns) n() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.calls)
}

func (a *asyncFns) call(t *testing.T, i int) *asyncCallOf {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if i >= len(a.calls) {
		t.Fatalf("the function ran %d times, want at least %d", len(a.calls), i+1)
	}
	return a.calls[i]
}

func isDone[T any](f *r4c.Future[T]) bool {
	select {
	case <-f.Done():
		return true
	default:
		return false
	}
}

func result[T any](t *testing.T, f *r4c.Future[T]) (T, error) {
	t.Helper()
	if !isDone(f) {
		t.Fatal("the future is pending, want it done")
	}
	return f.Get(context.Background())
}

// stackRegistry is a registry on a manual clock whose limit windows take one sample.
func stackRegistry(t *testing.T) (*r4c.Registry, *r4ctest.ManualClock) {
	return newRegistry(t, r4c.WithDefaults(r4c.AdaptiveLimitConfig{MinWindowSamples: 1}))
}

// everyPolicy is the full stack, with settings that let each policy's event be seen.
func everyPolicy() []r4c.PolicyConfig {
	return []r4c.PolicyConfig{
		r4c.RetryConfig{MaxAttempts: 3, Wait: 100 * time.Millisecond},
		r4c.CircuitBreakerConfig{SlidingWindowSize: 10, MinimumCalls: 10, WaitInOpen: time.Minute},
		r4c.RateLimiterConfig{Limit: 100, Period: time.Second},
		r4c.AdaptiveLimitConfig{InitialLimit: 2, MaxLimit: 2, MinLimit: 2},
		r4c.TimeoutConfig{Timeout: 5 * time.Second},
		r4c.BulkheadConfig{MaxConcurrent: 5},
	}
}

type stack struct {
	reg      *r4c.Registry
	clock    *r4ctest.ManualClock
	limit    *r4c.AdaptiveLimitHandle
	breaker  *r4c.CircuitBreakerHandle
	bulkhead *r4c.BulkheadHandle
	rate     *r4c.RateLimiterHandle
}

func newStack(t *testing.T, id string, cfgs ...r4c.PolicyConfig) (*r4c.Pipeline[string], *stack) {
	t.Helper()
	reg, clock := stackRegistry(t)
	p := newPipeline[string](t, reg, id, cfgs...)
	s := &stack{reg: reg, clock: clock}
	s.limit, _ = reg.AdaptiveLimit(id)
	s.breaker, _ = reg.CircuitBreaker(id)
	s.bulkhead, _ = reg.Bulkhead(id)
	s.rate, _ = reg.RateLimiter(id)
	return p, s
}

// idle checks that nothing is held and no timer is pending.
func (s *stack) idle(t *testing.T) {
	t.Helper()
	if s.limit != nil && s.limit.InFlight() != 0 {
		t.Errorf("limit: %d in flight, want 0", s.limit.InFlight())
	}
	if s.bulkhead != nil && s.bulkhead.InFlight() != 0 {
		t.Errorf("bulkhead: %d in flight, want 0", s.bulkhead.InFlight())
	}
	if s.rate != nil && s.rate.Snapshot().Waiting != 0 {
		t.Errorf("rate limiter: %d waiting, want 0", s.rate.Snapshot().Waiting)
	}
	if n := s.clock.Pending(); n != 0 {
		t.Errorf("%d timers pending, want 0", n)
	}
}

func TestAsyncAdmitsBeforeReturningAndSettlesBeforeCompleteReturns(t *testing.T) {
	p, s := newStack(t, "stack", everyPolicy()...)
	var fns asyncFns
	f := p.ExecuteAsync(context.Background(), fns.fn)
	// Before ExecuteAsync returned: a rate permit, the breaker's permission, a limit slot, the
	// timeout's timer, a bulkhead slot, and the function called.
	if fns.n() != 1 || s.limit.InFlight() != 1 || s.bulkhead.InFlight() != 1 || s.clock.Pending() != 1 ||
		s.rate.Snapshot().AvailablePermits != 99 {
		t.Fatalf("after ExecuteAsync: fn called %d times, limit %d, bulkhead %d in flight, %d timers, %d permits left",
			fns.n(), s.limit.InFlight(), s.bulkhead.InFlight(), s.clock.Pending(), s.rate.Snapshot().AvailablePermits)
	}
	if isDone(f) {
		t.Fatal("the returned future is done before its inner future")
	}
	s.clock.Advance(time.Second) // the call takes 1s: the limit's window is over
	fns.call(t, 0).f.Complete("ok", nil)
	// When Complete returned: every policy settled, and the returned future is done.
	if v, err := result(t, f); v != "ok" || err != nil {
		t.Fatalf("result %q, %v", v, err)
	}
	if ls := s.limit.Snapshot(); ls.Windows != 1 || ls.WindowLatency != time.Second || ls.WindowSamples != 1 {
		t.Fatalf("limit: windows %d, latency %v, samples %d; want the call's sample of 1s", ls.Windows, ls.WindowLatency, ls.WindowSamples)
	}
	if bs := s.breaker.Snapshot(); bs.BufferedCalls != 1 || bs.FailedCalls != 0 {
		t.Fatalf("breaker: %d outcomes, %d failed; want one success", bs.BufferedCalls, bs.FailedCalls)
	}
	s.idle(t)
}

func TestAsyncRejectionsReturnACompletedFutureInOrder(t *testing.T) {
	p, s := newStack(t, "order", everyPolicy()[1:]...) // no retry: rejections are final
	var fns asyncFns
	a := p.ExecuteAsync(context.Background(), fns.fn)
	b := p.ExecuteAsync(context.Background(), fns.fn)
	c := p.ExecuteAsync(context.Background(), fns.fn) // the limit (2) is full
	if _, err := result(t, c); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("third call: %v, want ErrLimitExceeded at once", err)
	}
	if fns.n() != 2 || isDone(a) || isDone(b) {
		t.Fatalf("fn ran %d times; want the first two admitted, in order, and pending", fns.n())
	}
	// The outer breaker recorded the rejection as a failure (docs/policies.md); the permit was spent.
	if bs := s.breaker.Snapshot(); bs.FailedCalls != 1 {
		t.Fatalf("breaker: %d failures, want the rejection recorded", bs.FailedCalls)
	}
	if got := s.rate.Snapshot().AvailablePermits; got != 97 {
		t.Fatalf("rate limiter: %d permits left, want 97 (the rejected call spent one)", got)
	}
	fns.call(t, 0).f.Complete("a", nil)
	fns.call(t, 1).f.Complete("b", nil)
	s.idle(t)
}

func TestAsyncTimeoutFiresOnTheClock(t *testing.T) {
	p, s := newStack(t, "timeout", r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, InitialLimit: 10},
		r4c.TimeoutConfig{Timeout: 2 * time.Second})
	var fns asyncFns
	f := p.ExecuteAsync(context.Background(), fns.fn)
	call := fns.call(t, 0)
	if d, ok := call.ctx.Deadline(); !ok || d != r4ctest.Epoch.Add(2*time.Second) {
		t.Fatalf("fn's deadline %v, %v; want the clock's now + 2s", d, ok)
	}
	s.clock.Advance(2*time.Second - 1)
	if isDone(f) || call.ctx.Err() != nil {
		t.Fatal("done before the deadline")
	}
	s.clock.Advance(1) // the deadline: the call fails at once, though fn ignores its context
	_, err := result(t, f)
	var te *r4c.CallTimeoutError
	if !errors.As(err, &te) || !errors.Is(err, r4c.ErrCallTimeout) {
		t.Fatalf("err %v, want a *CallTimeoutError", err)
	}
	if call.ctx.Err() != context.DeadlineExceeded || context.Cause(call.ctx) != context.DeadlineExceeded {
		t.Fatalf("fn's context: %v (cause %v), want DeadlineExceeded", call.ctx.Err(), context.Cause(call.ctx))
	}
	select {
	case <-call.ctx.Done():
	default:
		t.Fatal("fn's context is not done")
	}
	if _, err := result(t, call.f); err != context.Canceled {
		t.Fatalf("inner future: %v, want cancelled", err)
	}
	// The timeout is a drop: AIMD backs off once the window ends.
	s.clock.Advance(time.Second)
	mustExecute(t, p, taking(nil, 0, nil))
	if got := s.limit.Limit(); got != 9 {
		t.Fatalf("limit %d after a window with a timeout, want 9 (AIMD backed off)", got)
	}
	s.idle(t)
}

func TestAsyncRetryWaitsOnTheClockHoldingNoSlot(t *testing.T) {
	p, s := newStack(t, "retry", r4c.RetryConfig{MaxAttempts: 3, Wait: 100 * time.Millisecond},
		r4c.AdaptiveLimitConfig{InitialLimit: 1, MaxLimit: 1})
	var fns asyncFns
	f := p.ExecuteAsync(context.Background(), fns.fn)
	fns.call(t, 0).f.Complete("", errOverloaded)
	// The wait: a timer, no slot held, no goroutine.
	if fns.n() != 1 || s.limit.InFlight() != 0 || s.clock.Pending() != 1 || isDone(f) {
		t.Fatalf("during the wait: fn ran %d times, %d in flight, %d timers, done %v", fns.n(), s.limit.InFlight(), s.clock.Pending(), isDone(f))
	}
	s.clock.Advance(100 * time.Millisecond) // the second attempt starts in Advance
	if fns.n() != 2 || s.limit.InFlight() != 1 {
		t.Fatalf("after the wait: fn ran %d times, %d in flight", fns.n(), s.limit.InFlight())
	}
	fns.call(t, 1).f.Complete("", errOverloaded)
	s.clock.Advance(100 * time.Millisecond)
	fns.call(t, 2).f.Complete("", errOverloaded)
	_, err := result(t, f)
	var re *r4c.RetryExhaustedError
	if !errors.As(err, &re) || re.Attempts != 3 || !errors.Is(err, errOverloaded) {
		t.Fatalf("err %v, want retries exhausted after 3 attempts", err)
	}
	if rs := snap(t, s.reg).Retry("retry"); rs.Retries != 2 || rs.Exhausted != 1 || rs.Calls != 1 {
		t.Fatalf("retry snapshot %+v", rs)
	}
	s.idle(t)
}

func TestAsyncRetryRetriesARejectionAfterItsWait(t *testing.T) {
	p, s := newStack(t, "retry-rejected", r4c.RetryConfig{MaxAttempts: 2, Wait: time.Second},
		r4c.AdaptiveLimitConfig{InitialLimit: 1, MaxLimit: 1})
	var fns asyncFns
	first := p.ExecuteAsync(context.Background(), fns.fn)
	second := p.ExecuteAsync(context.Background(), fns.fn) // rejected, and waits to retry
	if fns.n() != 1 || isDone(second) {
		t.Fatalf("fn ran %d times; the rejected call done %v, want it waiting to retry", fns.n(), isDone(second))
	}
	fns.call(t, 0).f.Complete("a", nil) // frees the slot
	s.clock.Advance(time.Second)        // the retry is admitted
	fns.call(t, 1).f.Complete("b", nil)
	if v, err := result(t, second); v != "b" || err != nil {
		t.Fatalf("the retried call: %q, %v", v, err)
	}
	if v, _ := result(t, first); v != "a" {
		t.Fatalf("first: %q", v)
	}
	s.idle(t)
}

func TestAsyncHedgeLaunchesOnTheClockAndTheWinnerCancelsTheRest(t *testing.T) {
	p, s := newStack(t, "hedge", r4c.HedgeConfig{Delay: 50 * time.Millisecond, MaxHedges: 2},
		r4c.AdaptiveLimitConfig{InitialLimit: 10})
	var fns asyncFns
	f := p.ExecuteAsync(context.Background(), fns.fn)
	s.clock.Advance(50 * time.Millisecond) // a second attempt
	if fns.n() != 2 || s.limit.InFlight() != 2 {
		t.Fatalf("after the delay: fn ran %d times, %d in flight", fns.n(), s.limit.InFlight())
	}
	fns.call(t, 1).f.Complete("second", nil)
	if v, err := result(t, f); v != "second" || err != nil {
		t.Fatalf("result %q, %v", v, err)
	}
	if _, err := result(t, fns.call(t, 0).f); err != context.Canceled || fns.call(t, 0).ctx.Err() == nil {
		t.Fatal("the losing attempt's future and context are not cancelled")
	}
	if hs := snap(t, s.reg).Hedge("hedge"); hs.Hedges != 1 || hs.HedgeWins != 1 {
		t.Fatalf("hedge snapshot %+v", hs)
	}
	s.idle(t) // the third launch's timer is stopped
}

func TestAsyncHedgeStopsLaunchingWhenTheLimitRejects(t *testing.T) {
	p, s := newStack(t, "hedge-full", r4c.HedgeConfig{Delay: 50 * time.Millisecond, MaxHedges: 3},
		r4c.AdaptiveLimitConfig{InitialLimit: 1, MaxLimit: 1})
	var fns asyncFns
	f := p.ExecuteAsync(context.Background(), fns.fn)
	s.clock.Advance(50 * time.Millisecond) // the second attempt is rejected: no more launches
	if s.clock.Pending() != 0 || fns.n() != 1 {
		t.Fatalf("after a rejected hedge: %d timers, fn ran %d times", s.clock.Pending(), fns.n())
	}
	fns.call(t, 0).f.Complete("first", nil)
	if v, err := result(t, f); v != "first" || err != nil {
		t.Fatalf("result %q, %v", v, err)
	}
	s.idle(t)
}

func TestAsyncRateLimiterWaitIsATimer(t *testing.T) {
	p, s := newStack(t, "rate", r4c.RateLimiterConfig{Limit: 1, Period: time.Second, MaxWait: time.Second})
	var fns asyncFns
	a := p.ExecuteAsync(context.Background(), fns.fn)
	b := p.ExecuteAsync(context.Background(), fns.fn) // waits for the next period's permit
	if fns.n() != 1 || s.rate.Snapshot().Waiting != 1 || s.clock.Pending() != 1 {
		t.Fatalf("fn ran %d times, %d waiting, %d timers", fns.n(), s.rate.Snapshot().Waiting, s.clock.Pending())
	}
	s.clock.Advance(time.Second)
	if fns.n() != 2 {
		t.Fatalf("after the period: fn ran %d times, want the waiting call started in Advance", fns.n())
	}
	fns.call(t, 0).f.Complete("a", nil)
	fns.call(t, 1).f.Complete("b", nil)
	if v, _ := result(t, a); v != "a" {
		t.Fatal(v)
	}
	if v, _ := result(t, b); v != "b" {
		t.Fatal(v)
	}
	s.idle(t)
}

func TestAsyncBulkheadHandsItsSlotToTheNextWaiter(t *testing.T) {
	p, s := newStack(t, "bulkhead", r4c.BulkheadConfig{MaxConcurrent: 1, MaxWait: time.Second})
	var fns asyncFns
	a := p.ExecuteAsync(context.Background(), fns.fn)
	b := p.ExecuteAsync(context.Background(), fns.fn) // queued
	if fns.n() != 1 || s.bulkhead.Snapshot().Waiting != 1 {
		t.Fatalf("fn ran %d times, %d waiting", fns.n(), s.bulkhead.Snapshot().Waiting)
	}
	fns.call(t, 0).f.Complete("a", nil) // hands the slot over: b runs in this goroutine
	if fns.n() != 2 || s.bulkhead.InFlight() != 1 || s.clock.Pending() != 0 {
		t.Fatalf("after the first completed: fn ran %d times, %d in flight, %d timers", fns.n(), s.bulkhead.InFlight(), s.clock.Pending())
	}
	c := p.ExecuteAsync(context.Background(), fns.fn) // queued, and waits too long
	s.clock.Advance(time.Second)
	if _, err := result(t, c); !errors.Is(err, r4c.ErrBulkheadFull) {
		t.Fatalf("after MaxWait: %v, want ErrBulkheadFull", err)
	}
	fns.call(t, 1).f.Complete("b", nil)
	if v, _ := result(t, a); v != "a" {
		t.Fatal(v)
	}
	if v, _ := result(t, b); v != "b" {
		t.Fatal(v)
	}
	if fns.n() != 2 {
		t.Fatalf("fn ran %d times, want 2", fns.n())
	}
	s.idle(t)
}

func TestAsyncBreakerRecordsOutcomesAndOpens(t *testing.T) {
	p, s := newStack(t, "breaker", r4c.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, WaitInOpen: time.Minute})
	var fns asyncFns
	for i := range 2 {
		p.ExecuteAsync(context.Background(), fns.fn)
		fns.call(t, i).f.Complete("", errOverloaded)
	}
	if s.breaker.State() != r4c.CircuitOpen {
		t.Fatalf("state %v after two failures, want open", s.breaker.State())
	}
	f := p.ExecuteAsync(context.Background(), fns.fn)
	if _, err := result(t, f); !errors.Is(err, r4c.ErrCircuitOpen) || fns.n() != 2 {
		t.Fatalf("open breaker: %v, fn ran %d times", err, fns.n())
	}
	s.idle(t)
}

func TestAsyncFallbackReplacesAFailure(t *testing.T) {
	p, s := newStack(t, "fallback", r4c.Fallback(func(_ context.Context, err error) (string, error) {
		return "cached", nil
	}, errOverloaded), r4c.AdaptiveLimitConfig{InitialLimit: 1, MaxLimit: 1})
	var fns asyncFns
	f := p.ExecuteAsync(context.Background(), fns.fn)
	fns.call(t, 0).f.Complete("", errOverloaded)
	if v, err := result(t, f); v != "cached" || err != nil {
		t.Fatalf("%q, %v", v, err)
	}
	p.ExecuteAsync(context.Background(), fns.fn)
	rejected := p.ExecuteAsync(context.Background(), fns.fn) // the limit is full: not in On
	if _, err := result(t, rejected); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("%v", err)
	}
	fns.call(t, 1).f.Complete("x", nil)
	s.idle(t)
}

// Cancellation at every stage ends the call at once: everything freed without a sample, every
// timer stopped, the inner future and the function's context cancelled.
func TestAsyncCancellationAtEveryStage(t *testing.T) {
	type stage struct {
		name  string
		cfgs  []r4c.PolicyConfig
		setup func(t *testing.T, p *r4c.Pipeline[string], s *stack, fns *asyncFns) // brings the call's predecessor to the stage
		runs  int                                                                  // fn calls of the cancelled call before it is cancelled
		extra int                                                                  // samples of the setup in the next window
	}
	limit := r4c.AdaptiveLimitConfig{InitialLimit: 3, MaxLimit: 3}
	stages := []stage{
		{name: "during an attempt", cfgs: []r4c.PolicyConfig{limit, r4c.TimeoutConfig{Timeout: time.Minute}}, runs: 1},
		{name: "waiting for a rate permit", runs: 0, extra: 1,
			cfgs: []r4c.PolicyConfig{r4c.RateLimiterConfig{Limit: 1, Period: time.Second, MaxWait: time.Second}, limit},
			setup: func(t *testing.T, p *r4c.Pipeline[string], s *stack, fns *asyncFns) {
				p.ExecuteAsync(context.Background(), func(context.Context) *r4c.Future[string] { return done("x") })
			}},
		{name: "waiting for a bulkhead slot", runs: 0,
			cfgs: []r4c.PolicyConfig{limit, r4c.TimeoutConfig{Timeout: time.Minute}, r4c.BulkheadConfig{MaxConcurrent: 1, MaxWait: time.Second}},
			setup: func(t *testing.T, p *r4c.Pipeline[string], s *stack, fns *asyncFns) {
				blocker := r4c.NewFuture[string]()
				p.ExecuteAsync(context.Background(), func(context.Context) *r4c.Future[string] { return blocker })
				t.Cleanup(func() { blocker.Complete("", nil) })
			}},
		{name: "during a retry wait", runs: 1,
			cfgs:  []r4c.PolicyConfig{r4c.RetryConfig{MaxAttempts: 2, Wait: time.Second}, limit},
			setup: func(t *testing.T, p *r4c.Pipeline[string], s *stack, fns *asyncFns) {}},
		{name: "during a hedge delay", runs: 1,
			cfgs: []r4c.PolicyConfig{r4c.HedgeConfig{Delay: time.Second}, limit}},
	}
	for _, st := range stages {
		for _, how := range []string{"future", "context"} {
			t.Run(st.name+"/"+how, func(t *testing.T) {
				p, s := newStack(t, "cancel", st.cfgs...)
				if st.setup != nil {
					st.setup(t, p, s, nil)
				}
				inFlight := s.limit.InFlight()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var fns asyncFns
				f := p.ExecuteAsync(ctx, fns.fn)
				if st.name == "during a retry wait" {
					fns.call(t, 0).f.Complete("", errOverloaded) // now waiting to retry
				}
				if fns.n() != st.runs || isDone(f) {
					t.Fatalf("before cancelling: fn ran %d times, done %v", fns.n(), isDone(f))
				}
				if how == "future" {
					if !f.Cancel() {
						t.Fatal("Cancel reported the future done")
					}
				} else {
					cancel()
					select {
					case <-f.Done():
					case <-time.After(10 * time.Second):
						t.Fatal("the caller's cancellation did not end the call")
					}
				}
				if _, err := f.Get(context.Background()); err != context.Canceled {
					t.Fatalf("err %v, want context.Canceled", err)
				}
				if st.runs > 0 && st.name != "during a retry wait" {
					c := fns.call(t, 0)
					if _, err := result(t, c.f); err != context.Canceled || c.ctx.Err() != context.Canceled {
						t.Fatalf("inner future %v, fn's context %v: want both cancelled", err, c.ctx.Err())
					}
				}
				if s.limit.InFlight() != inFlight {
					t.Fatalf("limit: %d in flight, want %d", s.limit.InFlight(), inFlight)
				}
				if s.rate != nil && s.rate.Snapshot().Waiting != 0 {
					t.Fatal("still waiting for a permit")
				}
				if s.bulkhead != nil && s.bulkhead.Snapshot().Waiting != 0 {
					t.Fatal("still waiting for a bulkhead slot")
				}
				// Nothing left to fire: the clock moves far, and nothing runs.
				s.clock.Advance(time.Hour)
				if fns.n() != st.runs {
					t.Fatalf("after cancelling, fn ran again (%d times)", fns.n())
				}
				// And no sample: the next window holds only the next call's.
				mustExecute(t, p, taking(nil, 0, nil))
				if ls := s.limit.Snapshot(); ls.WindowSamples != int64(1+st.extra) {
					t.Fatalf("window samples %d, want the cancelled call not among them", ls.WindowSamples)
				}
			})
		}
	}
}

func done(v string) *r4c.Future[string] {
	f := r4c.NewFuture[string]()
	f.Complete(v, nil)
	return f
}

func TestAsyncPanics(t *testing.T) {
	t.Run("first attempt: re-raised, the slot freed", func(t *testing.T) {
		p, s := newStack(t, "panic", everyPolicy()...)
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Fatalf("recovered %v, want the panic re-raised", r)
				}
			}()
			p.ExecuteAsync(context.Background(), func(context.Context) *r4c.Future[string] { panic("boom") })
		}()
		s.idle(t)
	})
	t.Run("a retry's attempt: a *PanicError", func(t *testing.T) {
		p, s := newStack(t, "panic-retry", r4c.RetryConfig{MaxAttempts: 2, Wait: time.Second}, r4c.AdaptiveLimitConfig{InitialLimit: 1})
		attempts := 0
		f := p.ExecuteAsync(context.Background(), func(context.Context) *r4c.Future[string] {
			if attempts++; attempts == 1 {
				f := r4c.NewFuture[string]()
				f.Complete("", errOverloaded)
				return f
			}
			panic("late boom")
		})
		s.clock.Advance(time.Second)
		var pe *r4c.PanicError
		if _, err := result(t, f); !errors.As(err, &pe) || pe.Value != "late boom" {
			t.Fatalf("err %v, want a *PanicError", err)
		}
		s.idle(t)
	})
	t.Run("Go: a *PanicError, and runtime.Goexit fails the future", func(t *testing.T) {
		p, s := newStack(t, "panic-go", r4c.RetryConfig{MaxAttempts: 3, Wait: time.Second}, r4c.AdaptiveLimitConfig{InitialLimit: 1})
		f := p.Go(context.Background(), func(context.Context) (string, error) { panic("go boom") })
		<-f.Done()
		var pe *r4c.PanicError
		if _, err := f.Get(context.Background()); !errors.As(err, &pe) {
			t.Fatalf("err %v, want a *PanicError, not retried", err)
		}
		g := p.Go(context.Background(), func(context.Context) (string, error) { runtime.Goexit(); return "", nil })
		<-g.Done()
		if _, err := g.Get(context.Background()); err == nil {
			t.Fatal("a Goexit completed the future without an error")
		}
		s.idle(t)
	})
}

func TestAsyncNilInnerFutureFailsTheAttempt(t *testing.T) {
	p, s := newStack(t, "nil", r4c.RetryConfig{MaxAttempts: 2, Wait: time.Second}, r4c.AdaptiveLimitConfig{InitialLimit: 1})
	attempts := 0
	f := p.ExecuteAsync(context.Background(), func(context.Context) *r4c.Future[string] {
		if attempts++; attempts == 1 {
			return nil
		}
		return done("second")
	})
	s.clock.Advance(time.Second)
	if v, err := result(t, f); v != "second" || err != nil || attempts != 2 {
		t.Fatalf("%q, %v after %d attempts; want the nil future retried", v, err, attempts)
	}
	s.idle(t)
}

// snap reads the snapshot of one policy.
type snapshots struct {
	t   *testing.T
	reg *r4c.Registry
}

func snap(t *testing.T, r *r4c.Registry) snapshots { return snapshots{t, r} }

func (s snapshots) Retry(id string) r4c.RetrySnapshot {
	h, err := s.reg.Retry(id)
	if err != nil {
		s.t.Fatal(err)
	}
	return h.Snapshot()
}

func (s snapshots) Hedge(id string) r4c.HedgeSnapshot {
	h, err := s.reg.Hedge(id)
	if err != nil {
		s.t.Fatal(err)
	}
	return h.Snapshot()
}

// 2000 pending calls through the full stack hold no goroutine each.
func TestAsyncPendingCallsHoldNoGoroutine(t *testing.T) {
	reg, _ := stackRegistry(t)
	cfgs := everyPolicy()
	cfgs[3] = r4c.AdaptiveLimitConfig{InitialLimit: 2000, MaxLimit: 2000}
	cfgs[2] = r4c.RateLimiterConfig{Limit: 5000, Period: time.Second}
	cfgs[5] = r4c.BulkheadConfig{MaxConcurrent: 2000}
	p := newPipeline[string](t, reg, "pending", cfgs...)
	before := runtime.NumGoroutine()
	var fns asyncFns
	futures := make([]*r4c.Future[string], 2000)
	for i := range futures {
		futures[i] = p.ExecuteAsync(context.Background(), fns.fn)
	}
	during := runtime.NumGoroutine()
	if during-before > 10 {
		t.Fatalf("%d goroutines before, %d with 2000 calls pending", before, during)
	}
	for i := range futures {
		fns.call(t, i).f.Complete(fmt.Sprint(i), nil)
		if v, err := result(t, futures[i]); v != fmt.Sprint(i) || err != nil {
			t.Fatalf("call %d: %q, %v", i, v, err)
		}
	}
}

// Many goroutines complete, cancel and time out calls at once: the limit is never exceeded,
// every slot comes back, every returned future completes once.
func TestAsyncHammer(t *testing.T) {
	reg, clock := stackRegistry(t)
	const limit = 8
	p := newPipeline[int](t, reg, "hammer",
		r4c.RetryConfig{MaxAttempts: 2, Wait: time.Millisecond},
		r4c.HedgeConfig{Delay: 2 * time.Millisecond},
		r4c.AdaptiveLimitConfig{InitialLimit: limit, MinLimit: limit, MaxLimit: limit},
		r4c.TimeoutConfig{Timeout: 5 * time.Millisecond},
		r4c.BulkheadConfig{MaxConcurrent: limit / 2, MaxWait: time.Millisecond})
	h := handle(t, reg, "hammer")
	var over atomic.Bool
	stop := make(chan struct{})
	var ticker sync.WaitGroup
	ticker.Add(1)
	go func() { // the clock moves on its own: timers fire on this goroutine
		defer ticker.Done()
		for {
			select {
			case <-stop:
				return
			default:
				clock.Advance(time.Millisecond)
				runtime.Gosched()
			}
		}
	}()
	var wg sync.WaitGroup
	var completed atomic.Int64
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				ctx, cancel := context.WithCancel(context.Background())
				f := p.ExecuteAsync(ctx, func(ctx context.Context) *r4c.Future[int] {
					if h.InFlight() > limit {
						over.Store(true)
					}
					inner := r4c.NewFuture[int]()
					switch (g + i) % 4 {
					case 0:
						inner.Complete(i, nil)
					case 1:
						go inner.Complete(i, errOverloaded)
					case 2:
						go func() { <-ctx.Done(); inner.Complete(0, ctx.Err()) }() // times out
					}
					return inner // case 3: never completed, cancelled below
				})
				var once atomic.Int32
				done := make(chan struct{})
				go func() { <-f.Done(); once.Add(1); close(done) }()
				if i%3 == 0 {
					cancel()
					f.Cancel()
				}
				<-done
				cancel()
				if once.Load() != 1 {
					t.Error("a future completed more than once")
				}
				completed.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stop)
	ticker.Wait()
	clock.Advance(time.Second)
	if over.Load() {
		t.Fatal("the limit was exceeded")
	}
	if h.InFlight() != 0 || clock.Pending() != 0 {
		t.Fatalf("after the hammer: %d in flight, %d timers pending", h.InFlight(), clock.Pending())
	}
	if b, _ := reg.Bulkhead("hammer"); b.InFlight() != 0 || b.Snapshot().Waiting != 0 {
		t.Fatalf("bulkhead: %d in flight, %d waiting", b.InFlight(), b.Snapshot().Waiting)
	}
}

// The composition rules in async form: a full bulkhead inside the limit is a drop, as a timeout is; the
// caller's own cancellation is never a sample, never a breaker outcome, never retried.
func TestAsyncCompositionRules(t *testing.T) {
	t.Run("a full bulkhead inside is a drop", func(t *testing.T) {
		p, s := newStack(t, "bulkhead-drop", r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, InitialLimit: 10},
			r4c.BulkheadConfig{MaxConcurrent: 1})
		var fns asyncFns
		p.ExecuteAsync(context.Background(), fns.fn) // holds the bulkhead
		s.clock.Advance(time.Second)                 // the window is over: the next call ends it
		rejected := p.ExecuteAsync(context.Background(), fns.fn)
		if _, err := result(t, rejected); !errors.Is(err, r4c.ErrBulkheadFull) {
			t.Fatalf("%v, want ErrBulkheadFull", err)
		}
		if got := s.limit.Limit(); got != 9 {
			t.Fatalf("limit %d after a window with a full bulkhead, want 9 (a drop: AIMD backed off)", got)
		}
		fns.call(t, 0).f.Complete("", nil)
		s.idle(t)
	})
	t.Run("the caller's cancellation teaches nothing", func(t *testing.T) {
		p, s := newStack(t, "caller-cancel", r4c.RetryConfig{MaxAttempts: 3, Wait: time.Second},
			r4c.CircuitBreakerConfig{SlidingWindowSize: 1, MinimumCalls: 1}, r4c.AdaptiveLimitConfig{InitialLimit: 4})
		ctx, cancel := context.WithCancel(context.Background())
		var fns asyncFns
		f := p.ExecuteAsync(ctx, fns.fn)
		cancel()
		// The function sees its context cancelled, and fails with the context's error.
		<-fns.call(t, 0).ctx.Done()
		fns.call(t, 0).f.Complete("", context.Canceled)
		<-f.Done()
		if _, err := f.Get(context.Background()); !errors.Is(err, context.Canceled) {
			t.Fatalf("%v", err)
		}
		s.clock.Advance(time.Hour)
		if fns.n() != 1 {
			t.Fatalf("fn ran %d times: the cancellation was retried", fns.n())
		}
		if bs := s.breaker.Snapshot(); bs.BufferedCalls != 0 || bs.State != r4c.CircuitClosed {
			t.Fatalf("breaker recorded the cancellation: %+v", bs)
		}
		mustExecute(t, p, taking(nil, 0, nil))
		if ls := s.limit.Snapshot(); ls.WindowSamples != 1 {
			t.Fatalf("window samples %d, want only the next call's", ls.WindowSamples)
		}
		s.idle(t)
	})
}

// A call whose context is done already fails at once: the function is not started, nothing is
// taken (100 such calls through a limit of 1 run nothing).
func TestAsyncWithADoneContextStartsNothing(t *testing.T) {
	p, s := newStack(t, "done-ctx", r4c.RetryConfig{MaxAttempts: 3, Wait: time.Second}, r4c.AdaptiveLimitConfig{InitialLimit: 1, MaxLimit: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var ran atomic.Int32
	for range 100 {
		g := p.Go(ctx, func(context.Context) (string, error) { ran.Add(1); return "", nil })
		e := p.ExecuteAsync(ctx, func(context.Context) *r4c.Future[string] { ran.Add(1); return done("") })
		for _, f := range []*r4c.Future[string]{g, e} {
			if _, err := result(t, f); err != context.Canceled {
				t.Fatalf("%v, want context.Canceled at once", err)
			}
		}
	}
	if ran.Load() != 0 {
		t.Fatalf("the function ran %d times", ran.Load())
	}
	s.idle(t)
}

// Completing the returned future by its holder ends the call as Cancel does, with the holder's
// result: the function's future and context are cancelled and the slot freed without a sample.
func TestAsyncCompletingTheReturnedFutureEndsTheCall(t *testing.T) {
	p, s := newStack(t, "holder", r4c.AdaptiveLimitConfig{InitialLimit: 1, MaxLimit: 1}, r4c.TimeoutConfig{Timeout: time.Minute})
	var fns asyncFns
	f := p.ExecuteAsync(context.Background(), fns.fn)
	if !f.Complete("mine", nil) {
		t.Fatal("Complete refused")
	}
	if v, err := result(t, f); v != "mine" || err != nil {
		t.Fatalf("%q, %v", v, err)
	}
	c := fns.call(t, 0)
	if _, err := result(t, c.f); err != context.Canceled || c.ctx.Err() != context.Canceled {
		t.Fatal("the function's future and context are not cancelled")
	}
	mustExecute(t, p, taking(nil, 0, nil)) // the slot is free
	s.idle(t)
}
