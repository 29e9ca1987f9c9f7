package r4c_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// Waiting for a slot of the adaptive limit (MaxWait, MaxWaiting, priorities), on the manual
// clock.

// waitLimit is a pipeline with a fixed limit of n and a MaxWait, its handle, and the clock.
func waitLimit(t *testing.T, n int, cfg r4c.AdaptiveLimitConfig) (*r4c.Pipeline[string], *r4c.AdaptiveLimitHandle, *r4ctest.ManualClock) {
	t.Helper()
	reg, clock := newRegistry(t)
	cfg.InitialLimit, cfg.MinLimit, cfg.MaxLimit = n, n, n
	if cfg.MaxWait == 0 {
		cfg.MaxWait = 10 * time.Second
	}
	p := newPipeline[string](t, reg, "w", cfg)
	return p, handle(t, reg, "w"), clock
}

// waitUntil yields until cond holds: for goroutines to reach the queue.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		runtime.Gosched()
	}
}

// waiter starts a call through p with priority prio that records name in order when it runs;
// it returns the call's error on done. It returns once the call waits (waiting reaches want).
type order struct {
	mu    sync.Mutex
	names []string
}

func (o *order) add(name string) { o.mu.Lock(); o.names = append(o.names, name); o.mu.Unlock() }
func (o *order) get() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.names...)
}

func startWaiter(t *testing.T, p *r4c.Pipeline[string], h *r4c.AdaptiveLimitHandle, o *order, name string, prio r4c.Priority, want int) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := p.Execute(r4c.WithPriority(context.Background(), prio), func(context.Context) (string, error) {
			o.add(name)
			return "ok", nil
		})
		done <- err
	}()
	waitUntil(t, name+" waits", func() bool { return h.Snapshot().Waiting == want })
	return done
}

func TestWaitersAreAdmittedByPriorityThenInArrivalOrder(t *testing.T) {
	p, h, _ := waitLimit(t, 1, r4c.AdaptiveLimitConfig{MaxWaiting: 10})
	held := acquire(t, h)
	var o order
	var done []<-chan error
	for i, w := range []struct {
		name string
		prio r4c.Priority
	}{{"low1", r4c.PriorityLow}, {"normal1", r4c.PriorityNormal}, {"low2", r4c.PriorityLow}, {"high", r4c.PriorityHigh}, {"normal2", r4c.PriorityNormal}, {"critical", r4c.PriorityCritical}} {
		done = append(done, startWaiter(t, p, h, &o, w.name, w.prio, i+1))
	}
	held.Success() // each call, as it ends, hands its slot to the next
	for _, d := range done {
		if err := <-d; err != nil {
			t.Fatal(err)
		}
	}
	want := "critical high normal1 normal2 low1 low2"
	if got := o.get(); join(got) != want {
		t.Fatalf("admitted %v, want %s", got, want)
	}
	if s := h.Snapshot(); s.Waiting != 0 || s.InFlight != 0 || s.Rejected != 0 {
		t.Fatalf("%+v", s)
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

func TestAFullQueueDisplacesALowerPriority(t *testing.T) {
	p, h, _ := waitLimit(t, 1, r4c.AdaptiveLimitConfig{MaxWaiting: 2})
	held := acquire(t, h)
	var o order
	low1 := startWaiter(t, p, h, &o, "low1", r4c.PriorityLow, 1)
	low2 := startWaiter(t, p, h, &o, "low2", r4c.PriorityLow, 2)
	high := startWaiter(t, p, h, &o, "high", r4c.PriorityHigh, 2) // displaces low2, the newest low
	if err := <-low2; !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("the displaced call: %v", err)
	}
	// A call of the lowest priority finds the queue full of its own or higher: refused at once.
	if _, err := p.Execute(r4c.WithPriority(context.Background(), r4c.PriorityLow), okFn); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("a refused call: %v", err)
	}
	held.Success()
	for _, d := range []<-chan error{high, low1} {
		if err := <-d; err != nil {
			t.Fatal(err)
		}
	}
	if got := join(o.get()); got != "high low1" {
		t.Fatalf("admitted %s", got)
	}
	if s := h.Snapshot(); s.Rejected != 2 || s.WaitTimeouts != 0 {
		t.Fatalf("%+v", s)
	}
}

func okFn(context.Context) (string, error) { return "ok", nil }

func TestAWaitEndsAtMaxWaitOrWithItsContext(t *testing.T) {
	p, h, clock := waitLimit(t, 1, r4c.AdaptiveLimitConfig{MaxWait: 2 * time.Second})
	held := acquire(t, h)
	defer held.Success()

	// MaxWait on the registry's clock.
	var o order
	timedOut := startWaiter(t, p, h, &o, "late", r4c.PriorityNormal, 1)
	waitPending(t, clock, 1)
	clock.Advance(2*time.Second - 1)
	select {
	case err := <-timedOut:
		t.Fatalf("ended before MaxWait: %v", err)
	default:
	}
	clock.Advance(1)
	if err := <-timedOut; !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("%v", err)
	}
	if s := h.Snapshot(); s.Waiting != 0 || s.WaitTimeouts != 1 || s.Rejected != 1 {
		t.Fatalf("%+v", s)
	}

	// Cancellation ends the wait at once and frees the place.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := p.Execute(ctx, okFn); done <- err }()
	waitUntil(t, "the call waits", func() bool { return h.Snapshot().Waiting == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	if s := h.Snapshot(); s.Waiting != 0 || clock.Pending() != 0 {
		t.Fatalf("%+v, %d timers", s, clock.Pending())
	}

	// A context whose deadline has passed does not wait.
	past, cancelPast := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelPast()
	if _, err := p.Execute(past, okFn); err == nil {
		t.Fatal("a call past its deadline was admitted")
	}
	if s := h.Snapshot(); s.Waiting != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestTheSampleStartsWhenTheSlotIsTaken(t *testing.T) {
	// MaxWait outlasts the window: the waiter must still be waiting when the window is over
	// (with the default 10s, advancing past the window also timed the waiter out, and whether
	// it was handed the slot first depended on scheduling).
	p, h, clock := waitLimit(t, 1, r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, Window: time.Hour, MinWindowSamples: 1, MaxWait: 2 * time.Hour})
	held := acquire(t, h)
	done := make(chan error, 1)
	go func() {
		_, err := p.Execute(context.Background(), func(context.Context) (string, error) {
			clock.Advance(100 * time.Millisecond) // the call itself
			return "ok", nil
		})
		done <- err
	}()
	waitUntil(t, "the call waits", func() bool { return h.Snapshot().Waiting == 1 })
	clock.Advance(5 * time.Second) // waiting, within MaxWait
	clock.Advance(time.Hour)       // the window is over, still within MaxWait: the next sample ends it
	held.Ignore()                  // hands the slot over; the waiter's sample ends the window
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := h.Snapshot(); s.Windows != 1 || s.WindowLatency != 100*time.Millisecond {
		t.Fatalf("the wait is in the sample: %+v", s)
	}
}

func TestALoweredLimitAdmitsWaitersOnlyBelowIt(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "w", r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, InitialLimit: 4, MaxLimit: 4,
		Window: time.Second, MinWindowSamples: 1, MaxWait: time.Minute})
	h := handle(t, reg, "w")
	held := []r4c.AdaptiveLimitPermit{acquire(t, h), acquire(t, h), acquire(t, h), acquire(t, h)}
	var o order
	a := startWaiter(t, p, h, &o, "a", r4c.PriorityNormal, 1)
	b := startWaiter(t, p, h, &o, "b", r4c.PriorityNormal, 2)
	clock.Advance(time.Second)
	held[0].Drop() // a drop ends the window: AIMD lowers the limit to int(4 x 0.9) = 3
	if s := h.Snapshot(); s.Limit != 3 || s.InFlight != 3 || s.Waiting != 2 {
		t.Fatalf("the slot went to a waiter above the new limit: %+v", s)
	}
	held[1].Success() // 2 in flight under a limit of 3: a gets a slot, and hands it to b as it ends
	for _, d := range []<-chan error{a, b} {
		if err := <-d; err != nil {
			t.Fatal(err)
		}
	}
	if got := join(o.get()); got != "a b" {
		t.Fatalf("%s", got)
	}
	held[2].Success()
	held[3].Success()
}

func TestWithoutMaxWaitPrioritiesChangeNothing(t *testing.T) {
	reg, _ := newRegistry(t)
	p := newPipeline[string](t, reg, "w", r4c.AdaptiveLimitConfig{InitialLimit: 1, MaxLimit: 1})
	h := handle(t, reg, "w")
	held := acquire(t, h)
	defer held.Success()
	for _, prio := range []r4c.Priority{r4c.PriorityLow, r4c.PriorityCritical} {
		if _, err := p.Execute(r4c.WithPriority(context.Background(), prio), okFn); !errors.Is(err, r4c.ErrLimitExceeded) {
			t.Fatalf("priority %d: %v", prio, err)
		}
	}
}

func TestAsyncCallsWaitToo(t *testing.T) {
	p, h, clock := waitLimit(t, 1, r4c.AdaptiveLimitConfig{MaxWait: 2 * time.Second})
	held := acquire(t, h)
	ran := make(chan struct{}, 3)
	fn := func(context.Context) *r4c.Future[string] {
		ran <- struct{}{}
		f := r4c.NewFuture[string]()
		f.Complete("ok", nil)
		return f
	}
	// Waits, then runs when the slot is handed over.
	f := p.ExecuteAsync(context.Background(), fn)
	if h.Snapshot().Waiting != 1 || len(ran) != 0 {
		t.Fatalf("%+v", h.Snapshot())
	}
	held.Success()
	if v, err := f.Get(context.Background()); v != "ok" || err != nil {
		t.Fatalf("%q %v", v, err)
	}
	// Times out at MaxWait.
	held = acquire(t, h)
	f = p.ExecuteAsync(context.Background(), fn)
	clock.Advance(2 * time.Second)
	if _, err := f.Get(context.Background()); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("%v", err)
	}
	// Cancelled while waiting: out of the queue, its timer stopped.
	f = p.ExecuteAsync(context.Background(), fn)
	f.Cancel()
	if s := h.Snapshot(); s.Waiting != 0 || clock.Pending() != 0 || len(ran) != 1 {
		t.Fatalf("%+v, %d timers, %d ran", s, clock.Pending(), len(ran))
	}
	held.Success()
	if s := h.Snapshot(); s.InFlight != 0 || s.WaitTimeouts != 1 {
		t.Fatalf("%+v", s)
	}
}

func TestAcquireContextWaitsAndAcquireDoesNot(t *testing.T) {
	_, h, _ := waitLimit(t, 1, r4c.AdaptiveLimitConfig{})
	held := acquire(t, h)
	if _, err := h.Acquire(); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("Acquire: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		permit, err := h.AcquireContext(context.Background())
		if err == nil {
			permit.Success()
		}
		got <- err
	}()
	waitUntil(t, "AcquireContext waits", func() bool { return h.Snapshot().Waiting == 1 })
	held.Success()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if h.InFlight() != 0 {
		t.Fatalf("%d in flight", h.InFlight())
	}
}
