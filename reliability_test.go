package r4c_test

// Regression tests for the defects an adversarial run found (async edges, hostile values,
// failures that half-applied, parsers), each named after what it proves. The async ones that
// live with the asynchronous driver's tests are named there: a Complete by the holder of the
// returned future ends the call (TestAsyncCompletingTheReturnedFutureEndsTheCall), and a panic
// in the first attempt is re-raised in the caller while a later one fails the future
// (TestAsyncPanics).

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/directive"
)

// 1. A Go call whose context is already cancelled never starts its function: 100 of them
// through a limit of 1 run nothing, alone or behind other policies.
func TestGoWithACancelledContextNeverStartsTheFunction(t *testing.T) {
	for _, cfgs := range [][]r4c.PolicyConfig{
		{r4c.AdaptiveLimitConfig{InitialLimit: 1, MaxLimit: 1}},
		{r4c.RetryConfig{MaxAttempts: 3}, r4c.AdaptiveLimitConfig{InitialLimit: 1, MaxLimit: 1}, r4c.TimeoutConfig{}},
	} {
		p, s := newStack(t, "cancelled", cfgs...)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var ran atomic.Int32
		for range 100 {
			f := p.Go(ctx, func(context.Context) (string, error) { ran.Add(1); return "", nil })
			if _, err := result(t, f); err != context.Canceled {
				t.Fatalf("%v, want context.Canceled at once", err)
			}
		}
		if ran.Load() != 0 {
			t.Fatalf("%d functions ran", ran.Load())
		}
		s.idle(t)
	}
}

// 2. Cancelling a Go future behind other policies frees the slot at once, and the function's
// late return is no sample.
func TestCancellingAGoFutureFreesTheSlotAtOnceWithoutASample(t *testing.T) {
	p, s := newStack(t, "go-cancel", r4c.RetryConfig{MaxAttempts: 2}, r4c.AdaptiveLimitConfig{InitialLimit: 1, MaxLimit: 1})
	release, returned := make(chan struct{}), make(chan struct{})
	f := p.Go(context.Background(), func(context.Context) (string, error) {
		defer close(returned)
		<-release // ignores its context
		return "late", nil
	})
	if s.limit.InFlight() != 1 {
		t.Fatalf("%d in flight, want the call's slot", s.limit.InFlight())
	}
	f.Cancel()
	if s.limit.InFlight() != 0 {
		t.Fatalf("%d in flight after Cancel, want the slot freed at once", s.limit.InFlight())
	}
	s.clock.Advance(5 * time.Second)
	close(release)
	<-returned
	mustExecute(t, p, taking(nil, 0, nil))
	if ls := s.limit.Snapshot(); ls.WindowSamples != 1 || ls.WindowLatency >= time.Second {
		t.Fatalf("window: %d samples, latency %v; want only the next call's (the 5s return is no sample)", ls.WindowSamples, ls.WindowLatency)
	}
}

// 3. A Go function that ends its goroutine with runtime.Goexit (t.FailNow does) fails its future
// and frees its slot, through a limit alone or behind other policies.
func TestGoexitInGoFailsTheFutureAndFreesTheSlot(t *testing.T) {
	for _, cfgs := range [][]r4c.PolicyConfig{
		{r4c.AdaptiveLimitConfig{InitialLimit: 1, MaxLimit: 1}},
		{r4c.RetryConfig{MaxAttempts: 3}, r4c.AdaptiveLimitConfig{InitialLimit: 1, MaxLimit: 1}},
	} {
		p, s := newStack(t, "goexit", cfgs...)
		f := p.Go(context.Background(), func(context.Context) (string, error) { runtime.Goexit(); return "", nil })
		<-f.Done()
		if _, err := f.Get(context.Background()); err == nil || !strings.Contains(err.Error(), "Goexit") {
			t.Fatalf("err %v, want the Goexit reported", err)
		}
		s.idle(t)
	}
}

// 6. Sizes that allocate are bounded: a huge SlidingWindowSize is a coded error, from Go code
// and from text, not a panic or an out-of-memory.
func TestHugeSlidingWindowIsACodedError(t *testing.T) {
	for _, n := range []int{math.MaxInt, 1 << 40, 1_000_001} {
		reg, _ := newRegistry(t)
		_, err := r4c.NewPipeline[string](reg, "cb", r4c.CircuitBreakerConfig{SlidingWindowSize: n})
		if r4c.ErrorCode(err) != "R4C-REG-001" || !strings.Contains(err.Error(), "1 to 1000000") {
			t.Fatalf("SlidingWindowSize %d: %v", n, err)
		}
	}
	_, err := r4c.NewRegistry(r4c.WithProperties(map[string]string{"defaults.circuitBreaker.slidingWindowSize": "1099511627776"}))
	if r4c.ErrorCode(err) == "" || !strings.Contains(err.Error(), "1 to 1000000") {
		t.Fatalf("from text: %v", err)
	}
	reg, _ := newRegistry(t)
	if _, err := r4c.NewPipeline[string](reg, "cb", r4c.CircuitBreakerConfig{SlidingWindowSize: 1_000_000, MinimumCalls: 1}); err != nil {
		t.Fatalf("the largest size: %v", err)
	}
}

// 7. Limits at math.MaxInt stay in range after a window: an estimate of 2^63 does not wrap to
// math.MinInt on its way back to an int.
func TestLimitsAtMaxIntStayInRange(t *testing.T) {
	for _, alg := range []r4c.LimitAlgorithm{r4c.Gradient2, r4c.AIMD, r4c.Vegas, r4c.Knee} {
		p, s := newStack(t, "huge", r4c.AdaptiveLimitConfig{Algorithm: alg, InitialLimit: math.MaxInt, MaxLimit: math.MaxInt})
		for range 3 {
			s.clock.Advance(time.Second)
			mustExecute(t, p, taking(s.clock, time.Millisecond, nil))
		}
		if got := s.limit.Limit(); got < 1 || got > math.MaxInt {
			t.Fatalf("%v: limit %d after three windows", alg, got)
		}
		if got := s.limit.Limit(); alg == r4c.AIMD && got != math.MaxInt {
			t.Fatalf("AIMD: limit %d, want it held at MaxLimit", got)
		}
	}
}

// 8. The longest retry wait waits: one attempt, then a wait that only the caller's context ends.
func TestTheLongestRetryWaitWaitsUntilTheContextEnds(t *testing.T) {
	p, s := newStack(t, "long-wait", r4c.RetryConfig{MaxAttempts: 2, Wait: time.Duration(math.MaxInt64)})
	ctx, cancel := context.WithCancel(context.Background())
	attempts := 0
	f := p.ExecuteAsync(ctx, func(context.Context) *r4c.Future[string] {
		attempts++
		g := r4c.NewFuture[string]()
		g.Complete("", errOverloaded)
		return g
	})
	s.clock.Advance(24 * time.Hour)
	if attempts != 1 || isDone(f) {
		t.Fatalf("after a day: %d attempts, done %v; want one attempt, still waiting", attempts, isDone(f))
	}
	cancel()
	if _, err := f.Get(context.Background()); err != context.Canceled {
		t.Fatalf("%v", err)
	}
	// The synchronous retry too: it sleeps until the context ends.
	ctx2, cancel2 := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Execute(ctx2, taking(nil, 0, errOverloaded))
		done <- err
	}()
	waitPending(t, s.clock, 1)
	s.clock.Advance(24 * time.Hour)
	select {
	case err := <-done:
		t.Fatalf("the synchronous retry did not wait: %v", err)
	default:
	}
	cancel2()
	if err := <-done; err != context.Canceled {
		t.Fatalf("%v", err)
	}
}

// 9. A rate limiter with the longest period and wait admits no call it should not: the second
// call waits for the next period, which never comes.
func TestTheLongestRatePeriodAdmitsNoExtraCall(t *testing.T) {
	p, s := newStack(t, "long-rate", r4c.RateLimiterConfig{Limit: 1, Period: time.Duration(math.MaxInt64), MaxWait: time.Duration(math.MaxInt64)})
	var fns asyncFns
	var futures []*r4c.Future[string]
	for range 3 {
		futures = append(futures, p.ExecuteAsync(context.Background(), fns.fn))
	}
	s.clock.Advance(24 * time.Hour)
	if fns.n() != 1 {
		t.Fatalf("%d calls admitted, want 1", fns.n())
	}
	for _, f := range futures[1:] {
		f.Cancel()
	}
	fns.call(t, 0).f.Complete("", nil)
	s.idle(t)
}

// 11. A pipeline that fails on its fallback registers nothing: a correct pipeline for the same
// id, with other settings, is built next.
func TestAFailedFallbackRegistersNothing(t *testing.T) {
	reg, _ := newRegistry(t)
	bad := []r4c.PolicyConfig{r4c.AdaptiveLimitConfig{MaxLimit: 10}}
	for _, fb := range []r4c.PolicyConfig{
		r4c.Fallback(func(context.Context, error) (int, error) { return 0, nil }), // the wrong type
		r4c.Fallback[string](nil),
		r4c.Fallback(func(context.Context, error) (string, error) { return "", nil }, nil),
	} {
		if _, err := r4c.NewPipeline[string](reg, "fb", append(bad, fb)...); r4c.ErrorCode(err) == "" {
			t.Fatalf("a bad fallback accepted: %v", err)
		}
	}
	if _, err := reg.AdaptiveLimit("fb"); r4c.ErrorCode(err) != "R4C-REG-009" {
		t.Fatalf("an instance was left registered: %v", err)
	}
	if _, err := r4c.NewPipeline[string](reg, "fb", r4c.AdaptiveLimitConfig{MaxLimit: 20}); err != nil {
		t.Fatalf("the correct pipeline: %v", err)
	}
}

// 12. Observer panics never corrupt a policy: a breaker whose observer panics at every transition
// still goes open, half-open and closed; the panics are counted. A nil observer is refused.
func TestObserverPanicsNeverCorruptABreaker(t *testing.T) {
	reg, clock := newRegistry(t, r4c.WithObserver(func(r4c.Event) { panic("observer") }))
	p := newPipeline[string](t, reg, "cb", r4c.CircuitBreakerConfig{SlidingWindowSize: 1, MinimumCalls: 1,
		WaitInOpen: time.Second, PermittedCallsInHalfOpen: 1})
	cb, _ := reg.CircuitBreaker("cb")
	_, _ = p.Execute(context.Background(), taking(nil, 0, errOverloaded))
	if cb.State() != r4c.CircuitOpen {
		t.Fatalf("state %v, want open", cb.State())
	}
	clock.Advance(time.Second)
	mustExecute(t, p, taking(nil, 0, nil)) // half-open, then closed by the trial's success
	if cb.State() != r4c.CircuitClosed {
		t.Fatalf("state %v after a successful trial, want closed", cb.State())
	}
	if n := reg.Snapshot().ObserverPanics; n < 3 {
		t.Fatalf("%d observer panics counted, want one per transition", n)
	}
	if _, err := r4c.NewRegistry(r4c.WithObserver(nil)); r4c.ErrorCode(err) != "R4C-REG-001" {
		t.Fatalf("WithObserver(nil): %v", err)
	}
}

// 13. Nothing panics on a nil registry or a nil call argument: each is a coded error.
func TestNilRegistryAndNilCallArgumentsAreCodedErrors(t *testing.T) {
	var reg *r4c.Registry
	lookups := map[string]func() error{
		"AdaptiveLimit":  func() error { _, err := reg.AdaptiveLimit("x"); return err },
		"Bulkhead":       func() error { _, err := reg.Bulkhead("x"); return err },
		"Timeout":        func() error { _, err := reg.Timeout("x"); return err },
		"RateLimiter":    func() error { _, err := reg.RateLimiter("x"); return err },
		"Retry":          func() error { _, err := reg.Retry("x"); return err },
		"CircuitBreaker": func() error { _, err := reg.CircuitBreaker("x"); return err },
		"Hedge":          func() error { _, err := reg.Hedge("x"); return err },
		"NewPipeline":    func() error { _, err := r4c.NewPipeline[string](reg, "x"); return err },
	}
	for name, f := range lookups {
		if err := f(); r4c.ErrorCode(err) != "R4C-REG-010" {
			t.Errorf("%s on a nil registry: %v", name, err)
		}
	}
	if s := reg.Snapshot(); len(s.AdaptiveLimits) != 0 || reg.Clock() == nil {
		t.Error("a nil registry's snapshot or clock")
	}
	real, _ := newRegistry(t)
	p := newPipeline[string](t, real, "calls", r4c.AdaptiveLimitConfig{})
	var nilCtx context.Context
	for name, err := range map[string]error{
		"Execute, nil context":    second(p.Execute(nilCtx, taking(nil, 0, nil))),
		"Execute, nil function":   second(p.Execute(context.Background(), nil)),
		"Go, nil context":         second(p.Go(nilCtx, taking(nil, 0, nil)).Get(context.Background())),
		"ExecuteAsync, nil fn":    second(p.ExecuteAsync(context.Background(), nil).Get(context.Background())),
		"Future.Get, nil context": second(r4c.NewFuture[string]().Get(nilCtx)),
	} {
		if r4c.ErrorCode(err) != "R4C-CALL-001" {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := p.Execute(nilCtx, taking(nil, 0, nil)); err.Error() != `R4C-CALL-001: pipeline "calls": the context is nil: the library never substitutes one` {
		t.Errorf("message %q (docs/errors.md quotes it)", err.Error())
	}
}

func second[T any](_ T, err error) error { return err }

// 14. An unknown key of any length gets its did-you-mean in time linear in its length: a
// 100 kB instance id shares its prefix with the candidates, which is not compared.
func TestDidYouMeanOfAHugeKey(t *testing.T) {
	id := strings.Repeat("a", 100_000)
	_, err := r4c.NewRegistry(r4c.WithProperties(map[string]string{"instances." + id + ".adaptiveLimit.maxLimt": "5"}))
	if r4c.ErrorCode(err) != "R4C-CFG-001" || !strings.Contains(err.Error(), "adaptiveLimit.maxLimit\"?") {
		t.Fatalf("%.200v", err)
	}
}

// 14. JSON nested deeper than a configuration needs is a coded error, not 100 MB of memory.
func TestJSONNestedTooDeepIsACodedError(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	path := filepath.Join(t.TempDir(), "deep.json")
	if err := os.WriteFile(path, []byte(deep), 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := r4c.NewRegistry(r4c.WithJSONFile(path))
	runtime.ReadMemStats(&after)
	if r4c.ErrorCode(err) != "R4C-CFG-002" || !strings.Contains(err.Error(), "nested deeper than 16") {
		t.Fatalf("%.300v", err)
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 4<<20 {
		t.Fatalf("parsing allocated %d bytes", grown)
	}
}

// 15. A lone value's error points at the value itself, not past the attribute.
func TestDirectiveLoneValueErrorPointsAtTheValue(t *testing.T) {
	text := "//r4c:retry 0"
	_, err := directive.Parse(text)
	var de directive.Positioned
	if !errors.As(err, &de) || de.DirectiveOffset() != strings.Index(text, "0") {
		t.Fatalf("%v (offset %d), want offset %d", err, de.DirectiveOffset(), strings.Index(text, "0"))
	}
}
