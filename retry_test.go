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

// eventLog collects events safely.
type eventLog struct {
	mu     sync.Mutex
	events []r4c.Event
}

func (l *eventLog) Observe(e r4c.Event) { l.mu.Lock(); l.events = append(l.events, e); l.mu.Unlock() }

func (l *eventLog) of(typ r4c.EventType) []r4c.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []r4c.Event
	for _, e := range l.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func TestRetryBacksOffExponentiallyWithACap(t *testing.T) {
	log := &eventLog{}
	reg, clock := newRegistry(t, r4c.WithObserver(log.Observe))
	p := newPipeline[string](t, reg, "r", r4c.RetryConfig{MaxAttempts: 5, Wait: 100 * time.Millisecond, Multiplier: 2, MaxWait: 300 * time.Millisecond})
	var attempts atomic.Int64
	done := start(p, context.Background(), func(context.Context) (string, error) {
		attempts.Add(1)
		return "", errOverloaded
	})
	for i, wait := range []time.Duration{100, 200, 300, 300} {
		waitPending(t, clock, 1)
		if got := attempts.Load(); got != int64(i+1) {
			t.Fatalf("before wait %d: %d attempts", i, got)
		}
		clock.Advance(wait*time.Millisecond - 1)
		if attempts.Load() != int64(i+1) || clock.Pending() != 1 {
			t.Fatalf("wait %d ended early", i)
		}
		clock.Advance(1)
	}
	err := <-done
	var re *r4c.RetryExhaustedError
	if !errors.As(err, &re) || !errors.Is(err, errOverloaded) || re.Attempts != 5 || re.InstanceID() != "r" {
		t.Fatalf("%v", err)
	}
	h, _ := reg.Retry("r")
	if s := h.Snapshot(); s.Calls != 1 || s.Retries != 4 || s.Exhausted != 1 {
		t.Fatalf("%+v", s)
	}
	if ev := log.of(r4c.EventRetried); len(ev) != 4 || ev[0].Attempt != 1 || ev[3].Duration != 300*time.Millisecond || !errors.Is(ev[0].Err, errOverloaded) {
		t.Fatalf("%+v", ev)
	}
}

func TestRetrySucceedsAfterFailures(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[int](t, reg, "r", r4c.RetryConfig{Wait: time.Second})
	var attempts atomic.Int64
	got := make(chan int, 1)
	go func() {
		v, _ := p.Execute(context.Background(), func(context.Context) (int, error) {
			if n := attempts.Add(1); n < 3 {
				return 0, errOverloaded
			}
			return 42, nil
		})
		got <- v
	}()
	waitPending(t, clock, 1)
	clock.Advance(time.Second)
	waitPending(t, clock, 1)
	clock.Advance(time.Second)
	if v := <-got; v != 42 || attempts.Load() != 3 {
		t.Fatalf("%d after %d attempts", v, attempts.Load())
	}
}

func TestRetryOnAndAbortOn(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      r4c.RetryConfig
		err      error
		attempts int64
	}{
		{"every error by default", r4c.RetryConfig{MaxAttempts: 2, Wait: time.Nanosecond}, errNotFound, 2},
		{"abortOn stops at once", r4c.RetryConfig{MaxAttempts: 3, Wait: time.Nanosecond, AbortOn: []error{errNotFound}}, errNotFound, 1},
		{"retryOn lists what is retried", r4c.RetryConfig{MaxAttempts: 3, Wait: time.Nanosecond, RetryOn: []error{errOverloaded}}, errNotFound, 1},
		{"retryOn match", r4c.RetryConfig{MaxAttempts: 3, Wait: time.Nanosecond, RetryOn: []error{errOverloaded}}, errOverloaded, 3},
		{"abortOn wins over retryOn", r4c.RetryConfig{MaxAttempts: 3, Wait: time.Nanosecond, RetryOn: []error{errOverloaded}, AbortOn: []error{errOverloaded}}, errOverloaded, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, clock := newRegistry(t)
			p := newPipeline[string](t, reg, "r", tc.cfg)
			var attempts atomic.Int64
			done := start(p, context.Background(), func(context.Context) (string, error) { attempts.Add(1); return "", tc.err })
			for {
				select {
				case err := <-done:
					if !errors.Is(err, tc.err) || attempts.Load() != tc.attempts {
						t.Fatalf("%v after %d attempts, want %d", err, attempts.Load(), tc.attempts)
					}
					return
				default:
					if clock.Pending() > 0 {
						clock.Advance(time.Nanosecond)
					}
				}
			}
		})
	}
}

func TestRetryStopsWhenTheCallerCancels(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "r", r4c.RetryConfig{MaxAttempts: 10, Wait: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	var attempts atomic.Int64
	done := start(p, ctx, func(context.Context) (string, error) { attempts.Add(1); return "", errOverloaded })
	waitPending(t, clock, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || attempts.Load() != 1 || clock.Pending() != 0 {
		t.Fatalf("%v, %d attempts, %d timers", err, attempts.Load(), clock.Pending())
	}
	// A failure after the caller cancelled is not retried either.
	ctx2, cancel2 := context.WithCancel(context.Background())
	_, err := p.Execute(ctx2, func(context.Context) (string, error) { cancel2(); return "", errOverloaded })
	if !errors.Is(err, errOverloaded) || clock.Pending() != 0 {
		t.Fatalf("%v", err)
	}
}

func TestRetryJitterStaysWithinBounds(t *testing.T) {
	log := &eventLog{}
	reg, clock := newRegistry(t, r4c.WithObserver(log.Observe))
	p := newPipeline[string](t, reg, "r", r4c.RetryConfig{MaxAttempts: 50, Wait: time.Second, Jitter: 0.25})
	done := start(p, context.Background(), func(context.Context) (string, error) { return "", errOverloaded })
	for i := 0; i < 49; i++ {
		waitPending(t, clock, 1)
		ev := log.of(r4c.EventRetried)
		// Advance by exactly this wait: a longer step could also fire the next one.
		clock.Advance(ev[len(ev)-1].Duration)
	}
	<-done
	distinct := map[time.Duration]bool{}
	for _, e := range log.of(r4c.EventRetried) {
		if e.Duration < 750*time.Millisecond || e.Duration > 1250*time.Millisecond {
			t.Fatalf("wait %v outside 1s ± 25%%", e.Duration)
		}
		distinct[e.Duration] = true
	}
	if len(distinct) < 10 {
		t.Fatalf("only %d distinct waits in 49: no jitter?", len(distinct))
	}
}
