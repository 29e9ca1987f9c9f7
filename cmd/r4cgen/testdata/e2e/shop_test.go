package shop_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"example.com/e2e/shop"
	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

type backend struct {
	block   chan struct{} // Status waits on it when non-nil
	entered chan struct{}
	pending []*r4c.Future[string]
}

func (b *backend) Place(ctx context.Context, order string) (string, error) {
	if order == "slow" {
		<-ctx.Done()
		return "", ctx.Err()
	}
	return "placed " + order, nil
}
func (b *backend) Cancel(ctx context.Context, order string) (string, error) {
	return "cancelled " + order, nil
}
func (b *backend) PlaceAsync(ctx context.Context, order string) *r4c.Future[string] {
	f := r4c.NewFuture[string]()
	b.pending = append(b.pending, f)
	return f
}
func (b *backend) Status(ctx context.Context, order string) (string, error) {
	if b.block != nil {
		b.entered <- struct{}{}
		<-b.block
	}
	return "live " + order, nil
}
func (b *backend) CachedStatus(ctx context.Context, order string, err error) (string, error) {
	return "cached " + order, nil
}
func (b *backend) Ping() error { return nil }

func setup(t *testing.T) (*r4ctest.ManualClock, *r4c.Registry, *backend, shop.OrderClient) {
	t.Helper()
	clock := r4ctest.NewManualClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock), r4c.WithDefaults(r4c.AdaptiveLimitConfig{MinWindowSamples: 1}))
	if err != nil {
		t.Fatal(err)
	}
	be := &backend{}
	client, err := r4c.Of[shop.OrderClient](be, reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := client.(*shop.OrderClientResilient); !ok {
		t.Fatalf("r4c.Of returned %T", client)
	}
	return clock, reg, be, client
}

func TestInstancesAndSettings(t *testing.T) {
	_, reg, _, client := setup(t)
	ctx := context.Background()
	if s, err := client.Place(ctx, "a"); s != "placed a" || err != nil {
		t.Fatalf("Place = %q, %v", s, err)
	}
	orders, err := reg.AdaptiveLimit("orders")
	if err != nil {
		t.Fatal(err)
	}
	if c := orders.Config(); c.InitialLimit != 10 || c.MaxLimit != 100 || c.Window != 500*time.Millisecond {
		t.Errorf("orders config = %+v", c)
	}
	aimd, err := reg.AdaptiveLimit("orders-aimd")
	if err != nil {
		t.Fatal(err)
	}
	if c := aimd.Config(); c.Algorithm != r4c.AIMD || len(c.DropOn) != 2 {
		t.Errorf("orders-aimd config = %+v", c)
	}
	st, err := reg.AdaptiveLimit("example.com/e2e/shop.OrderClient#Status(context.Context,string)")
	if err != nil {
		t.Fatal(err)
	}
	if st.Limit() != 1 || st.Snapshot().MaxLimit != 5 {
		t.Errorf("Status limit %d max %d", st.Limit(), st.Snapshot().MaxLimit)
	}
	if _, err := reg.AdaptiveLimit("example.com/e2e/shop.OrderClient#Ping()"); err != nil {
		t.Error(err)
	}
	if err := client.Ping(); err != nil {
		t.Error(err)
	}
}

// At the limit the next call is rejected; Status's fallback then answers from the cache.
func TestRejectionAtTheLimitFallsBack(t *testing.T) {
	_, reg, be, client := setup(t)
	be.block, be.entered = make(chan struct{}), make(chan struct{})
	ctx := context.Background()
	done := make(chan string)
	go func() {
		s, _ := client.Status(ctx, "a")
		done <- s
	}()
	<-be.entered // the first call holds the only slot
	st, _ := reg.AdaptiveLimit("example.com/e2e/shop.OrderClient#Status(context.Context,string)")
	if st.InFlight() != 1 {
		t.Fatalf("in flight %d", st.InFlight())
	}
	if s, err := client.Status(ctx, "b"); s != "cached b" || err != nil {
		t.Errorf("Status at the limit = %q, %v, want the fallback", s, err)
	}
	if st.Snapshot().Rejected != 1 {
		t.Errorf("rejected %d", st.Snapshot().Rejected)
	}
	close(be.block)
	if s := <-done; s != "live a" {
		t.Errorf("first call = %q", s)
	}
	if st.InFlight() != 0 {
		t.Errorf("in flight %d after the call", st.InFlight())
	}
}

// The sole-adaptive-limit fast path rejects at the limit too.
func TestFastPathRejects(t *testing.T) {
	_, reg, _, client := setup(t)
	aimd, _ := reg.AdaptiveLimit("orders-aimd")
	var held []r4c.AdaptiveLimitPermit
	for range 10 {
		p, err := aimd.Acquire()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, p)
	}
	_, err := client.Cancel(context.Background(), "x")
	if !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Errorf("Cancel at the limit: %v", err)
	}
	for _, p := range held {
		p.Ignore()
	}
	if s, err := client.Cancel(context.Background(), "x"); s != "cancelled x" || err != nil {
		t.Errorf("Cancel = %q, %v", s, err)
	}
}

// Place's timeout runs on the manual clock.
func TestTimeout(t *testing.T) {
	clock, _, _, client := setup(t)
	errc := make(chan error)
	go func() {
		_, err := client.Place(context.Background(), "slow")
		errc <- err
	}()
	if err := clock.WaitPending(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Second)
	if err := <-errc; !errors.Is(err, r4c.ErrCallTimeout) {
		t.Errorf("Place: %v, want ErrCallTimeout", err)
	}
}

// The seed's async ManualClock example.
func TestAsync(t *testing.T) {
	clock, reg, be, client := setup(t)
	ctx := context.Background()
	limit, err := reg.AdaptiveLimit("orders-async")
	if err != nil {
		t.Fatal(err)
	}
	a := client.PlaceAsync(ctx, "a")
	b := client.PlaceAsync(ctx, "b")
	c := client.PlaceAsync(ctx, "c")
	select {
	case <-c.Done():
	default:
		t.Fatal("the third call is not rejected at once")
	}
	if _, err := c.Get(ctx); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Errorf("third call: %v", err)
	}
	if len(be.pending) != 2 || limit.InFlight() != 2 {
		t.Fatalf("pending %d, in flight %d", len(be.pending), limit.InFlight())
	}
	clock.Advance(10 * time.Millisecond)
	be.pending[0].Complete("placed a", nil)
	if v, err := a.Get(ctx); v != "placed a" || err != nil {
		t.Errorf("a = %q, %v", v, err)
	}
	b.Cancel()
	if limit.InFlight() != 0 {
		t.Errorf("in flight %d", limit.InFlight())
	}
	if clock.Pending() != 0 {
		t.Errorf("pending timers %d", clock.Pending())
	}
}

func TestFastPathAllocatesNothing(t *testing.T) {
	_, _, _, client := setup(t)
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { client.Cancel(ctx, "") }); n > 1 {
		t.Errorf("Cancel allocates %v", n) // the backend's concatenation allocates once
	}
}
