package orders_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/examples/orders"
	"github.com/resilience4cata/r4c/r4ctest"
)

// backend places orders; its async calls stay pending until the test completes them.
type backend struct {
	pending []*r4c.Future[string]
}

func (b *backend) Place(ctx context.Context, order string) (string, error) {
	return "placed " + order, nil
}

func (b *backend) Cancel(ctx context.Context, order string) (string, error) {
	return order, nil
}

func (b *backend) PlaceAsync(ctx context.Context, order string) *r4c.Future[string] {
	f := r4c.NewFuture[string]()
	b.pending = append(b.pending, f)
	return f
}

// The seed's ManualClock example: pending futures hold their slots, so a limit of 2 is full
// after two calls, and a third is rejected at once with an already failed future.
func ExampleNewOrderClientResilient() {
	clock := r4ctest.NewManualClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock), r4c.WithDefaults(r4c.AdaptiveLimitConfig{MinWindowSamples: 1}))
	if err != nil {
		panic(err)
	}
	be := &backend{}
	client, err := r4c.Of[orders.OrderClient](be, reg) // the generated wrapper
	if err != nil {
		panic(err)
	}
	limit, _ := reg.AdaptiveLimit("orders-async")

	ctx := context.Background()
	a := client.PlaceAsync(ctx, "a") // pending: holds a slot
	b := client.PlaceAsync(ctx, "b") // pending: holds the other
	c := client.PlaceAsync(ctx, "c") // full: rejected at once
	_, err = c.Get(ctx)
	fmt.Println(limit.InFlight(), errors.Is(err, r4c.ErrLimitExceeded))

	clock.Advance(10 * time.Millisecond)
	be.pending[0].Complete("placed a", nil) // frees a slot, records a 10ms sample
	fmt.Println(a.Get(ctx))
	fmt.Println(limit.InFlight())
	b.Cancel() // frees the slot without a sample
	fmt.Println(limit.InFlight())

	fmt.Println(client.Place(ctx, "d"))
	place, _ := reg.AdaptiveLimit("orders")
	fmt.Println(place.Snapshot().MaxLimit, place.Limit())
	// Output:
	// 2 true
	// placed a <nil>
	// 1
	// 0
	// placed d <nil>
	// 100 10
}

func BenchmarkWrapper(b *testing.B) {
	reg, _ := r4c.NewRegistry()
	client, err := orders.NewOrderClientResilient(&backend{}, reg)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() { // Cancel has the adaptive limit alone: the zero-allocation fast path
		if _, err := client.Cancel(ctx, "o"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPipeline(b *testing.B) {
	reg, _ := r4c.NewRegistry()
	p, err := r4c.NewPipeline[string](reg, "cancel", r4c.AdaptiveLimitConfig{})
	if err != nil {
		b.Fatal(err)
	}
	be := &backend{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Execute(ctx, func(ctx context.Context) (string, error) { return be.Cancel(ctx, "o") }); err != nil {
			b.Fatal(err)
		}
	}
}
