package r4c_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// start runs p.Execute(ctx, fn) in a goroutine and returns the channel of its error.
func start[T any](p *r4c.Pipeline[T], ctx context.Context, fn func(context.Context) (T, error)) <-chan error {
	done := make(chan error, 1)
	go func() { _, err := p.Execute(ctx, fn); done <- err }()
	return done
}

func waitPending(t *testing.T, clock *r4ctest.ManualClock, n int) {
	t.Helper()
	if err := clock.WaitPending(t.Context(), n); err != nil {
		t.Fatal(err)
	}
}

func TestTimeoutFiresAtTheDeadlineAndCancelsTheContext(t *testing.T) {
	var events []r4c.Event
	reg, clock := newRegistry(t, r4c.WithObserver(func(e r4c.Event) { events = append(events, e) }))
	p := newPipeline[string](t, reg, "slow", r4c.TimeoutConfig{Timeout: 2 * time.Second})
	fnCtx := make(chan context.Context, 1)
	done := start(p, context.Background(), func(ctx context.Context) (string, error) {
		fnCtx <- ctx
		<-ctx.Done()
		return "", ctx.Err()
	})
	ctx := <-fnCtx
	if d, ok := ctx.Deadline(); !ok || !d.Equal(r4ctest.Epoch.Add(2*time.Second)) {
		t.Fatalf("deadline %v %v", d, ok)
	}
	waitPending(t, clock, 1)
	clock.Advance(1999 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("returned before the deadline: %v", err)
	default:
	}
	clock.Advance(time.Millisecond)
	err := <-done
	var te *r4c.CallTimeoutError
	if !errors.Is(err, r4c.ErrCallTimeout) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &te) {
		t.Fatalf("%v", err)
	}
	if !te.Timeout() || te.InstanceID() != "slow" || te.Duration() != 2*time.Second {
		t.Fatalf("%+v", te)
	}
	if err.Error() != `r4c: call timed out after 2s (timeout "slow")` {
		t.Fatalf("message %q", err.Error())
	}
	if ctx.Err() != context.DeadlineExceeded || context.Cause(ctx) != context.DeadlineExceeded {
		t.Fatalf("the function's context: err %v, cause %v", ctx.Err(), context.Cause(ctx))
	}
	h, _ := reg.Timeout("slow")
	if s := h.Snapshot(); s.TimedOut != 1 || s.Timeout != 2*time.Second {
		t.Fatalf("%+v", s)
	}
	if len(events) != 1 || events[0].Type != r4c.EventTimedOut || events[0].Duration != 2*time.Second {
		t.Fatalf("%+v", events)
	}
}

func TestTimeoutReturnsEvenIfTheFunctionIgnoresItsContext(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "stubborn", r4c.TimeoutConfig{Timeout: time.Second})
	unblock, finished := make(chan struct{}), make(chan struct{})
	done := start(p, context.Background(), func(context.Context) (string, error) {
		defer close(finished)
		<-unblock // ignores its context
		return "late", nil
	})
	waitPending(t, clock, 1)
	clock.Advance(time.Second)
	if err := <-done; !errors.Is(err, r4c.ErrCallTimeout) {
		t.Fatalf("%v", err)
	}
	close(unblock) // the abandoned function ends; its result is discarded
	<-finished
}

func TestTimeoutLeavesNoTimerWhenTheCallEndsFirst(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "fast", r4c.TimeoutConfig{})
	if v, err := p.Execute(context.Background(), taking(clock, 500*time.Millisecond, nil)); v != "ok" || err != nil {
		t.Fatal(v, err)
	}
	if _, err := p.Execute(context.Background(), taking(clock, 0, errNotFound)); !errors.Is(err, errNotFound) {
		t.Fatal(err)
	}
	if clock.Pending() != 0 {
		t.Fatalf("%d timers left", clock.Pending())
	}
	// The caller's cancellation: its error, and no timer left either.
	ctx, cancel := context.WithCancel(context.Background())
	done := start(p, ctx, func(ctx context.Context) (string, error) { <-ctx.Done(); return "", ctx.Err() })
	waitPending(t, clock, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || errors.Is(err, r4c.ErrCallTimeout) {
		t.Fatalf("%v", err)
	}
	if clock.Pending() != 0 {
		t.Fatalf("%d timers left after a cancellation", clock.Pending())
	}
}

func TestTimeoutReraisesPanics(t *testing.T) {
	reg, _ := newRegistry(t)
	p := newPipeline[string](t, reg, "p", r4c.TimeoutConfig{})
	defer func() {
		if r := recover(); r != "inner" {
			t.Fatalf("recovered %v", r)
		}
	}()
	_, _ = p.Execute(context.Background(), func(context.Context) (string, error) { panic("inner") })
}

// Many goroutines through a timeout on the system clock, with deadlines that fall while the
// functions run and while they return: every call gets its own result or the timeout (never
// another call's result), and nothing is left held. The timeout's signals and timers are
// pooled: this is the test that a late token of one call never reaches the next.
func TestTimeoutHammerOnTheSystemClock(t *testing.T) {
	reg, err := r4c.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	p := newPipeline[int](t, reg, "timeout-hammer", r4c.TimeoutConfig{Timeout: 20 * time.Microsecond},
		r4c.AdaptiveLimitConfig{InitialLimit: 64, MinLimit: 64, MaxLimit: 64})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				want := g*10000 + i
				v, err := p.Execute(context.Background(), func(ctx context.Context) (int, error) {
					if i%2 == 0 {
						<-ctx.Done() // outlives the deadline
						return -1, ctx.Err()
					}
					return want, nil
				})
				switch {
				case err == nil && v != want:
					t.Errorf("call %d got %d", want, v)
					return
				case err != nil && !errors.Is(err, r4c.ErrCallTimeout):
					t.Errorf("call %d: %v", want, err)
					return
				case err == nil && i%2 == 0:
					t.Errorf("call %d returned after its context was done", want)
					return
				}
			}
		}()
	}
	wg.Wait()
	if h := handle(t, reg, "timeout-hammer"); h.InFlight() != 0 {
		t.Fatalf("%d slots held", h.InFlight())
	}
}
