package r4c_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
)

// Partitions: guaranteed shares of the limit, and borrowing what no guarantee reserves.

func partitioned(t *testing.T, n int, extra r4c.AdaptiveLimitConfig) (*r4c.Pipeline[string], *r4c.AdaptiveLimitHandle) {
	t.Helper()
	reg, _ := newRegistry(t)
	cfg := extra
	cfg.InitialLimit, cfg.MinLimit, cfg.MaxLimit = n, n, n
	cfg.Partitions = map[string]float64{"interactive": 0.6, "batch": 0.3}
	p := newPipeline[string](t, reg, "parts", cfg)
	return p, handle(t, reg, "parts")
}

func part(name string) context.Context { return r4c.WithPartition(context.Background(), name) }

func TestPartitionGuaranteesAndBorrowing(t *testing.T) {
	_, h := partitioned(t, 10, r4c.AdaptiveLimitConfig{})
	take := func(ctx context.Context) error {
		_, err := h.AcquireContext(ctx)
		return err
	}
	// Batch: its 3 guaranteed, then 1 borrowed (10 - 6 reserved for interactive - 3 its own).
	for i := range 4 {
		if err := take(part("batch")); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
	}
	if err := take(part("batch")); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("batch beyond what no guarantee reserves: %v", err)
	}
	// A call without a partition shares the same unreserved slots: none left.
	if err := take(context.Background()); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("unpartitioned: %v", err)
	}
	// Interactive gets its 6 whatever batch holds.
	for i := range 6 {
		if err := take(part("interactive")); err != nil {
			t.Fatalf("interactive %d within its guarantee: %v", i, err)
		}
	}
	if err := take(part("interactive")); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("beyond the limit: %v", err)
	}
	s := h.Snapshot()
	if s.InFlight != 10 || len(s.Partitions) != 2 {
		t.Fatalf("%+v", s)
	}
	want := []r4c.PartitionSnapshot{
		{Name: "batch", Share: 0.3, Guaranteed: 3, InFlight: 4, Rejected: 1},
		{Name: "interactive", Share: 0.6, Guaranteed: 6, InFlight: 6, Rejected: 1},
	}
	for i, w := range want {
		if s.Partitions[i] != w {
			t.Errorf("partition %d: %+v, want %+v", i, s.Partitions[i], w)
		}
	}
	// An unknown partition is no partition.
	if err := take(part("nope")); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("%v", err)
	}
}

func TestPartitionsReleaseTheirSlots(t *testing.T) {
	p, h := partitioned(t, 10, r4c.AdaptiveLimitConfig{})
	for _, ctx := range []context.Context{part("batch"), part("interactive"), context.Background()} {
		if _, err := p.Execute(ctx, okFn); err != nil {
			t.Fatal(err)
		}
		f := p.ExecuteAsync(ctx, func(context.Context) *r4c.Future[string] {
			f := r4c.NewFuture[string]()
			f.Complete("ok", nil)
			return f
		})
		if _, err := f.Get(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s := h.Snapshot()
	if s.InFlight != 0 || s.Partitions[0].InFlight != 0 || s.Partitions[1].InFlight != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestPartitionedCallsWaitInTheirPartition(t *testing.T) {
	p, h := partitioned(t, 10, r4c.AdaptiveLimitConfig{MaxWait: time.Minute})
	var held []r4c.AdaptiveLimitPermit
	for range 4 {
		permit, err := h.AcquireContext(part("batch"))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, permit)
	}
	for range 6 {
		permit, err := h.AcquireContext(part("interactive"))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, permit)
	}
	// A batch call waits; a slot freed by interactive is interactive's guarantee, not batch's.
	done := make(chan error, 1)
	go func() { _, err := p.Execute(part("batch"), okFn); done <- err }()
	waitUntil(t, "batch waits", func() bool { return h.Snapshot().Waiting == 1 })
	held[9].Success() // an interactive slot: reserved for interactive
	if s := h.Snapshot(); s.Waiting != 1 || s.InFlight != 9 {
		t.Fatalf("a batch call took interactive's reserved slot: %+v", s)
	}
	held[0].Success() // a batch slot: the waiting batch call takes it
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, permit := range held[1:9] {
		permit.Success()
	}
	if s := h.Snapshot(); s.InFlight != 0 || s.Waiting != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestPartitionsFromPropertiesAndTheirValidation(t *testing.T) {
	reg, err := r4c.NewRegistry(r4c.WithProperties(map[string]string{
		"instances.api.adaptiveLimit.partitions.interactive": "0.6",
		"instances.api.adaptiveLimit.partitions.batch":       "0.3",
		"defaults.adaptiveLimit.partitions":                  "all:1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	newPipeline[string](t, reg, "api", r4c.AdaptiveLimitConfig{})
	if got := fmt.Sprint(handle(t, reg, "api").Config().Partitions); got != "map[batch:0.3 interactive:0.6]" {
		t.Fatalf("%s", got)
	}
	for _, bad := range []map[string]float64{{"a": 0.7, "b": 0.4}, {"a": 0}, {"a:b": 0.1}, {"": 0.5}} {
		if _, err := r4c.NewPipeline[string](reg, "bad", r4c.AdaptiveLimitConfig{Partitions: bad}); r4c.ErrorCode(err) != "R4C-REG-001" {
			t.Errorf("%v: %v", bad, err)
		}
	}
	if _, err := r4c.NewRegistry(r4c.WithProperties(map[string]string{"defaults.adaptiveLimit.partitions.a": "2"})); r4c.ErrorCode(err) != "R4C-CFG-002" {
		t.Errorf("a share of 2: %v", err)
	}
}

// TestPartitionHammer: interactive has exactly as many goroutines as its guarantee, so none of
// its calls may ever be rejected, while batch and unpartitioned goroutines hammer the rest; the
// calls running never exceed the limit.
func TestPartitionHammer(t *testing.T) {
	for _, maxWait := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprint("maxWait=", maxWait), func(t *testing.T) { partitionHammer(t, maxWait) })
	}
}

// partitionHammer runs the hammer with a MaxWait (on the manual clock, which the hammer does
// not advance: a call that waits gets a slot when one frees, never a timeout), and priorities:
// interactive high, batch low.
func partitionHammer(t *testing.T, maxWait time.Duration) {
	const limit = 10
	p, h := partitioned(t, limit, r4c.AdaptiveLimitConfig{MaxWait: maxWait, MaxWaiting: 100})
	var running, maxRunning, interactiveRejected atomic.Int64
	fn := func(context.Context) (string, error) {
		n := running.Add(1)
		for {
			m := maxRunning.Load()
			if n <= m || maxRunning.CompareAndSwap(m, n) {
				break
			}
		}
		running.Add(-1)
		return "ok", nil
	}
	var wg sync.WaitGroup
	calls := 2000
	if testing.Short() {
		calls = 200
	}
	for g := range 6 + 8 + 4 {
		wg.Go(func() {
			ctx := context.Background()
			switch {
			case g < 6:
				ctx = r4c.WithPriority(part("interactive"), r4c.PriorityHigh)
			case g < 14:
				ctx = r4c.WithPriority(part("batch"), r4c.PriorityLow)
			}
			for range calls {
				_, err := p.Execute(ctx, fn)
				if err != nil && g < 6 {
					interactiveRejected.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := interactiveRejected.Load(); n != 0 {
		t.Errorf("%d interactive calls rejected within their guarantee", n)
	}
	if m := maxRunning.Load(); m > limit {
		t.Errorf("%d calls ran at once through a limit of %d", m, limit)
	}
	if s := h.Snapshot(); s.InFlight != 0 || s.Waiting != 0 || s.Partitions[0].InFlight != 0 || s.Partitions[1].InFlight != 0 {
		t.Errorf("%+v", s)
	}
}

// A partitioned call that waits and times out, or is displaced, counts as its partition's
// rejection, on the sync and the async path.
func TestPartitionRejectionsCountWaitsThatFail(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "pw", r4c.AdaptiveLimitConfig{InitialLimit: 2, MinLimit: 2, MaxLimit: 2,
		MaxWait: time.Second, MaxWaiting: 1, Partitions: map[string]float64{"a": 0.5}})
	h := handle(t, reg, "pw")
	held := []r4c.AdaptiveLimitPermit{}
	for _, ctx := range []context.Context{part("a"), context.Background()} {
		permit, err := h.AcquireContext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, permit)
	}
	// Async: waits, times out.
	f := p.ExecuteAsync(part("a"), func(context.Context) *r4c.Future[string] { return r4c.NewFuture[string]() })
	clock.Advance(time.Second)
	if _, err := f.Get(context.Background()); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("%v", err)
	}
	// Sync: waits at low priority, displaced by a high one (the queue holds one).
	done := make(chan error, 1)
	go func() {
		_, err := p.Execute(r4c.WithPriority(part("a"), r4c.PriorityLow), okFn)
		done <- err
	}()
	waitUntil(t, "the low call waits", func() bool { return h.Snapshot().Waiting == 1 })
	g := p.ExecuteAsync(r4c.WithPriority(part("a"), r4c.PriorityHigh), func(context.Context) *r4c.Future[string] {
		f := r4c.NewFuture[string]()
		f.Complete("ok", nil)
		return f
	})
	if err := <-done; !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("the displaced call: %v", err)
	}
	if s := h.Snapshot(); s.Partitions[0].Rejected != 2 || s.WaitTimeouts != 1 {
		t.Fatalf("%+v", s)
	}
	for _, permit := range held {
		permit.Success()
	}
	if v, err := g.Get(context.Background()); v != "ok" || err != nil {
		t.Fatalf("%q %v", v, err)
	}
}
