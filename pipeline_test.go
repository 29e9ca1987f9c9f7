package r4c_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// TestSeedManualClockExample is the seed page's ManualClock example, in Go: pending futures
// hold their slots, a full limit fails at once, and completing them ends the window.
func TestSeedManualClockExample(t *testing.T) {
	clock := r4ctest.NewManualClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock), r4c.WithDefaults(r4c.AdaptiveLimitConfig{MinWindowSamples: 1}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := r4c.NewPipeline[string](reg, "orders-async", r4c.AdaptiveLimitConfig{InitialLimit: 2})
	if err != nil {
		t.Fatal(err)
	}
	pending := map[string]*r4c.Future[string]{}
	placeAsync := func(order string) *r4c.Future[string] {
		return p.ExecuteAsync(context.Background(), func(context.Context) *r4c.Future[string] {
			f := r4c.NewFuture[string]()
			pending[order] = f
			return f
		})
	}
	limit := handle(t, reg, "orders-async")

	a := placeAsync("a") // pending: holds a slot
	b := placeAsync("b") // pending: holds the other
	c := placeAsync("c") // full: rejected at once
	select {
	case <-c.Done():
	default:
		t.Fatal("a rejected call's future is not done at once")
	}
	if _, err := c.Get(context.Background()); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("c: %v", err)
	}
	if _, ok := pending["c"]; ok {
		t.Fatal("the rejected call ran its function")
	}

	clock.Advance(time.Second)             // the calls took 1s; the window is over
	pending["a"].Complete("placed a", nil) // ends the window
	pending["b"].Complete("placed b", nil)
	if s := limit.Snapshot(); s.Windows != 1 || s.WindowLatency != time.Second {
		t.Fatalf("windows %d, latency %v; want 1 and 1s", s.Windows, s.WindowLatency)
	}
	for name, f := range map[string]*r4c.Future[string]{"a": a, "b": b} {
		if v, err := f.Get(context.Background()); err != nil || v != "placed "+name {
			t.Fatalf("%s: %q, %v", name, v, err)
		}
	}
	if limit.InFlight() != 0 || clock.Pending() != 0 {
		t.Fatalf("in flight %d, pending timers %d", limit.InFlight(), clock.Pending())
	}
}

func TestGoHoldsTheSlotUntilTheFunctionReturns(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "go", r4c.AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1, MinWindowSamples: 1})
	h := handle(t, reg, "go")
	release := make(chan struct{})
	f := p.Go(context.Background(), func(context.Context) (string, error) { <-release; return "done", nil })
	if h.InFlight() != 1 {
		t.Fatalf("in flight %d", h.InFlight())
	}
	if _, err := p.Go(context.Background(), func(context.Context) (string, error) { t.Error("ran"); return "", nil }).Get(context.Background()); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("second call: %v", err)
	}
	clock.Advance(2 * time.Second)
	close(release)
	if v, err := f.Get(context.Background()); v != "done" || err != nil {
		t.Fatalf("%q, %v", v, err)
	}
	if s := h.Snapshot(); s.InFlight != 0 || s.Windows != 1 || s.WindowLatency != 2*time.Second {
		t.Fatalf("%+v", s)
	}
}

func TestCancellingTheFutureFreesTheSlotAtOnce(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "c", r4c.AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1, MinWindowSamples: 1})
	h := handle(t, reg, "c")

	t.Run("Go", func(t *testing.T) {
		fnCtxDone := make(chan struct{})
		f := p.Go(context.Background(), func(ctx context.Context) (string, error) {
			<-ctx.Done()
			close(fnCtxDone)
			return "", ctx.Err()
		})
		clock.Advance(time.Second)
		if !f.Cancel() {
			t.Fatal("Cancel of a pending future returned false")
		}
		if h.InFlight() != 0 {
			t.Fatal("Cancel returned with the slot still taken")
		}
		<-fnCtxDone // the function's context was cancelled
		if _, err := f.Get(context.Background()); !errors.Is(err, context.Canceled) {
			t.Fatalf("%v", err)
		}
		if f.Cancel() {
			t.Fatal("a second Cancel returned true")
		}
	})
	t.Run("ExecuteAsync", func(t *testing.T) {
		var inner *r4c.Future[string]
		var fnCtx context.Context
		f := p.ExecuteAsync(context.Background(), func(ctx context.Context) *r4c.Future[string] {
			fnCtx, inner = ctx, r4c.NewFuture[string]()
			return inner
		})
		clock.Advance(time.Second)
		f.Cancel()
		if h.InFlight() != 0 {
			t.Fatal("Cancel returned with the slot still taken")
		}
		if _, err := inner.Get(context.Background()); !errors.Is(err, context.Canceled) {
			t.Fatalf("inner future: %v", err)
		}
		if fnCtx.Err() == nil {
			t.Fatal("the function's context was not cancelled")
		}
		if inner.Complete("late", nil) {
			t.Fatal("the cancelled inner future accepted a late completion")
		}
	})
	if s := h.Snapshot(); s.Windows != 0 || s.InFlight != 0 {
		t.Fatalf("cancelled calls left samples or slots: %+v", s)
	}
}

func TestCallerContextCancellationFreesAsyncSlots(t *testing.T) {
	reg, _ := newRegistry(t)
	p := newPipeline[string](t, reg, "ctx", r4c.AdaptiveLimitConfig{InitialLimit: 2, MinWindowSamples: 1})
	h := handle(t, reg, "ctx")
	ctx, cancel := context.WithCancel(context.Background())
	inner := r4c.NewFuture[string]()
	f1 := p.ExecuteAsync(ctx, func(context.Context) *r4c.Future[string] { return inner })
	f2 := p.Go(ctx, func(ctx context.Context) (string, error) { <-ctx.Done(); return "", ctx.Err() })
	if h.InFlight() != 2 {
		t.Fatalf("in flight %d", h.InFlight())
	}
	cancel()
	for _, f := range []*r4c.Future[string]{f1, f2, inner} {
		<-f.Done()
		if _, err := f.Get(context.Background()); !errors.Is(err, context.Canceled) {
			t.Fatalf("%v", err)
		}
	}
	if s := h.Snapshot(); s.InFlight != 0 || s.Windows != 0 {
		t.Fatalf("%+v", s)
	}
	// A context already cancelled: the call is admitted and cancelled at once.
	f3 := p.ExecuteAsync(ctx, func(context.Context) *r4c.Future[string] { return r4c.NewFuture[string]() })
	<-f3.Done()
	if h.InFlight() != 0 {
		t.Fatalf("in flight %d", h.InFlight())
	}
}

func TestAsyncOutcomes(t *testing.T) {
	reg, clock := newRegistry(t)
	cfg := aimd
	cfg.DropOn = []error{errOverloaded}
	p := newPipeline[string](t, reg, "async", cfg)
	h := handle(t, reg, "async")
	inner := r4c.NewFuture[string]()
	f := p.ExecuteAsync(context.Background(), func(context.Context) *r4c.Future[string] { return inner })
	clock.Advance(time.Second)
	inner.Complete("", errOverloaded) // a drop: AIMD halves 4 to 2
	if _, err := f.Get(context.Background()); !errors.Is(err, errOverloaded) {
		t.Fatal(err)
	}
	if s := h.Snapshot(); s.Limit != 2 || s.InFlight != 0 || s.Windows != 1 {
		t.Fatalf("%+v", s)
	}

	// A function that returns an already completed future.
	done := r4c.NewFuture[string]()
	done.Complete("ready", nil)
	if v, err := p.ExecuteAsync(context.Background(), func(context.Context) *r4c.Future[string] { return done }).Get(context.Background()); v != "ready" || err != nil {
		t.Fatalf("%q %v", v, err)
	}

	// A nil future fails the call and frees the slot.
	if _, err := p.ExecuteAsync(context.Background(), func(context.Context) *r4c.Future[string] { return nil }).Get(context.Background()); err == nil {
		t.Fatal("a nil future did not fail")
	}
	// A panic frees the slot and is re-raised in the caller.
	func() {
		defer func() {
			if r := recover(); r != "async boom" {
				t.Fatalf("recovered %v", r)
			}
		}()
		p.ExecuteAsync(context.Background(), func(context.Context) *r4c.Future[string] { panic("async boom") })
	}()
	// A panic in Go's goroutine fails the future with a *PanicError.
	_, err := p.Go(context.Background(), func(context.Context) (string, error) { panic(errNotFound) }).Get(context.Background())
	var pe *r4c.PanicError
	if !errors.As(err, &pe) || !errors.Is(err, errNotFound) || len(pe.Stack) == 0 {
		t.Fatalf("%v", err)
	}
	if h.InFlight() != 0 {
		t.Fatalf("in flight %d", h.InFlight())
	}
}

func TestBadCallsFailWithoutPanicking(t *testing.T) {
	reg, _ := newRegistry(t)
	p := newPipeline[string](t, reg, "bad", r4c.AdaptiveLimitConfig{})
	var nilCtx context.Context
	if _, err := p.Execute(nilCtx, func(context.Context) (string, error) { return "", nil }); err == nil {
		t.Fatal("nil context accepted")
	}
	if _, err := p.Execute(context.Background(), nil); err == nil {
		t.Fatal("nil function accepted")
	}
	if _, err := p.Go(nilCtx, func(context.Context) (string, error) { return "", nil }).Get(context.Background()); err == nil {
		t.Fatal("nil context accepted by Go")
	}
	if _, err := p.ExecuteAsync(context.Background(), nil).Get(context.Background()); err == nil {
		t.Fatal("nil function accepted by ExecuteAsync")
	}
	if h := handle(t, reg, "bad"); h.InFlight() != 0 {
		t.Fatal("a bad call took a slot")
	}
	if _, err := r4c.NewFuture[int]().Get(nilCtx); err == nil {
		t.Fatal("Get with a nil context on a pending future did not fail")
	}
	var zero r4c.AdaptiveLimitPermit
	zero.Success()
	zero.Drop()
	zero.Ignore()
	zero.Release(context.Background(), nil)
}

func TestFuture(t *testing.T) {
	f := r4c.NewFuture[int]()
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := f.Get(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get on a pending future: %v", err)
	}
	if !f.Complete(7, nil) || f.Complete(8, nil) || f.Cancel() {
		t.Fatal("a future completed twice")
	}
	if v, err := f.Get(context.Background()); v != 7 || err != nil {
		t.Fatalf("%d %v", v, err)
	}
	<-f.Done()
}

func TestPipelineWithoutPoliciesRunsTheCall(t *testing.T) {
	reg, _ := newRegistry(t)
	p := newPipeline[int](t, reg, "plain")
	if v, err := p.Execute(context.Background(), func(context.Context) (int, error) { return 42, nil }); v != 42 || err != nil {
		t.Fatal(v, err)
	}
	if _, err := reg.AdaptiveLimit("plain"); r4c.ErrorCode(err) != "R4C-REG-009" {
		t.Fatalf("%v", err)
	}
}

func TestAsyncRejectionAllocatesNothing(t *testing.T) {
	reg, _ := newRegistry(t)
	p := newPipeline[string](t, reg, "full", r4c.AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1})
	held := acquire(t, handle(t, reg, "full"))
	defer held.Success()
	ctx := context.Background()
	goFn := func(context.Context) (string, error) { return "", nil }
	asyncFn := func(context.Context) *r4c.Future[string] { return r4c.NewFuture[string]() }
	if a := testing.AllocsPerRun(100, func() { p.Go(ctx, goFn) }); a != 0 {
		t.Errorf("a rejection through Go allocates %v times", a)
	}
	if a := testing.AllocsPerRun(100, func() { p.ExecuteAsync(ctx, asyncFn) }); a != 0 {
		t.Errorf("a rejection through ExecuteAsync allocates %v times", a)
	}
	f := p.Go(ctx, goFn)
	if _, err := f.Get(ctx); !errors.Is(err, r4c.ErrLimitExceeded) || f.Cancel() || f.Complete("x", nil) {
		t.Fatal("the shared rejected future is not immutable")
	}
}
