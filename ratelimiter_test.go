package r4c_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// rlHandle returns the rate limiter instance id of reg.
func rlHandle(t *testing.T, reg *r4c.Registry, id string) *r4c.RateLimiterHandle {
	t.Helper()
	h, err := reg.RateLimiter(id)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// rlCall runs one call through p in the calling goroutine and reports whether its function ran.
func rlCall(p *r4c.Pipeline[string]) (ran bool, err error) {
	_, err = p.Execute(context.Background(), func(context.Context) (string, error) { ran = true; return "ok", nil })
	return ran, err
}

func rlExpectAdmitted(t *testing.T, p *r4c.Pipeline[string], what string) {
	t.Helper()
	if ran, err := rlCall(p); err != nil || !ran {
		t.Fatalf("%s: ran %v, err %v; want admitted", what, ran, err)
	}
}

func rlExpectRejected(t *testing.T, p *r4c.Pipeline[string], what string) {
	t.Helper()
	ran, err := rlCall(p)
	if ran {
		t.Fatalf("%s: the rejected call ran its function", what)
	}
	if !errors.Is(err, r4c.ErrRateLimited) {
		t.Fatalf("%s: err = %v, want ErrRateLimited", what, err)
	}
	var rl *r4c.RateLimitedError
	if !errors.As(err, &rl) || rl.InstanceID() != p.ID() {
		t.Fatalf("%s: err = %#v, want *RateLimitedError for %q", what, err, p.ID())
	}
}

// rlWaiter is a call running in its own goroutine.
type rlWaiter struct {
	cancel context.CancelFunc
	ranAt  chan time.Duration // the clock's reading (since the epoch) when the function ran
	done   chan error
}

// rlStart starts a call through p in a new goroutine and waits until it has either finished or
// scheduled its timer, so that it has taken its place (permit, reservation or rejection).
func rlStart(t *testing.T, p *r4c.Pipeline[string], clock *r4ctest.ManualClock, pendingAfterWait int) *rlWaiter {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &rlWaiter{cancel: cancel, ranAt: make(chan time.Duration, 1), done: make(chan error, 1)}
	go func() {
		_, err := p.Execute(ctx, func(context.Context) (string, error) {
			w.ranAt <- time.Duration(clock.Nanotime())
			return "ok", nil
		})
		w.done <- err
	}()
	if err := clock.WaitPending(t.Context(), pendingAfterWait); err != nil {
		t.Fatal(err)
	}
	return w
}

// result waits for the call to end and returns its error and when its function ran (-1: never).
func (w *rlWaiter) result(t *testing.T) (error, time.Duration) {
	t.Helper()
	select {
	case err := <-w.done:
		select {
		case at := <-w.ranAt:
			return err, at
		default:
			return err, -1
		}
	case <-t.Context().Done():
		t.Fatal("the call did not end")
		return nil, 0
	}
}

func (w *rlWaiter) expectWaiting(t *testing.T) {
	t.Helper()
	select {
	case err := <-w.done:
		t.Fatalf("the call ended (%v) while it should wait", err)
	default:
	}
}

func rlExpectSnapshot(t *testing.T, h *r4c.RateLimiterHandle, available, waiting int, rejected int64) {
	t.Helper()
	s := h.Snapshot()
	if s.AvailablePermits != available || s.Waiting != waiting || s.Rejected != rejected {
		t.Fatalf("snapshot: available %d, waiting %d, rejected %d; want %d, %d, %d",
			s.AvailablePermits, s.Waiting, s.Rejected, available, waiting, rejected)
	}
}

func TestRateLimiterGrantsLimitPerPeriodThenRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limit  int
		period time.Duration
		// createdAt: how far the clock has moved before the instance is created; periods start
		// at creation.
		createdAt time.Duration
	}{
		{"one per second", 1, time.Second, 0},
		{"three per 100ms", 3, 100 * time.Millisecond, 0},
		{"five per second, created late", 5, time.Second, 250 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, clock := newRegistry(t)
			clock.Advance(tc.createdAt)
			p := newPipeline[string](t, reg, "api", r4c.RateLimiterConfig{Limit: tc.limit, Period: tc.period})
			h := rlHandle(t, reg, "api")
			for period := range 3 {
				for i := range tc.limit {
					rlExpectAdmitted(t, p, fmt.Sprintf("period %d, call %d", period, i))
				}
				rlExpectRejected(t, p, fmt.Sprintf("period %d, call %d", period, tc.limit))
				clock.Advance(tc.period - 1) // one nanosecond before the next period
				rlExpectRejected(t, p, fmt.Sprintf("period %d, last nanosecond", period))
				rlExpectSnapshot(t, h, 0, 0, int64(2*(period+1)))
				clock.Advance(1) // exactly start + (period+1)*Period: a fresh period
				rlExpectSnapshot(t, h, tc.limit, 0, int64(2*(period+1)))
			}
			if clock.Pending() != 0 {
				t.Fatalf("%d timers pending", clock.Pending())
			}
		})
	}
}

func TestRateLimiterUnusedPermitsDoNotAccumulate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		used  int           // permits used in the first period
		idle  time.Duration // then the clock moves this far
		limit int
	}{
		{"idle for five periods", 0, 5 * time.Second, 3},
		{"partly used, next period", 1, time.Second, 3},
		{"partly used, idle long", 2, time.Hour + 500*time.Millisecond, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, clock := newRegistry(t)
			p := newPipeline[string](t, reg, "api", r4c.RateLimiterConfig{Limit: tc.limit, Period: time.Second})
			for range tc.used {
				rlExpectAdmitted(t, p, "first period")
			}
			clock.Advance(tc.idle)
			rlExpectSnapshot(t, rlHandle(t, reg, "api"), tc.limit, 0, 0)
			for i := range tc.limit {
				rlExpectAdmitted(t, p, fmt.Sprintf("call %d", i))
			}
			rlExpectRejected(t, p, "over the limit")
		})
	}
}

func TestRateLimiterWaitsForTheNextPeriod(t *testing.T) {
	for _, tc := range []struct {
		name    string
		at      time.Duration // when in the first period the waiting call arrives
		maxWait time.Duration
		wait    time.Duration // the exact wait expected; 0: rejected at once
	}{
		{"wait shorter than MaxWait", 300 * time.Millisecond, time.Second, 700 * time.Millisecond},
		{"wait equal to MaxWait", 300 * time.Millisecond, 700 * time.Millisecond, 700 * time.Millisecond},
		{"last nanosecond of the period", time.Second - 1, time.Millisecond, 1},
		{"wait longer than MaxWait", 300 * time.Millisecond, 700*time.Millisecond - 1, 0},
		{"at the period's start", 0, 500 * time.Millisecond, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, clock := newRegistry(t)
			p := newPipeline[string](t, reg, "api", r4c.RateLimiterConfig{Limit: 1, Period: time.Second, MaxWait: tc.maxWait})
			h := rlHandle(t, reg, "api")
			rlExpectAdmitted(t, p, "first call")
			clock.Advance(tc.at)
			if tc.wait == 0 {
				rlExpectRejected(t, p, "second call")
				if clock.Pending() != 0 {
					t.Fatalf("a rejected call left %d timers", clock.Pending())
				}
				rlExpectSnapshot(t, h, 0, 0, 1) // nothing reserved
				return
			}
			w := rlStart(t, p, clock, 1)
			w.expectWaiting(t)
			rlExpectSnapshot(t, h, -1, 1, 0)
			clock.Advance(tc.wait - 1)
			if clock.Pending() != 1 {
				t.Fatal("the timer fired before the next period")
			}
			w.expectWaiting(t)
			clock.Advance(1)
			err, ranAt := w.result(t)
			if err != nil || ranAt != time.Second {
				t.Fatalf("waiting call: err %v, ran at %v; want nil at 1s", err, ranAt)
			}
			rlExpectSnapshot(t, h, 0, 0, 0) // the reserved permit is the new period's
		})
	}
}

func TestRateLimiterReservationsAreServedByPeriod(t *testing.T) {
	const limit, period = 2, time.Second
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "api", r4c.RateLimiterConfig{Limit: limit, Period: period, MaxWait: 3 * period})
	h := rlHandle(t, reg, "api")
	clock.Advance(400 * time.Millisecond)
	rlExpectAdmitted(t, p, "first")
	rlExpectAdmitted(t, p, "second")
	// Six waiters, in order: two per period for periods 1, 2 and 3.
	var waiters []*rlWaiter
	for i := range 3 * limit {
		waiters = append(waiters, rlStart(t, p, clock, i+1))
		rlExpectSnapshot(t, h, -(i + 1), i+1, 0)
	}
	// Period 4 starts 3.6s away, beyond MaxWait: rejected without a reservation.
	rlExpectRejected(t, p, "seventh waiter")
	rlExpectSnapshot(t, h, -3*limit, 3*limit, 1)
	for n := 1; n <= 3; n++ {
		clock.Advance(time.Duration(n)*period - time.Duration(clock.Nanotime())) // to the start of period n
		for i, w := range waiters {
			if i/limit+1 > n {
				w.expectWaiting(t)
				continue
			}
			if i/limit+1 < n {
				continue
			}
			err, ranAt := w.result(t)
			if err != nil || ranAt != time.Duration(n)*period {
				t.Fatalf("waiter %d: err %v, ran at %v; want period %d (%v)", i, err, ranAt, n, time.Duration(n)*period)
			}
		}
		if want := (3 - n) * limit; clock.Pending() != want {
			t.Fatalf("period %d: %d timers pending, want %d", n, clock.Pending(), want)
		}
		rlExpectSnapshot(t, h, -(3-n)*limit, (3-n)*limit, 1) // period n is taken by its reservations
	}
}

// stuckClock is a manual clock whose timers never fire, so that a test can move the clock
// into and past a waiter's period while the waiter still waits.
type stuckClock struct{ *r4ctest.ManualClock }

func (c stuckClock) NewTimer(time.Duration) r4c.Timer {
	return c.ManualClock.NewTimer(math.MaxInt64 / 2)
}

func TestRateLimiterCancelledWaitGivesThePermitBack(t *testing.T) {
	const period = time.Second
	cfg := r4c.RateLimiterConfig{Limit: 1, Period: period, MaxWait: 2 * period}

	t.Run("before its period: a later caller takes it", func(t *testing.T) {
		reg, clock := newRegistry(t)
		p := newPipeline[string](t, reg, "api", cfg)
		h := rlHandle(t, reg, "api")
		rlExpectAdmitted(t, p, "first")
		a := rlStart(t, p, clock, 1) // period 1
		b := rlStart(t, p, clock, 2) // period 2
		rlExpectSnapshot(t, h, -2, 2, 0)
		a.cancel()
		if err, ranAt := a.result(t); !errors.Is(err, context.Canceled) || ranAt != -1 {
			t.Fatalf("cancelled waiter: err %v, ran at %v; want context.Canceled, not run", err, ranAt)
		}
		rlExpectSnapshot(t, h, -1, 1, 0)
		if clock.Pending() != 1 {
			t.Fatalf("%d timers pending: the cancelled waiter's timer was not stopped", clock.Pending())
		}
		c := rlStart(t, p, clock, 2) // takes the hole in period 1, ahead of b
		clock.Advance(period)
		if err, ranAt := c.result(t); err != nil || ranAt != period {
			t.Fatalf("c: err %v, ran at %v; want nil at 1s", err, ranAt)
		}
		b.expectWaiting(t)
		clock.Advance(period)
		if err, ranAt := b.result(t); err != nil || ranAt != 2*period {
			t.Fatalf("b: err %v, ran at %v; want nil at 2s", err, ranAt)
		}
		rlExpectSnapshot(t, h, 0, 0, 0) // period 2 is b's
	})

	t.Run("the last reservation", func(t *testing.T) {
		reg, clock := newRegistry(t)
		p := newPipeline[string](t, reg, "api", cfg)
		h := rlHandle(t, reg, "api")
		rlExpectAdmitted(t, p, "first")
		a := rlStart(t, p, clock, 1)
		a.cancel()
		if err, _ := a.result(t); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
		rlExpectSnapshot(t, h, 0, 0, 0)
		clock.Advance(period)
		rlExpectAdmitted(t, p, "period 1 is free again")
		rlExpectSnapshot(t, h, 0, 0, 0)
	})

	t.Run("in its period: free again at once", func(t *testing.T) {
		clock := stuckClock{r4ctest.NewManualClock()}
		reg, err := r4c.NewRegistry(r4c.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		p := newPipeline[string](t, reg, "api", cfg)
		h := rlHandle(t, reg, "api")
		rlExpectAdmitted(t, p, "first")
		a := rlStart(t, p, clock.ManualClock, 1)
		clock.Advance(period) // period 1 has begun; its permit is a's
		rlExpectSnapshot(t, h, 0, 1, 0)
		a.cancel()
		if err, _ := a.result(t); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
		rlExpectSnapshot(t, h, 1, 0, 0)
		rlExpectAdmitted(t, p, "a's permit")
		rlExpectSnapshot(t, h, 0, 0, 0)
	})

	t.Run("after its period: expired", func(t *testing.T) {
		clock := stuckClock{r4ctest.NewManualClock()}
		reg, err := r4c.NewRegistry(r4c.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		p := newPipeline[string](t, reg, "api", cfg)
		h := rlHandle(t, reg, "api")
		rlExpectAdmitted(t, p, "first")
		a := rlStart(t, p, clock.ManualClock, 1)
		clock.Advance(2 * period) // period 1 is over
		a.cancel()
		if err, _ := a.result(t); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
		rlExpectSnapshot(t, h, 1, 0, 0)
		rlExpectAdmitted(t, p, "period 2")
		rlExpectSnapshot(t, h, 0, 0, 0) // nothing carried over
	})

	t.Run("context done before the call", func(t *testing.T) {
		reg, clock := newRegistry(t)
		p := newPipeline[string](t, reg, "api", cfg)
		h := rlHandle(t, reg, "api")
		rlExpectAdmitted(t, p, "first")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ran := false
		_, err := p.Execute(ctx, func(context.Context) (string, error) { ran = true; return "", nil })
		if !errors.Is(err, context.Canceled) || ran {
			t.Fatalf("err %v, ran %v; want context.Canceled without running", err, ran)
		}
		if clock.Pending() != 0 {
			t.Fatalf("%d timers pending", clock.Pending())
		}
		rlExpectSnapshot(t, h, 0, 0, 0) // no reservation, not a rejection
	})
}

func TestRateLimiterEventsAndSnapshot(t *testing.T) {
	var mu sync.Mutex
	var events []r4c.Event
	reg, clock := newRegistry(t, r4c.WithObserver(func(e r4c.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}))
	p := newPipeline[string](t, reg, "api", r4c.RateLimiterConfig{Limit: 2, Period: time.Minute, MaxWait: time.Minute})
	h := rlHandle(t, reg, "api")
	rlExpectAdmitted(t, p, "first")
	rlExpectAdmitted(t, p, "second")
	w1 := rlStart(t, p, clock, 1) // waits 60s for period 1: no event
	clock.Advance(30 * time.Second)
	w2 := rlStart(t, p, clock, 2) // waits 30s for period 1's other permit
	mu.Lock()
	if len(events) != 0 {
		t.Fatalf("admitted and waiting calls published %v", events)
	}
	mu.Unlock()
	_, err1 := rlCall(p) // period 2 starts 90s away
	_, err2 := rlCall(p)
	if err1 != err2 {
		t.Fatal("the rejection is not preallocated")
	}
	mu.Lock()
	got := append([]r4c.Event(nil), events...)
	mu.Unlock()
	want := r4c.Event{Type: r4c.EventRejected, Kind: r4c.KindRateLimiter, Instance: "api"}
	if len(got) != 2 || got[0] != want || got[1] != want {
		t.Fatalf("events %+v, want two of %+v", got, want)
	}
	if err1.Error() != `r4c: rate limiter "api" has no permit: 2 calls per 1m0s` {
		t.Fatalf("message %q", err1)
	}
	want2 := r4c.RateLimiterSnapshot{ID: "api", Enabled: true, Limit: 2, Period: time.Minute, MaxWait: time.Minute,
		AvailablePermits: -2, Waiting: 2, Rejected: 2}
	if s := h.Snapshot(); s != want2 {
		t.Fatalf("snapshot %+v, want %+v", s, want2)
	}
	if all := reg.Snapshot().RateLimiters; len(all) != 1 || all[0] != want2 {
		t.Fatalf("registry snapshot %+v", all)
	}
	clock.Advance(30 * time.Second)
	for _, w := range []*rlWaiter{w1, w2} {
		if err, ranAt := w.result(t); err != nil || ranAt != time.Minute {
			t.Fatalf("waiter: err %v, ran at %v", err, ranAt)
		}
	}
	want2.AvailablePermits, want2.Waiting = 0, 0
	if s := h.Snapshot(); s != want2 {
		t.Fatalf("snapshot %+v, want %+v", s, want2)
	}
}

func TestRateLimiterDisabled(t *testing.T) {
	reg, _ := newRegistry(t)
	p := newPipeline[string](t, reg, "api", r4c.RateLimiterConfig{Limit: 1, Enabled: r4c.Off})
	for i := range 5 {
		rlExpectAdmitted(t, p, fmt.Sprintf("call %d", i))
	}
	if s := rlHandle(t, reg, "api").Snapshot(); s.Enabled || s.AvailablePermits != 1 || s.Rejected != 0 {
		t.Fatalf("snapshot %+v", s)
	}
}

func TestRateLimiterAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	fn := func(context.Context) (string, error) { return "", nil }
	reg, _ := newRegistry(t)
	admit := newPipeline[string](t, reg, "admit", r4c.RateLimiterConfig{Limit: math.MaxInt32})
	if a := testing.AllocsPerRun(1000, func() {
		if _, err := admit.Execute(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Fatalf("%v allocs per admitted call", a)
	}
	for _, maxWait := range []time.Duration{r4c.NoWait, 100 * time.Millisecond} {
		reject := newPipeline[string](t, reg, fmt.Sprintf("reject-%v", maxWait), r4c.RateLimiterConfig{Limit: 1, MaxWait: maxWait})
		rlExpectAdmitted(t, reject, "the one permit")
		if a := testing.AllocsPerRun(1000, func() {
			if _, err := reject.Execute(ctx, fn); !errors.Is(err, r4c.ErrRateLimited) {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Fatalf("MaxWait %v: %v allocs per rejection", maxWait, a)
		}
	}
}

// TestRateLimiterHammerWithWaits releases many goroutines at once on a limiter that reserves up
// to three periods ahead, then walks the clock through those periods: exactly Limit calls
// start in each period, at its start, and the rest are rejected.
func TestRateLimiterHammerWithWaits(t *testing.T) {
	const (
		goroutines = 64
		limit      = 4
		ahead      = 3 // periods reachable within MaxWait
		period     = time.Second
		rounds     = 3
	)
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "api", r4c.RateLimiterConfig{Limit: limit, Period: period, MaxWait: ahead * period})
	h := rlHandle(t, reg, "api")
	var mu sync.Mutex
	started := map[int64]int{} // by period
	fn := func(context.Context) (string, error) {
		n := clock.Nanotime()
		mu.Lock()
		started[n/int64(period)]++
		mu.Unlock()
		return "ok", nil
	}
	for round := range rounds {
		first := int64(round * (ahead + 1)) // the period this round starts in
		results := make(chan error, goroutines)
		gate := make(chan struct{})
		for range goroutines {
			go func() {
				<-gate
				_, err := p.Execute(context.Background(), fn)
				results <- err
			}()
		}
		close(gate)
		admitted, rejected := 0, 0
		count := func(n int) {
			for range n {
				select {
				case err := <-results:
					switch {
					case err == nil:
						admitted++
					case errors.Is(err, r4c.ErrRateLimited):
						rejected++
					default:
						t.Fatal(err)
					}
				case <-t.Context().Done():
					t.Fatal("calls did not end")
				}
			}
		}
		count(goroutines - limit*ahead) // every call that does not wait
		if err := clock.WaitPending(t.Context(), limit*ahead); err != nil {
			t.Fatal(err)
		}
		if admitted != limit || rejected != goroutines-limit*(ahead+1) {
			t.Fatalf("round %d: %d admitted at once, %d rejected", round, admitted, rejected)
		}
		rlExpectSnapshot(t, h, -limit*ahead, limit*ahead, int64((round+1)*rejected))
		for k := 1; k <= ahead; k++ {
			clock.Advance(period)
			count(limit)
			if want := limit * (ahead - k); clock.Pending() != want {
				t.Fatalf("round %d, period %d: %d timers pending, want %d", round, k, clock.Pending(), want)
			}
		}
		if admitted != limit*(ahead+1) {
			t.Fatalf("round %d: %d admitted", round, admitted)
		}
		clock.Advance(period) // a fresh period for the next round
		mu.Lock()
		for k := first; k <= first+ahead; k++ {
			if started[k] != limit {
				t.Fatalf("round %d: %d calls started in period %d, want %d (%v)", round, started[k], k, limit, started)
			}
		}
		mu.Unlock()
	}
}

// TestRateLimiterHammerWhileTheClockMoves hammers a rejecting limiter from many goroutines
// while another advances the clock in steps that do not divide the period: no period ever
// starts more than Limit calls. Callers hold a read lock across a call and the clock moves
// under the write lock, so each call runs in the period it was admitted in.
func TestRateLimiterHammerWhileTheClockMoves(t *testing.T) {
	const (
		goroutines = 16
		calls      = 300 // per goroutine
		limit      = 5
		period     = 10 * time.Millisecond
		step       = 3 * time.Millisecond
	)
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "api", r4c.RateLimiterConfig{Limit: limit, Period: period})
	h := rlHandle(t, reg, "api")
	var (
		moving  sync.RWMutex
		mu      sync.Mutex
		started = map[int64]int{}
		refused atomic.Int64
	)
	fn := func(context.Context) (string, error) {
		k := clock.Nanotime() / int64(period)
		mu.Lock()
		started[k]++
		mu.Unlock()
		return "ok", nil
	}
	stop := make(chan struct{})
	// Every caller makes half its calls, then waits until the clock has moved more than a
	// period past the moment they all had: the two halves start in different periods however
	// the scheduler runs the driver (on a busy machine the callers could all finish before it
	// first ran).
	var atHalf atomic.Int64
	crossed := make(chan struct{})
	var driver sync.WaitGroup
	driver.Go(func() {
		moved := time.Duration(-1) // since every caller reached its half; -1: not yet
		for {
			select {
			case <-stop:
				return
			default:
			}
			moving.Lock()
			clock.Advance(step)
			moving.Unlock()
			switch {
			case moved < 0 && atHalf.Load() == goroutines:
				moved = 0
			case moved >= 0 && moved <= period:
				if moved += step; moved > period {
					close(crossed)
				}
			}
		}
	})
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for i := range calls {
				if i == calls/2 {
					atHalf.Add(1)
					<-crossed
				}
				moving.RLock()
				_, err := p.Execute(context.Background(), fn)
				moving.RUnlock()
				if errors.Is(err, r4c.ErrRateLimited) {
					refused.Add(1)
				} else if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	driver.Wait()
	if len(started) < 2 {
		t.Fatalf("calls started in %d periods: the clock did not move during the calls", len(started))
	}
	total := 0
	for k, n := range started {
		if n > limit {
			t.Errorf("period %d started %d calls, limit %d", k, n, limit)
		}
		total += n
	}
	if total+int(refused.Load()) != goroutines*calls || h.Snapshot().Rejected != refused.Load() {
		t.Fatalf("%d started + %d rejected != %d calls (snapshot says %d rejected)",
			total, refused.Load(), goroutines*calls, h.Snapshot().Rejected)
	}
}

// A rate limiter grants Limit calls per Period, counted from its creation; with a manual clock
// the periods move only when the test says so.
func ExampleRateLimiterConfig() {
	clock := r4ctest.NewManualClock()
	reg, _ := r4c.NewRegistry(r4c.WithClock(clock))
	p, _ := r4c.NewPipeline[string](reg, "geocode", r4c.RateLimiterConfig{Limit: 2, Period: time.Second})
	call := func() {
		_, err := p.Execute(context.Background(), func(context.Context) (string, error) { return "ok", nil })
		fmt.Println(err)
	}
	call()
	call()
	call() // the period's two permits are spent
	clock.Advance(time.Second)
	call() // a new period
	rl, _ := reg.RateLimiter("geocode")
	s := rl.Snapshot()
	fmt.Println(s.AvailablePermits, s.Rejected)
	// Output:
	// <nil>
	// <nil>
	// r4c: rate limiter "geocode" has no permit: 2 calls per 1s
	// <nil>
	// 1 1
}
