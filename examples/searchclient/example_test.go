package searchclient_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/examples/searchclient"
	"github.com/resilience4cata/r4c/r4ctest"
)

// backend is the dependency: it answers at once.
type backend struct{}

func (backend) Search(ctx context.Context, query string) (string, error) {
	return query, nil
}

// The generated wrapper applies the method's //r4c:adaptivelimit; its instance id is the
// method's: import path, type, method and parameter types.
func ExampleNewSearchClientResilient() {
	clock := r4ctest.NewManualClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock), r4c.WithDefaults(r4c.AdaptiveLimitConfig{InitialLimit: 1, MinWindowSamples: 1}))
	if err != nil {
		panic(err)
	}
	client, err := searchclient.NewSearchClientResilient(backend{}, reg)
	if err != nil {
		panic(err)
	}
	fmt.Println(client.Search(context.Background(), "go"))

	limit, _ := reg.AdaptiveLimit("github.com/resilience4cata/r4c/examples/searchclient.SearchClient#Search(context.Context,string)")
	held, _ := limit.Acquire() // somebody holds the only slot
	_, err = client.Search(context.Background(), "go")
	fmt.Println(errors.Is(err, r4c.ErrLimitExceeded))
	held.Success()

	// r4c.Of finds the wrapper that the generated file registered.
	var sc searchclient.SearchClient
	sc, err = r4c.Of[searchclient.SearchClient](backend{}, reg)
	fmt.Println(err)
	fmt.Println(sc.Search(context.Background(), "r4c"))
	// Output:
	// go <nil>
	// true
	// <nil>
	// r4c <nil>
}

func BenchmarkWrapper(b *testing.B) {
	reg, _ := r4c.NewRegistry()
	client, err := searchclient.NewSearchClientResilient(backend{}, reg)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := client.Search(ctx, "go"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPipeline(b *testing.B) {
	reg, _ := r4c.NewRegistry()
	p, err := r4c.NewPipeline[string](reg, "search", r4c.AdaptiveLimitConfig{})
	if err != nil {
		b.Fatal(err)
	}
	var be backend
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Execute(ctx, func(ctx context.Context) (string, error) { return be.Search(ctx, "go") }); err != nil {
			b.Fatal(err)
		}
	}
}

func TestWrapperAllocatesNothing(t *testing.T) {
	reg, _ := r4c.NewRegistry()
	client, err := searchclient.NewSearchClientResilient(backend{}, reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() { client.Search(ctx, "go") }); n != 0 {
		t.Errorf("Search allocates %v times per call, want 0", n)
	}
}
