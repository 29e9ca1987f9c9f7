package r4c_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// countingClock is a manual clock that counts monotonic reads.
type countingClock struct {
	*r4ctest.ManualClock
	reads atomic.Int64
}

func (c *countingClock) Nanotime() int64 {
	c.reads.Add(1)
	return c.ManualClock.Nanotime()
}

func newCountingClock() *countingClock { return &countingClock{ManualClock: r4ctest.NewManualClock()} }

// newRegistry returns a registry on a fresh manual clock.
func newRegistry(t *testing.T, opts ...r4c.Option) (*r4c.Registry, *r4ctest.ManualClock) {
	t.Helper()
	clock := r4ctest.NewManualClock()
	reg, err := r4c.NewRegistry(append([]r4c.Option{r4c.WithClock(clock)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg, clock
}

func newPipeline[T any](t *testing.T, reg *r4c.Registry, id string, cfgs ...r4c.PolicyConfig) *r4c.Pipeline[T] {
	t.Helper()
	p, err := r4c.NewPipeline[T](reg, id, cfgs...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func handle(t *testing.T, reg *r4c.Registry, id string) *r4c.AdaptiveLimitHandle {
	t.Helper()
	h, err := reg.AdaptiveLimit(id)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// taking returns a function that takes d on clock and returns err.
func taking(clock *r4ctest.ManualClock, d time.Duration, err error) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		if clock != nil {
			clock.Advance(d)
		}
		if err != nil {
			return "", err
		}
		return "ok", nil
	}
}

func mustExecute(t *testing.T, p *r4c.Pipeline[string], fn func(context.Context) (string, error)) {
	t.Helper()
	if _, err := p.Execute(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func acquire(t *testing.T, h *r4c.AdaptiveLimitHandle) r4c.AdaptiveLimitPermit {
	t.Helper()
	p, err := h.Acquire()
	if err != nil {
		t.Fatalf("Acquire: %v (limit %d, in flight %d)", err, h.Limit(), h.InFlight())
	}
	return p
}

func expectRejected(t *testing.T, err error, id string) {
	t.Helper()
	if !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("err = %v, want ErrLimitExceeded", err)
	}
	var le *r4c.LimitExceededError
	if !errors.As(err, &le) || le.InstanceID() != id {
		t.Fatalf("err = %#v, want *LimitExceededError for %q", err, id)
	}
}

var errOverloaded = errors.New("overloaded")
var errNotFound = errors.New("not found")

// The algorithms' concrete types are unexported; tests reach the extra readings they expose
// (beyond AdaptiveAlgorithm) through these interfaces, as any user can.
type (
	gradient2Alg interface {
		r4c.AdaptiveAlgorithm
		LongLatency() float64
	}
	vegasAlg interface {
		r4c.AdaptiveAlgorithm
		NoLoadLatency() time.Duration
	}
	kneeAlg = vegasAlg
)
