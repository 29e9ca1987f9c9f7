package r4c_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
)

func TestBulkheadRejectsAtOnceWhenFull(t *testing.T) {
	reg, _ := newRegistry(t)
	p := newPipeline[string](t, reg, "db", r4c.BulkheadConfig{MaxConcurrent: 2})
	b, err := reg.Bulkhead("db")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mustExecute(t, p, func(context.Context) (string, error) { started <- struct{}{}; <-release; return "", nil })
		}()
	}
	<-started
	<-started
	called := false
	_, err = p.Execute(context.Background(), func(context.Context) (string, error) { called = true; return "", nil })
	var bf *r4c.BulkheadFullError
	if !errors.Is(err, r4c.ErrBulkheadFull) || !errors.As(err, &bf) || bf.InstanceID() != "db" || called {
		t.Fatalf("err %v, called %v", err, called)
	}
	close(release)
	wg.Wait()
	if s := b.Snapshot(); s.InFlight != 0 || s.Rejected != 1 || s.MaxConcurrent != 2 {
		t.Fatalf("%+v", s)
	}
}

// hold starts a call through p that holds its slots until the returned function is called;
// that function waits for the call to finish.
func hold(t *testing.T, p *r4c.Pipeline[string]) (release func()) {
	t.Helper()
	holding, unblock, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		_, _ = p.Execute(context.Background(), func(context.Context) (string, error) { close(holding); <-unblock; return "", nil })
	}()
	<-holding
	return func() { close(unblock); <-done }
}

func TestBulkheadWaitsUpToMaxWait(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "db", r4c.BulkheadConfig{MaxConcurrent: 1, MaxWait: time.Second})
	b, _ := reg.Bulkhead("db")
	got := make(chan error, 1)
	waiter := func(ctx context.Context) {
		go func() { _, err := p.Execute(ctx, taking(clock, 0, nil)); got <- err }()
		if err := clock.WaitPending(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
	}

	// A waiter that gets the slot when it is released.
	release := hold(t, p)
	waiter(context.Background())
	if s := b.Snapshot(); s.Waiting != 1 {
		t.Fatalf("%+v", s)
	}
	clock.Advance(999 * time.Millisecond)
	release()
	if err := <-got; err != nil {
		t.Fatalf("the waiter did not get the released slot: %v", err)
	}
	if clock.Pending() != 0 {
		t.Fatal("the waiter's timer was left pending")
	}

	// A waiter that times out after exactly MaxWait.
	release = hold(t, p)
	waiter(context.Background())
	clock.Advance(999 * time.Millisecond)
	select {
	case err := <-got:
		t.Fatalf("gave up before MaxWait: %v", err)
	default:
	}
	clock.Advance(time.Millisecond)
	if err := <-got; !errors.Is(err, r4c.ErrBulkheadFull) {
		t.Fatalf("after MaxWait: %v", err)
	}
	release()

	// A waiter whose caller gives up.
	release = hold(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	waiter(ctx)
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	release()
	if s := b.Snapshot(); s.InFlight != 0 || s.Waiting != 0 || s.Rejected != 1 || clock.Pending() != 0 {
		t.Fatalf("%+v, pending %d", s, clock.Pending())
	}
}

func TestBulkheadAdmittedCallAllocatesNothing(t *testing.T) {
	reg, _ := newRegistry(t)
	p := newPipeline[string](t, reg, "db", r4c.BulkheadConfig{MaxConcurrent: 1})
	ctx := context.Background()
	fn := func(context.Context) (string, error) { return "", nil }
	if a := testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, fn) }); a != 0 {
		t.Fatalf("%v allocs per admitted call", a)
	}
	release := hold(t, p)
	defer release()
	if a := testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, fn) }); a != 0 {
		t.Fatalf("%v allocs per rejection", a)
	}
}

func TestBulkheadHammer(t *testing.T) {
	for _, wait := range []time.Duration{0, time.Hour} {
		reg, _ := newRegistry(t)
		p := newPipeline[int](t, reg, "h", r4c.BulkheadConfig{MaxConcurrent: 3, MaxWait: wait})
		var running, peak atomic.Int64
		var wg sync.WaitGroup
		for g := 0; g < 16; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 1000; i++ {
					_, _ = p.Execute(context.Background(), func(context.Context) (int, error) {
						n := running.Add(1)
						if n > 3 {
							t.Errorf("%d running with MaxConcurrent 3", n)
						}
						for m := peak.Load(); n > m && !peak.CompareAndSwap(m, n); m = peak.Load() {
						}
						running.Add(-1)
						return 0, nil
					})
				}
			}()
		}
		wg.Wait()
		b, _ := reg.Bulkhead("h")
		if s := b.Snapshot(); s.InFlight != 0 || s.Waiting != 0 {
			t.Fatalf("wait %v: %+v", wait, s)
		}
	}
}
