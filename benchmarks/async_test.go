package benchmarks

import (
	"context"
	"testing"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/timeout"
	"github.com/resilience4cata/r4c"
)

// completed is an asynchronous function whose future is complete when it returns: what
// ExecuteAsync costs besides the function itself.
func completed(context.Context) *r4c.Future[string] {
	f := r4c.NewFuture[string]()
	f.Complete("ok", nil)
	return f
}

// asyncCase is one contender of BenchmarkAsync: a call started and awaited to its end.
type asyncCase struct {
	name  string
	setup func(tb testing.TB) func() (string, error)
}

// asyncCases: through an adaptive limit alone and through the realistic stack (retry, breaker,
// limit, timeout), r4c's Go (fn in a goroutine per attempt) and ExecuteAsync (fn returns a
// completed future) against failsafe-go's GetAsync (fn in a goroutine) and RunAsync.
var asyncCases = []asyncCase{
	{"limit/Go/r4c", r4cAsync(false, r4cLimit)},
	{"limit/ExecuteAsync/r4c", r4cAsync(true, r4cLimit)},
	{"limit/GetAsync/failsafe", fsAsync(false, func() []failsafe.Policy[string] {
		return []failsafe.Policy[string]{newFailsafe()}
	})},
	{"limit/RunAsync/failsafe", fsAsync(true, func() []failsafe.Policy[string] {
		return []failsafe.Policy[string]{newFailsafe()}
	})},
	{"stack/Go/r4c", r4cAsync(false, r4cRetry, r4cBreaker, r4cLimit, r4cTimeout)},
	{"stack/ExecuteAsync/r4c", r4cAsync(true, r4cRetry, r4cBreaker, r4cLimit, r4cTimeout)},
	{"stack/GetAsync/failsafe", fsAsync(false, func() []failsafe.Policy[string] {
		return []failsafe.Policy[string]{fsRetry(), fsBreaker(), newFailsafe(), timeout.New[string](r4cTimeout.Timeout)}
	})},
	{"stack/RunAsync/failsafe", fsAsync(true, func() []failsafe.Policy[string] {
		return []failsafe.Policy[string]{fsRetry(), fsBreaker(), newFailsafe(), timeout.New[string](r4cTimeout.Timeout)}
	})},
}

func r4cAsync(executeAsync bool, cfgs ...r4c.PolicyConfig) func(testing.TB) func() (string, error) {
	return func(tb testing.TB) func() (string, error) {
		_, p := newPipeline(tb, cfgs...)
		ctx := context.Background()
		if executeAsync {
			return func() (string, error) { return p.ExecuteAsync(ctx, completed).Get(ctx) }
		}
		return func() (string, error) { return p.Go(ctx, work).Get(ctx) }
	}
}

func fsAsync(run bool, mk func() []failsafe.Policy[string]) func(testing.TB) func() (string, error) {
	return func(testing.TB) func() (string, error) {
		exec := failsafe.With[string](mk()...)
		if run {
			return func() (string, error) {
				_, err := exec.RunAsync(func() error { return nil }).Get()
				return "ok", err
			}
		}
		return func() (string, error) { return exec.GetAsync(workNoCtx).Get() }
	}
}

// BenchmarkAsync measures one asynchronous call, started and awaited to its end, on one
// goroutine, for every contender of asyncCases. Every round runs every contender.
func BenchmarkAsync(b *testing.B) {
	for _, c := range asyncCases {
		b.Run(c.name, func(b *testing.B) {
			call := c.setup(b)
			b.ReportAllocs()
			var v string
			for b.Loop() {
				var err error
				if v, err = call(); err != nil {
					b.Fatal(err)
				}
			}
			sinkStr = v
		})
	}
}

// TestAsyncContenders checks that every contender of BenchmarkAsync returns "ok".
func TestAsyncContenders(t *testing.T) {
	for _, c := range asyncCases {
		call := c.setup(t)
		for range 3 {
			if v, err := call(); v != "ok" || err != nil {
				t.Fatalf("%s: %q, %v", c.name, v, err)
			}
		}
	}
}
