package r4c_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// cbSlow is the SlowCallDuration of the breakers in these tests: 'S' and 'F' calls take it.
const cbSlow = time.Second

var (
	errCBDown = errors.New("dependency down")
	errCBBad  = errors.New("bad request")
)

// cbEvents records a registry's events; it is safe for concurrent use.
type cbEvents struct {
	mu     sync.Mutex
	events []r4c.Event
}

func (l *cbEvents) Observe(e r4c.Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// take returns the events recorded since the last take, each as "rejected" or "old>new".
func (l *cbEvents) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []string{}
	for _, e := range l.events {
		if e.Kind != r4c.KindCircuitBreaker {
			continue
		}
		switch e.Type {
		case r4c.EventRejected:
			out = append(out, "rejected")
		case r4c.EventStateChanged:
			out = append(out, e.OldState.String()+">"+e.State.String())
		default:
			out = append(out, e.Type.String())
		}
	}
	l.events = nil
	return out
}

// cbBreaker is a pipeline with only a circuit breaker, on a manual clock, with its handle and
// the registry's events.
type cbBreaker struct {
	t      *testing.T
	reg    *r4c.Registry
	p      *r4c.Pipeline[string]
	h      *r4c.CircuitBreakerHandle
	clock  *r4ctest.ManualClock
	events *cbEvents
	ran    int // functions called
}

func newCB(t *testing.T, cfg r4c.CircuitBreakerConfig) *cbBreaker {
	t.Helper()
	events := &cbEvents{}
	reg, clock := newRegistry(t, r4c.WithObserver(events.Observe))
	if cfg.SlowCallDuration == 0 {
		cfg.SlowCallDuration = cbSlow
	}
	p := newPipeline[string](t, reg, "cb", cfg)
	h, err := reg.CircuitBreaker("cb")
	if err != nil {
		t.Fatal(err)
	}
	return &cbBreaker{t: t, reg: reg, p: p, h: h, clock: clock, events: events}
}

// fn returns the function of one call: 's' succeeds, 'f' fails with errCBDown, 'S' and 'F' do
// the same taking cbSlow on the clock.
func (b *cbBreaker) fn(c byte) func(context.Context) (string, error) {
	b.t.Helper()
	var d time.Duration
	var err error
	switch c {
	case 's':
	case 'f':
		err = errCBDown
	case 'S':
		d = cbSlow
	case 'F':
		d, err = cbSlow, errCBDown
	default:
		b.t.Fatalf("unknown call %q", c)
	}
	f := taking(b.clock, d, err)
	return func(ctx context.Context) (string, error) {
		b.ran++
		return f(ctx)
	}
}

// do runs one call per byte of calls (see fn) and returns the state after each one, as 'c',
// 'o' or 'h', and the error of the last.
func (b *cbBreaker) do(calls string) (states string, err error) {
	b.t.Helper()
	for i := range len(calls) {
		_, err = b.p.Execute(context.Background(), b.fn(calls[i]))
		states += string(b.h.State().String()[0])
	}
	return states, err
}

// expectOpenError fails unless err is the breaker's rejection.
func expectOpenError(t *testing.T, err error, id string) {
	t.Helper()
	var oe *r4c.CircuitOpenError
	if !errors.Is(err, r4c.ErrCircuitOpen) || !errors.As(err, &oe) || oe.InstanceID() != id {
		t.Fatalf("err = %v, want the *CircuitOpenError of %q", err, id)
	}
}

func TestCircuitBreakerClosedRecordsAndOpens(t *testing.T) {
	tests := []struct {
		name  string
		cfg   r4c.CircuitBreakerConfig
		calls string // see cbBreaker.fn
		want  string // the state after each call
	}{
		{"failure rate reaches the threshold", r4c.CircuitBreakerConfig{SlidingWindowSize: 4, MinimumCalls: 4},
			"ssff", "ccco"},
		{"failure rate below the threshold", r4c.CircuitBreakerConfig{SlidingWindowSize: 4, MinimumCalls: 4},
			"sssfs", "ccccc"},
		{"not before the minimum calls", r4c.CircuitBreakerConfig{SlidingWindowSize: 10, MinimumCalls: 5},
			"ffffs", "cccco"},
		{"the minimum is capped at the window", r4c.CircuitBreakerConfig{SlidingWindowSize: 3, MinimumCalls: 10},
			"sff", "cco"},
		{"a custom failure threshold", r4c.CircuitBreakerConfig{SlidingWindowSize: 4, MinimumCalls: 4, FailureRateThreshold: 75},
			"fsfsf", "ccccc"},
		{"a custom failure threshold reached", r4c.CircuitBreakerConfig{SlidingWindowSize: 4, MinimumCalls: 4, FailureRateThreshold: 75},
			"fsff", "ccco"},
		{"slow-call rate reaches the threshold", r4c.CircuitBreakerConfig{SlidingWindowSize: 4, MinimumCalls: 4, SlowCallRateThreshold: 50},
			"sSsS", "ccco"},
		{"slow calls below the default threshold of 100", r4c.CircuitBreakerConfig{SlidingWindowSize: 3, MinimumCalls: 3},
			"SSsSSs", "cccccc"},
		{"every call slow at the default threshold", r4c.CircuitBreakerConfig{SlidingWindowSize: 3, MinimumCalls: 3},
			"SSS", "cco"},
		{"slow failures count in both rates", r4c.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, FailureRateThreshold: 100, SlowCallRateThreshold: 100},
			"FF", "co"},
		// Cumulatively 2 failures in 7 calls (29%) would stay closed; the window holds ssff.
		{"the rates are over the window only", r4c.CircuitBreakerConfig{SlidingWindowSize: 4, MinimumCalls: 4},
			"sssssff", "cccccco"},
		{"one failure in every window of four stays closed", r4c.CircuitBreakerConfig{SlidingWindowSize: 4, MinimumCalls: 4},
			"fsssfsssfsss", "cccccccccccc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCB(t, tt.cfg)
			if got, _ := b.do(tt.calls); got != tt.want {
				t.Fatalf("states %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCircuitBreakerSlowIsMeasuredOnTheClock(t *testing.T) {
	b := newCB(t, r4c.CircuitBreakerConfig{SlidingWindowSize: 10, MinimumCalls: 10})
	for _, d := range []time.Duration{cbSlow - 1, cbSlow, cbSlow + 1, 0} {
		if _, err := b.p.Execute(context.Background(), taking(b.clock, d, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if s := b.h.Snapshot(); s.BufferedCalls != 4 || s.SlowCalls != 2 || s.FailedCalls != 0 {
		t.Fatalf("snapshot %+v, want 4 calls, 2 slow (a call of exactly SlowCallDuration is slow)", s)
	}
}

func TestCircuitBreakerRingBufferEviction(t *testing.T) {
	b := newCB(t, r4c.CircuitBreakerConfig{SlidingWindowSize: 3, MinimumCalls: 3, FailureRateThreshold: 100, SlowCallRateThreshold: 100})
	steps := []struct {
		call                  byte
		buffered, failed, slo int
	}{
		{'f', 1, 1, 0},
		{'S', 2, 1, 1},
		{'s', 3, 1, 1},
		{'s', 3, 0, 1}, // the f falls out
		{'F', 3, 1, 1}, // the S falls out
		{'s', 3, 1, 1},
		{'s', 3, 1, 1},
		{'s', 3, 0, 0}, // the F falls out
	}
	for i, st := range steps {
		if _, err := b.do(string(st.call)); err != nil && st.call != 'f' && st.call != 'F' {
			t.Fatal(err)
		}
		s := b.h.Snapshot()
		if s.BufferedCalls != st.buffered || s.FailedCalls != st.failed || s.SlowCalls != st.slo || s.State != r4c.CircuitClosed {
			t.Fatalf("after call %d (%c): %+v, want %d buffered, %d failed, %d slow", i, st.call, s, st.buffered, st.failed, st.slo)
		}
	}
}

func TestCircuitBreakerOpenRejectsWithoutCalling(t *testing.T) {
	b := newCB(t, r4c.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, WaitInOpen: time.Minute})
	if states, _ := b.do("ff"); states != "co" {
		t.Fatalf("states %s", states)
	}
	ran := b.ran
	for i := range 3 {
		v, err := b.p.Execute(context.Background(), b.fn('s'))
		expectOpenError(t, err, "cb")
		if v != "" {
			t.Fatalf("value %q", v)
		}
		if got := b.h.Snapshot().NotPermitted; got != int64(i+1) {
			t.Fatalf("NotPermitted %d, want %d", got, i+1)
		}
	}
	if b.ran != ran {
		t.Fatal("an open breaker called the function")
	}
	_, err := b.p.Execute(context.Background(), b.fn('s'))
	if got, want := err.Error(), `r4c: circuit breaker "cb" is open`; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
	// Nothing is scheduled: the wait is checked by the next call, and State does not move it.
	if b.clock.Pending() != 0 {
		t.Fatalf("%d timers pending", b.clock.Pending())
	}
	b.clock.Advance(time.Hour)
	if b.h.State() != r4c.CircuitOpen {
		t.Fatalf("state %v after the wait, before any call; want open", b.h.State())
	}
}

func TestCircuitBreakerHalfOpen(t *testing.T) {
	const wait = 10 * time.Second
	tests := []struct {
		name     string
		cfg      r4c.CircuitBreakerConfig
		trials   string
		want     string // the state after each trial
		wantLast r4c.CircuitState
	}{
		{"successful trials close", r4c.CircuitBreakerConfig{PermittedCallsInHalfOpen: 3},
			"sss", "hhc", r4c.CircuitClosed},
		{"failures below the threshold close", r4c.CircuitBreakerConfig{PermittedCallsInHalfOpen: 3},
			"sfs", "hhc", r4c.CircuitClosed},
		{"failures at the threshold reopen", r4c.CircuitBreakerConfig{PermittedCallsInHalfOpen: 2},
			"sf", "ho", r4c.CircuitOpen},
		{"an early failure waits for every trial", r4c.CircuitBreakerConfig{PermittedCallsInHalfOpen: 4},
			"ffss", "hhho", r4c.CircuitOpen},
		{"slow trials reopen", r4c.CircuitBreakerConfig{PermittedCallsInHalfOpen: 2, SlowCallRateThreshold: 50},
			"sS", "ho", r4c.CircuitOpen},
		{"one trial", r4c.CircuitBreakerConfig{PermittedCallsInHalfOpen: 1},
			"s", "c", r4c.CircuitClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.SlidingWindowSize, cfg.MinimumCalls, cfg.WaitInOpen = 2, 2, wait
			b := newCB(t, cfg)
			b.do("ff")
			b.clock.Advance(wait - 1)
			_, err := b.do("s")
			expectOpenError(t, err, "cb")
			b.clock.Advance(1)
			if got, _ := b.do(tt.trials); got != tt.want {
				t.Fatalf("states %s, want %s", got, tt.want)
			}
			s := b.h.Snapshot()
			switch tt.wantLast {
			case r4c.CircuitClosed:
				// Closed with an empty buffer: the failures before the trials are gone.
				if s.BufferedCalls != 0 || s.FailureRate != -1 {
					t.Fatalf("closed with %+v, want an empty buffer", s)
				}
				if states, _ := b.do("f"); states != "c" {
					t.Fatalf("one failure after closing: %s", states)
				}
			case r4c.CircuitOpen:
				// The rates are the trials' alone, and a new full wait starts.
				if s.BufferedCalls != len(tt.trials) {
					t.Fatalf("reopened with %+v, want the %d trials", s, len(tt.trials))
				}
				b.clock.Advance(wait - 1)
				_, err := b.do("s")
				expectOpenError(t, err, "cb")
				b.clock.Advance(1)
				if states, _ := b.do("s"); states[0] != 'h' && states[0] != 'c' {
					t.Fatalf("after the second wait: %s", states)
				}
			}
		})
	}
}

func TestCircuitBreakerHalfOpenRejectsExtraCalls(t *testing.T) {
	b := newCB(t, r4c.CircuitBreakerConfig{SlidingWindowSize: 1, MinimumCalls: 1, WaitInOpen: time.Second, PermittedCallsInHalfOpen: 2})
	b.do("f")
	b.clock.Advance(time.Second)
	b.events.take()
	ctx := context.Background()
	var third error
	// Calls nested inside a trial run while it is in flight: deterministic concurrency.
	_, err := b.p.Execute(ctx, func(ctx context.Context) (string, error) {
		_, err := b.p.Execute(ctx, func(ctx context.Context) (string, error) {
			_, third = b.p.Execute(ctx, b.fn('s'))
			return "second trial", nil
		})
		return "first trial", err
	})
	if err != nil {
		t.Fatal(err)
	}
	expectOpenError(t, third, "cb")
	if b.ran != 1 { // only the f
		t.Fatalf("the rejected third call ran")
	}
	if b.h.State() != r4c.CircuitClosed {
		t.Fatalf("state %v, want closed", b.h.State())
	}
	want := []string{"open>half_open", "rejected", "half_open>closed"}
	if got := b.events.take(); !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

func TestCircuitBreakerClassification(t *testing.T) {
	wrapped := fmt.Errorf("calling: %w", errCBDown)
	tests := []struct {
		name               string
		recordOn, ignoreOn []error
		err                error
		buffered, failed   int
	}{
		{"nil is a success", nil, nil, nil, 1, 0},
		{"any error is a failure by default", nil, nil, errCBBad, 1, 1},
		{"an error in IgnoreOn is not recorded", nil, []error{errCBBad}, errCBBad, 0, 0},
		{"IgnoreOn matches wrapped errors", nil, []error{errCBDown}, wrapped, 0, 0},
		{"an error outside IgnoreOn is a failure", nil, []error{errCBBad}, errCBDown, 1, 1},
		{"an error in RecordOn is a failure", []error{errCBDown}, nil, wrapped, 1, 1},
		{"an error outside RecordOn is a success", []error{errCBDown}, nil, errCBBad, 1, 0},
		{"IgnoreOn wins over RecordOn", []error{errCBDown}, []error{errCBDown}, errCBDown, 0, 0},
		{"a deadline of the function's own is a failure", nil, nil, context.DeadlineExceeded, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCB(t, r4c.CircuitBreakerConfig{SlidingWindowSize: 10, MinimumCalls: 10, RecordOn: tt.recordOn, IgnoreOn: tt.ignoreOn})
			_, err := b.p.Execute(context.Background(), taking(b.clock, 0, tt.err))
			if err != tt.err {
				t.Fatalf("err = %v, want the function's own %v", err, tt.err)
			}
			if s := b.h.Snapshot(); s.BufferedCalls != tt.buffered || s.FailedCalls != tt.failed {
				t.Fatalf("buffered %d, failed %d; want %d, %d", s.BufferedCalls, s.FailedCalls, tt.buffered, tt.failed)
			}
		})
	}
}

func TestCircuitBreakerCallerCancellationNotRecorded(t *testing.T) {
	b := newCB(t, r4c.CircuitBreakerConfig{SlidingWindowSize: 1, MinimumCalls: 1, WaitInOpen: time.Second, PermittedCallsInHalfOpen: 1})
	cancelled := func(ret error) func(context.Context) (string, error) {
		return func(context.Context) (string, error) { return "", ret }
	}
	for _, ret := range []error{context.Canceled, errCBDown} { // whatever the function returns
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := b.p.Execute(ctx, cancelled(ret)); err != ret {
			t.Fatalf("err = %v", err)
		}
		if s := b.h.Snapshot(); s.BufferedCalls != 0 || s.State != r4c.CircuitClosed {
			t.Fatalf("a cancelled call was recorded: %+v", s)
		}
	}
	// Half-open: a cancelled trial gives its permission back.
	b.do("f")
	b.clock.Advance(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := b.p.Execute(ctx, func(ctx context.Context) (string, error) {
		cancel()
		return "", ctx.Err()
	})
	if !errors.Is(err, context.Canceled) || b.h.State() != r4c.CircuitHalfOpen {
		t.Fatalf("err %v, state %v", err, b.h.State())
	}
	if states, err := b.do("s"); states != "c" || err != nil {
		t.Fatalf("the next trial: %s, %v; want it admitted and closing", states, err)
	}
}

func TestCircuitBreakerPanicNotRecorded(t *testing.T) {
	b := newCB(t, r4c.CircuitBreakerConfig{SlidingWindowSize: 1, MinimumCalls: 1, WaitInOpen: time.Second, PermittedCallsInHalfOpen: 1})
	panicking := func() (recovered any) {
		defer func() { recovered = recover() }()
		b.p.Execute(context.Background(), func(context.Context) (string, error) { panic("boom") })
		return nil
	}
	if r := panicking(); r != "boom" {
		t.Fatalf("recovered %v, want the panic to continue", r)
	}
	if s := b.h.Snapshot(); s.BufferedCalls != 0 || s.State != r4c.CircuitClosed {
		t.Fatalf("a panic was recorded: %+v", s)
	}
	b.do("f")
	b.clock.Advance(time.Second)
	if r := panicking(); r != "boom" {
		t.Fatalf("recovered %v", r)
	}
	if states, err := b.do("s"); states != "c" || err != nil {
		t.Fatalf("after a panicking trial: %s, %v; want the permission back", states, err)
	}
}

// A call admitted in one state (or period of it) records nothing once the breaker has moved on.
func TestCircuitBreakerLateOutcomesNotRecorded(t *testing.T) {
	b := newCB(t, r4c.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, WaitInOpen: time.Second, PermittedCallsInHalfOpen: 1})
	started := make(chan struct{})
	done := make(chan error)
	// slowCall starts a call that returns <-finish; it returns once the call is admitted.
	slowCall := func(finish chan error) {
		go func() {
			_, err := b.p.Execute(context.Background(), func(context.Context) (string, error) {
				started <- struct{}{}
				return "", <-finish
			})
			done <- err
		}()
		select {
		case <-started:
		case err := <-done:
			t.Fatalf("the call was not admitted: %v", err)
		}
	}
	finishClosed, finishTrial := make(chan error), make(chan error)
	slowCall(finishClosed) // admitted while closed
	b.do("ff")             // opens
	b.clock.Advance(time.Second)
	slowCall(finishTrial) // the trial
	if _, err := b.do("s"); !errors.Is(err, r4c.ErrCircuitOpen) {
		t.Fatalf("a second trial: %v", err)
	}
	finishClosed <- errCBDown // the call admitted while closed fails during half-open
	<-done
	if s := b.h.Snapshot(); s.State != r4c.CircuitHalfOpen || s.BufferedCalls != 0 {
		t.Fatalf("a call admitted while closed counted as a trial: %+v", s)
	}
	finishTrial <- nil // the trial succeeds
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := b.h.Snapshot(); s.State != r4c.CircuitClosed || s.BufferedCalls != 0 {
		t.Fatalf("after the trial: %+v", s)
	}
}

func TestCircuitBreakerEvents(t *testing.T) {
	b := newCB(t, r4c.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, WaitInOpen: time.Second, PermittedCallsInHalfOpen: 1})
	steps := []struct {
		do      func()
		want    []string
		wantErr bool
	}{
		{func() { b.do("sf") }, []string{"closed>open"}, false},
		{func() { b.do("s") }, []string{"rejected"}, false},
		{func() { b.clock.Advance(time.Second); b.do("f") }, []string{"open>half_open", "half_open>open"}, false},
		{func() { b.do("ss") }, []string{"rejected", "rejected"}, false},
		{func() { b.clock.Advance(time.Second); b.do("s") }, []string{"open>half_open", "half_open>closed"}, false},
		{func() { b.do("ss") }, []string{}, false}, // admitted calls publish nothing
		{func() { b.h.Reset() }, []string{}, false},
		{func() { b.do("ff") }, []string{"closed>open"}, false},
		{func() { b.h.Reset() }, []string{"open>closed"}, false},
	}
	for i, st := range steps {
		st.do()
		if got := b.events.take(); !slices.Equal(got, st.want) {
			t.Fatalf("step %d: events %q, want %q", i, got, st.want)
		}
	}
	// Every event names the instance and the kind.
	b.do("ff")
	b.do("s")
	b.events.mu.Lock()
	defer b.events.mu.Unlock()
	for _, e := range b.events.events {
		if e.Instance != "cb" || e.Kind != r4c.KindCircuitBreaker {
			t.Fatalf("event %+v", e)
		}
	}
	if len(b.events.events) != 2 {
		t.Fatalf("%d events", len(b.events.events))
	}
	if got := b.h.Snapshot().StateChanges; got != 8 {
		t.Fatalf("StateChanges %d, want 8", got)
	}
}

func TestCircuitBreakerSnapshot(t *testing.T) {
	b := newCB(t, r4c.CircuitBreakerConfig{SlidingWindowSize: 5, MinimumCalls: 4, FailureRateThreshold: 60,
		SlowCallRateThreshold: 80, WaitInOpen: time.Second, PermittedCallsInHalfOpen: 2})
	type want struct {
		state                   r4c.CircuitState
		failureRate, slowRate   float64
		buffered, failed, slows int
		notPermitted            int64
	}
	steps := []struct {
		do   func()
		want want
	}{
		{func() {}, want{r4c.CircuitClosed, -1, -1, 0, 0, 0, 0}},
		{func() { b.do("fSs") }, want{r4c.CircuitClosed, -1, -1, 3, 1, 1, 0}},
		{func() { b.do("s") }, want{r4c.CircuitClosed, 25, 25, 4, 1, 1, 0}},
		{func() { b.do("F") }, want{r4c.CircuitClosed, 40, 40, 5, 2, 2, 0}},
		{func() { b.do("f") }, want{r4c.CircuitClosed, 40, 40, 5, 2, 2, 0}}, // the first f falls out
		{func() { b.do("f") }, want{r4c.CircuitOpen, 60, 20, 5, 3, 1, 0}},   // the S falls out
		{func() { b.do("ss") }, want{r4c.CircuitOpen, 60, 20, 5, 3, 1, 2}},
		{func() { b.clock.Advance(time.Second); b.do("F") }, want{r4c.CircuitHalfOpen, -1, -1, 1, 1, 1, 2}},
		{func() { b.do("f") }, want{r4c.CircuitOpen, 100, 50, 2, 2, 1, 2}}, // the trials' rates
		{func() { b.clock.Advance(time.Second); b.do("ss") }, want{r4c.CircuitClosed, -1, -1, 0, 0, 0, 2}},
	}
	for i, st := range steps {
		st.do()
		s := b.h.Snapshot()
		got := want{s.State, s.FailureRate, s.SlowCallRate, s.BufferedCalls, s.FailedCalls, s.SlowCalls, s.NotPermitted}
		if got != st.want {
			t.Fatalf("step %d: %+v, want %+v", i, got, st.want)
		}
		if s.ID != "cb" || !s.Enabled {
			t.Fatalf("step %d: %+v", i, s)
		}
	}
	regSnap := b.reg.Snapshot().CircuitBreakers
	if len(regSnap) != 1 || regSnap[0] != b.h.Snapshot() {
		t.Fatalf("registry snapshot %+v", regSnap)
	}
}

func TestCircuitBreakerReset(t *testing.T) {
	b := newCB(t, r4c.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, WaitInOpen: time.Second, PermittedCallsInHalfOpen: 1})
	// Closed: the buffer is emptied, no event.
	b.do("f")
	b.h.Reset()
	if s := b.h.Snapshot(); s.BufferedCalls != 0 || s.State != r4c.CircuitClosed || s.StateChanges != 0 {
		t.Fatalf("after resetting a closed breaker: %+v", s)
	}
	if states, _ := b.do("f"); states != "c" {
		t.Fatal("the failure before the reset still counts")
	}
	// Open: closed at once, without waiting.
	b.do("f")
	b.do("s")
	b.h.Reset()
	s := b.h.Snapshot()
	if s.State != r4c.CircuitClosed || s.BufferedCalls != 0 || s.NotPermitted != 1 {
		t.Fatalf("after resetting an open breaker: %+v", s)
	}
	if states, err := b.do("s"); states != "c" || err != nil {
		t.Fatalf("after the reset: %s, %v", states, err)
	}
	// Half-open: a trial in flight across the reset records nothing.
	b.h.Reset() // closed: empties the buffer, publishes nothing
	b.do("ff")
	b.clock.Advance(time.Second)
	b.p.Execute(context.Background(), func(context.Context) (string, error) {
		b.h.Reset()
		return "", errCBDown
	})
	if s := b.h.Snapshot(); s.State != r4c.CircuitClosed || s.BufferedCalls != 0 {
		t.Fatalf("a trial admitted before the reset was recorded: %+v", s)
	}
	want := []string{"closed>open", "rejected", "open>closed", "closed>open", "open>half_open", "half_open>closed"}
	if got := b.events.take(); !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

func TestCircuitBreakerDisabled(t *testing.T) {
	b := newCB(t, r4c.CircuitBreakerConfig{SlidingWindowSize: 1, MinimumCalls: 1, Enabled: r4c.Off})
	if states, _ := b.do("ffff"); states != "cccc" || b.ran != 4 {
		t.Fatalf("states %s, ran %d", states, b.ran)
	}
	b.h.Reset()
	s := b.h.Snapshot()
	want := r4c.CircuitBreakerSnapshot{ID: "cb", Enabled: false, State: r4c.CircuitClosed, FailureRate: -1, SlowCallRate: -1}
	if s != want {
		t.Fatalf("snapshot %+v, want %+v", s, want)
	}
	if got := b.events.take(); len(got) != 0 {
		t.Fatalf("events %q", got)
	}
}

func TestCircuitBreakerAllocs(t *testing.T) {
	b := newCB(t, r4c.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, WaitInOpen: time.Hour,
		FailureRateThreshold: 100, RecordOn: []error{errCBDown}, IgnoreOn: []error{errCBBad}})
	ctx := context.Background()
	ok := func(context.Context) (string, error) { return "ok", nil }
	if n := testing.AllocsPerRun(1000, func() { b.p.Execute(ctx, ok) }); n != 0 {
		t.Errorf("a closed breaker's call: %v allocs, want 0", n)
	}
	fail := func(context.Context) (string, error) { return "", errCBDown }
	if n := testing.AllocsPerRun(1000, func() { b.p.Execute(ctx, ok); b.p.Execute(ctx, fail) }); n != 0 {
		t.Errorf("a recorded success and failure: %v allocs, want 0", n)
	}
	if s := b.h.Snapshot(); s.State != r4c.CircuitClosed || s.FailedCalls != 1 {
		t.Fatalf("snapshot %+v, want closed at 50%%", s)
	}
	b.do("ff")
	if b.h.State() != r4c.CircuitOpen {
		t.Fatal("not open")
	}
	if n := testing.AllocsPerRun(1000, func() { b.p.Execute(ctx, ok) }); n != 0 {
		t.Errorf("an open breaker's rejection (observed): %v allocs, want 0", n)
	}
}

// TestCircuitBreakerHammer runs many goroutines through one breaker while the clock moves and
// the breaker is reset; run it with -race.
func TestCircuitBreakerHammer(t *testing.T) {
	var rejectedEvents, changes atomic.Int64
	var transitions [3][3]atomic.Int64 // [from][to]
	obs := func(e r4c.Event) {
		switch e.Type {
		case r4c.EventRejected:
			rejectedEvents.Add(1)
		case r4c.EventStateChanged:
			changes.Add(1)
			transitions[e.OldState][e.State].Add(1)
		}
	}
	reg, clock := newRegistry(t, r4c.WithObserver(obs))
	const window = 20
	p := newPipeline[string](t, reg, "hammer", r4c.CircuitBreakerConfig{SlidingWindowSize: window, MinimumCalls: 10,
		SlowCallDuration: time.Millisecond, SlowCallRateThreshold: 90, WaitInOpen: 5 * time.Millisecond, PermittedCallsInHalfOpen: 3})
	h, _ := reg.CircuitBreaker("hammer")

	const goroutines, calls = 8, 2000
	var ran, rejected, other atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range calls {
				var err error
				switch r := rng.IntN(100); {
				case r < 2:
					func() {
						defer func() { recover() }()
						_, err := p.Execute(context.Background(), func(context.Context) (string, error) { ran.Add(1); panic("boom") })
						if errors.Is(err, r4c.ErrCircuitOpen) {
							rejected.Add(1)
							clock.Advance(time.Millisecond)
						}
					}()
					continue
				case r < 40:
					err = errCBDown
				}
				fn := taking(clock, time.Duration(rng.IntN(3))*time.Millisecond/2, err) // 0, 0.5 or 1ms
				_, err = p.Execute(context.Background(), func(ctx context.Context) (string, error) {
					ran.Add(1)
					return fn(ctx)
				})
				switch {
				case errors.Is(err, r4c.ErrCircuitOpen):
					rejected.Add(1)
					clock.Advance(time.Millisecond) // time passes while open, too
				case err != nil && !errors.Is(err, errCBDown):
					other.Add(1)
				}
				if s := h.State(); s > r4c.CircuitHalfOpen {
					t.Errorf("state %v", s)
				}
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			h.Reset()
			_ = h.Snapshot()
		}
	})
	wg.Wait()

	s := h.Snapshot()
	t.Logf("ran %d, rejected %d, snapshot %+v", ran.Load(), rejected.Load(), s)
	if other.Load() != 0 {
		t.Fatalf("%d unexpected errors", other.Load())
	}
	if ran.Load()+rejected.Load() != goroutines*calls {
		t.Fatalf("ran %d + rejected %d != %d calls", ran.Load(), rejected.Load(), goroutines*calls)
	}
	if s.NotPermitted != rejected.Load() || rejectedEvents.Load() != rejected.Load() {
		t.Fatalf("NotPermitted %d, rejected events %d, rejections seen %d", s.NotPermitted, rejectedEvents.Load(), rejected.Load())
	}
	if s.StateChanges != changes.Load() || s.StateChanges == 0 || rejected.Load() == 0 {
		t.Fatalf("StateChanges %d, events %d, rejections %d", s.StateChanges, changes.Load(), rejected.Load())
	}
	if s.BufferedCalls > window || s.FailedCalls > s.BufferedCalls || s.SlowCalls > s.BufferedCalls {
		t.Fatalf("snapshot %+v", s)
	}
	// The transitions form one path from closed to the final state, whatever order they were
	// published in: into every state as often as out of it, but for the start and the end.
	for st := range 3 {
		var in, out int64
		for o := range 3 {
			in += transitions[o][st].Load()
			out += transitions[st][o].Load()
		}
		want := int64(0)
		if r4c.CircuitState(st) == s.State {
			want++
		}
		if r4c.CircuitState(st) == r4c.CircuitClosed {
			want--
		}
		if in-out != want {
			t.Errorf("state %v: %d in, %d out, final state %v", r4c.CircuitState(st), in, out, s.State)
		}
	}
}

// A breaker opens when enough of the recent calls fail, rejects calls while open, and lets a
// trial call through once WaitInOpen has passed. A manual clock makes it deterministic.
func ExampleCircuitBreakerHandle_State() {
	clock := r4ctest.NewManualClock()
	reg, _ := r4c.NewRegistry(r4c.WithClock(clock))
	p, _ := r4c.NewPipeline[string](reg, "payments", r4c.CircuitBreakerConfig{
		SlidingWindowSize: 4, MinimumCalls: 4, // decide over the last 4 calls
		FailureRateThreshold: 50, WaitInOpen: 30 * time.Second, PermittedCallsInHalfOpen: 1})
	breaker, _ := reg.CircuitBreaker("payments")

	unavailable := errors.New("payments unavailable")
	fail := func(context.Context) (string, error) { return "", unavailable }
	pay := func(context.Context) (string, error) { return "paid", nil }
	ctx := context.Background()

	for _, fn := range []func(context.Context) (string, error){pay, fail, pay, fail} {
		p.Execute(ctx, fn)
	}
	s := breaker.Snapshot()
	fmt.Println(breaker.State(), s.FailureRate)

	_, err := p.Execute(ctx, pay)
	fmt.Println(err, errors.Is(err, r4c.ErrCircuitOpen))

	clock.Advance(30 * time.Second)
	fmt.Println(breaker.State())  // nothing moves until a call arrives
	v, err := p.Execute(ctx, pay) // the trial call
	fmt.Println(v, err, breaker.State())
	// Output:
	// open 50
	// r4c: circuit breaker "payments" is open true
	// open
	// paid <nil> closed
}

// BenchmarkCircuitBreaker measures a pipeline with only a breaker on the system clock: a call
// through a closed breaker, and a rejection by an open one.
func BenchmarkCircuitBreaker(b *testing.B) {
	ctx := context.Background()
	ok := func(context.Context) (string, error) { return "ok", nil }
	fail := func(context.Context) (string, error) { return "", errCBDown }
	setup := func(b *testing.B) (*r4c.Pipeline[string], *r4c.CircuitBreakerHandle) {
		reg, err := r4c.NewRegistry()
		if err != nil {
			b.Fatal(err)
		}
		p, err := r4c.NewPipeline[string](reg, "bench", r4c.CircuitBreakerConfig{SlidingWindowSize: 10, MinimumCalls: 10, WaitInOpen: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		h, _ := reg.CircuitBreaker("bench")
		return p, h
	}
	b.Run("closed", func(b *testing.B) {
		p, _ := setup(b)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p.Execute(ctx, ok)
			}
		})
	})
	b.Run("open", func(b *testing.B) {
		p, h := setup(b)
		for h.State() != r4c.CircuitOpen {
			p.Execute(ctx, fail)
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p.Execute(ctx, ok)
			}
		})
	})
}
