package r4c

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// CircuitState is the state of a circuit breaker.
type CircuitState uint8

// The states of a circuit breaker.
const (
	// CircuitClosed: calls pass and their outcomes are recorded.
	CircuitClosed CircuitState = iota
	// CircuitOpen: calls are rejected with ErrCircuitOpen until WaitInOpen has passed.
	CircuitOpen
	// CircuitHalfOpen: a few trial calls pass; their outcomes close or reopen the breaker.
	CircuitHalfOpen
)

// String returns "closed", "open" or "half_open".
func (s CircuitState) String() string {
	switch s {
	case CircuitClosed:
		return "closed"
	case CircuitOpen:
		return "open"
	case CircuitHalfOpen:
		return "half_open"
	}
	return "unknown"
}

// CircuitBreakerConfig configures a circuit breaker: it stops calling a dependency whose calls
// fail or are slow too often. A zero field means "not set here" (see AdaptiveLimitConfig).
type CircuitBreakerConfig struct {
	// FailureRateThreshold opens the breaker when this percentage of the recorded calls failed,
	// in (0, 100] (default 50).
	FailureRateThreshold float64
	// SlowCallRateThreshold opens the breaker when this percentage of the recorded calls were
	// slow, in (0, 100] (default 100).
	SlowCallRateThreshold float64
	// SlowCallDuration is the duration from which a call is slow (default 60s).
	SlowCallDuration time.Duration
	// SlidingWindowSize is how many of the latest calls are recorded (default 100, at most
	// 1000000).
	SlidingWindowSize int
	// MinimumCalls is how many calls must be recorded before the rates count (default 100).
	MinimumCalls int
	// WaitInOpen is how long the breaker stays open before letting trial calls through
	// (default 60s).
	WaitInOpen time.Duration
	// PermittedCallsInHalfOpen is how many trial calls the half-open breaker lets through
	// (default 10).
	PermittedCallsInHalfOpen int
	// RecordOn lists the errors that count as failures (errors.Is); empty (the default) counts
	// every error but those in IgnoreOn. Other errors count as successes.
	RecordOn []error
	// IgnoreOn lists the errors that are not recorded at all (default: none).
	IgnoreOn []error
	// Enabled turns the breaker Off (always closed, nothing recorded) or back On.
	Enabled Toggle
	// Config names a configuration registered with WithConfig to start from.
	Config string
}

const policyCircuitBreaker = "circuitBreaker"

// policyName returns "circuitBreaker".
func (CircuitBreakerConfig) policyName() string { return policyCircuitBreaker }

func (c CircuitBreakerConfig) addTo(l layer, scope string, named bool) error {
	return addToLayer(&circuitBreakerSpec, c, l, scope, named)
}

func (c CircuitBreakerConfig) namedConfig() string { return c.Config }

func percent(v float64) bool { return v > 0 && v <= 100 }

var circuitBreakerSpec = policySpec[CircuitBreakerConfig]{
	main:   "failureRateThreshold",
	name:   policyCircuitBreaker,
	kind:   KindCircuitBreaker,
	goType: "r4c.CircuitBreakerConfig",
	defaults: CircuitBreakerConfig{FailureRateThreshold: 50, SlowCallRateThreshold: 100, SlowCallDuration: 60 * time.Second,
		SlidingWindowSize: 100, MinimumCalls: 100, WaitInOpen: 60 * time.Second, PermittedCallsInHalfOpen: 10,
		RecordOn: []error{}, IgnoreOn: []error{}, Enabled: On},
	named: func(c *CircuitBreakerConfig) *string { return &c.Config },
	settings: []setting[CircuitBreakerConfig]{
		floatSetting("failureRateThreshold", "in (0, 100]",
			func(c *CircuitBreakerConfig) *float64 { return &c.FailureRateThreshold }, percent).eg("25").
			describe("Opens the breaker when this percentage of the recorded calls failed."),
		floatSetting("slowCallRateThreshold", "in (0, 100]",
			func(c *CircuitBreakerConfig) *float64 { return &c.SlowCallRateThreshold }, percent).eg("80").
			describe("Opens the breaker when this percentage of the recorded calls were slow."),
		durationSetting("slowCallDuration", "a positive duration",
			func(c *CircuitBreakerConfig) *time.Duration { return &c.SlowCallDuration }, positive, codeInvalidSetting).eg("2s").
			describe("The duration from which a call is slow."),
		intSetting("slidingWindowSize", "1 to 1000000",
			func(c *CircuitBreakerConfig) *int { return &c.SlidingWindowSize },
			func(v int) bool { return v >= 1 && v <= maxSlidingWindowSize }, codeInvalidSetting).eg("50").
			describe("How many of the latest calls are recorded (one byte each, allocated with the instance)."),
		intSetting("minimumCalls", "at least 1",
			func(c *CircuitBreakerConfig) *int { return &c.MinimumCalls }, atLeastOne, codeInvalidSetting).eg("20").
			describe("How many calls must be recorded before the rates count (at most slidingWindowSize are)."),
		durationSetting("waitInOpen", "a positive duration",
			func(c *CircuitBreakerConfig) *time.Duration { return &c.WaitInOpen }, positive, codeInvalidSetting).eg("30s").
			describe("How long the breaker stays open before letting trial calls through."),
		intSetting("permittedCallsInHalfOpen", "at least 1",
			func(c *CircuitBreakerConfig) *int { return &c.PermittedCallsInHalfOpen }, atLeastOne, codeInvalidSetting).eg("3").
			describe("How many trial calls the half-open breaker lets through; their rates close or reopen it."),
		errorsSetting("recordOn", "a list of errors, matched with errors.Is; no nil entries",
			func(c *CircuitBreakerConfig) *[]error { return &c.RecordOn }).eg("net.ErrClosed").
			describe("The errors that count as failures; empty counts every error but those in ignoreOn."),
		errorsSetting("ignoreOn", "a list of errors, matched with errors.Is; no nil entries",
			func(c *CircuitBreakerConfig) *[]error { return &c.IgnoreOn }).eg("r4c.ErrLimitExceeded").
			describe("The errors that are not recorded at all."),
		toggleSetting(func(c *CircuitBreakerConfig) *Toggle { return &c.Enabled }, "false disables the breaker: always closed."),
	},
}

// CircuitBreakerHandle is one circuit breaker instance of a registry. Get it with
// Registry.CircuitBreaker; it is safe for concurrent use.
//
// The model is resilience4j's count-based breaker, driven by the registry's clock:
//
//   - Closed: calls pass. The outcomes of the last SlidingWindowSize recorded calls are kept in
//     a ring buffer, each a success or a failure and, independently, slow or not (slow: it took
//     SlowCallDuration or more, measured with the clock's monotonic reading before and after the
//     call). Once at least min(MinimumCalls, SlidingWindowSize) outcomes are buffered, every
//     recorded outcome recomputes the failure rate and the slow-call rate, in percent of the
//     buffered calls; when either reaches its threshold (>=), the breaker opens.
//   - Open: calls are rejected at once with the instance's *CircuitOpenError (the function is
//     not called). Nothing is scheduled: the first call that finds WaitInOpen passed moves the
//     breaker to half-open and becomes its first trial.
//   - HalfOpen: at most PermittedCallsInHalfOpen trial calls pass (others are rejected as when
//     open). When every trial has recorded an outcome, their rates alone decide: both below the
//     thresholds close the breaker with an empty buffer, otherwise it opens again for another
//     WaitInOpen.
//
// A call's result is classified when it returns: nil is a success; an error once the caller's
// context is done is not recorded; an error in IgnoreOn is not recorded; with RecordOn set, an
// error outside it is a success; any other error is a failure. A panic is not recorded. A trial
// call that is not recorded gives its permission back, so another call can take it. An outcome
// is recorded only in the state (and the period of that state) in which its call was admitted:
// a call admitted while closed that returns after the breaker opened changes nothing.
//
// A call through a closed breaker costs two clock reads (one to admit it, one to measure it),
// an atomic load to admit it and a mutex held for a few instructions to record its outcome. A
// rejection by an open breaker is one clock read (to check WaitInOpen) and an atomic add.
// Nothing on the per-call path allocates. State changes and
// rejections are published to the registry's observers after the mutex is released, so two
// changes published by different goroutines may reach an observer out of order; each event's
// OldState and State are exact.
type CircuitBreakerHandle struct {
	// stateGen holds the state in its low two bits and, above them, a generation counted up at
	// every state change and Reset. A permit remembers it: an outcome is recorded only while
	// stateGen is unchanged. Written under mu, read without it.
	stateGen     atomic.Uint64
	openedAt     atomic.Int64 // clock.Nanotime when the breaker last opened
	notPermitted atomic.Int64

	id      string
	cfg     CircuitBreakerConfig
	enabled bool
	clock   Clock
	reg     *Registry
	open    *CircuitOpenError
	waitNs  int64 // WaitInOpen
	slowNs  int64 // SlowCallDuration

	mu           sync.Mutex
	ring         []uint8 // closed: the last SlidingWindowSize outcomes, cbFailed|cbSlow bits
	next         int     // closed: the ring position the next outcome goes to
	calls        int     // outcomes buffered (closed) or trials recorded (half-open)
	failed, slow int     // of those, failures and slow calls
	need         int     // outcomes needed before the rates count in the current metrics
	trials       int     // half-open: trial permissions handed out and not given back
	stateChanges int64
	// Outcomes of every call that ended since the instance was created (the snapshot's
	// Successful, Failed, Ignored and Slow).
	successful, failedTotal, ignored, slowTotal int64
}

// Outcome bits in the ring buffer.
const (
	cbFailed uint8 = 1 << iota
	cbSlow
)

// cbOutcome is how a call's result counts.
type cbOutcome uint8

const (
	cbSuccess cbOutcome = iota
	cbFailure
	cbIgnored // not recorded: a half-open trial's permission is given back
)

const cbStateMask = 3

// maxSlidingWindowSize bounds SlidingWindowSize: the ring of outcomes is allocated with the
// instance, one byte an outcome, so a hostile value must not allocate without bound.
const maxSlidingWindowSize = 1_000_000

func newCircuitBreaker(reg *Registry, id string) func(CircuitBreakerConfig) *CircuitBreakerHandle {
	return func(cfg CircuitBreakerConfig) *CircuitBreakerHandle {
		h := &CircuitBreakerHandle{id: id, cfg: cfg, enabled: cfg.Enabled != Off, clock: reg.clock, reg: reg,
			open: &CircuitOpenError{instanceError: instanceError{id: id, sentinel: ErrCircuitOpen,
				msg: fmt.Sprintf("r4c: circuit breaker %q is open", id)}},
			waitNs: int64(cfg.WaitInOpen), slowNs: int64(cfg.SlowCallDuration),
			need: min(cfg.MinimumCalls, cfg.SlidingWindowSize)}
		h.open.h = h
		if h.enabled {
			h.ring = make([]uint8, cfg.SlidingWindowSize)
		}
		return h
	}
}

// openRemaining returns how long the breaker stays open from now, 0 if it is not open.
func (h *CircuitBreakerHandle) openRemaining() time.Duration {
	if CircuitState(h.stateGen.Load()&cbStateMask) != CircuitOpen {
		return 0
	}
	return time.Duration(max(h.openedAt.Load()+h.waitNs-h.clock.Nanotime(), 0))
}

// Config returns the instance's resolved configuration.
func (h *CircuitBreakerHandle) Config() CircuitBreakerConfig { return h.cfg }

// State returns the breaker's state: CircuitClosed, CircuitOpen or CircuitHalfOpen. It reads
// without locking and changes nothing: an open breaker whose WaitInOpen has passed reports
// CircuitOpen until the next call moves it to half-open. A disabled breaker is always closed.
func (h *CircuitBreakerHandle) State() CircuitState {
	return CircuitState(h.stateGen.Load() & cbStateMask)
}

// Reset closes the breaker and empties its buffer, whatever its state, as if it had just been
// created (the running totals NotPermitted and StateChanges are kept). Outcomes of calls admitted before the reset
// are not recorded. It publishes EventStateChanged if the breaker was not closed. It is safe to
// call at any time, from any goroutine; on a disabled breaker it does nothing.
func (h *CircuitBreakerHandle) Reset() {
	if !h.enabled {
		return
	}
	h.mu.Lock()
	from := h.setStateLocked(CircuitClosed, 0)
	h.mu.Unlock()
	if from != CircuitClosed {
		h.publishChange(from, CircuitClosed)
	}
}

// setStateLocked moves the breaker to state to, at clock reading now (used when opening), and
// starts a new generation (even when to is the current state: Reset of a closed breaker). The
// metrics carry over into Open (they show why it opened) and start empty in HalfOpen and Closed.
// It returns the previous state. h.mu must be held.
func (h *CircuitBreakerHandle) setStateLocked(to CircuitState, now int64) CircuitState {
	sg := h.stateGen.Load()
	switch to {
	case CircuitOpen:
		h.openedAt.Store(now)
	case CircuitHalfOpen:
		h.calls, h.failed, h.slow, h.trials = 0, 0, 0, 0
		h.need = h.cfg.PermittedCallsInHalfOpen
	case CircuitClosed:
		h.calls, h.failed, h.slow, h.next, h.trials = 0, 0, 0, 0, 0
		h.need = min(h.cfg.MinimumCalls, h.cfg.SlidingWindowSize)
	}
	from := CircuitState(sg & cbStateMask)
	if from != to {
		h.stateChanges++
	}
	h.stateGen.Store((sg>>2+1)<<2 | uint64(to))
	return from
}

// publishChange reports a state change to the observers. Call it after releasing h.mu.
func (h *CircuitBreakerHandle) publishChange(from, to CircuitState) {
	if h.reg.observed {
		h.reg.publish(Event{Type: EventStateChanged, Kind: KindCircuitBreaker, Instance: h.id, OldState: from, State: to})
	}
}

// reject counts and publishes a rejection and returns the instance's error.
func (h *CircuitBreakerHandle) reject() error {
	h.notPermitted.Add(1)
	if h.reg.observed {
		h.reg.publish(Event{Type: EventRejected, Kind: KindCircuitBreaker, Instance: h.id})
	}
	return h.open
}

// cbPermit is an admitted call: the generation it was admitted in and its start time.
type cbPermit struct {
	gen   uint64
	start int64
}

// acquire admits a call or returns the rejection. An open breaker whose WaitInOpen has passed
// moves to half-open here, and the call becomes its first trial.
func (h *CircuitBreakerHandle) acquire() (cbPermit, error) {
	now := h.clock.Nanotime()
	sg := h.stateGen.Load()
	switch CircuitState(sg & cbStateMask) {
	case CircuitClosed:
		return cbPermit{gen: sg, start: now}, nil
	case CircuitOpen:
		if now-h.openedAt.Load() < h.waitNs {
			return cbPermit{}, h.reject()
		}
	}
	h.mu.Lock()
	sg = h.stateGen.Load()
	from, changed := CircuitOpen, false
	switch CircuitState(sg & cbStateMask) {
	case CircuitClosed: // reset or closed meanwhile
		h.mu.Unlock()
		return cbPermit{gen: sg, start: now}, nil
	case CircuitOpen:
		if now-h.openedAt.Load() < h.waitNs { // reopened meanwhile
			h.mu.Unlock()
			return cbPermit{}, h.reject()
		}
		from, changed = h.setStateLocked(CircuitHalfOpen, now), true
		sg = h.stateGen.Load()
	}
	admitted := h.trials < h.cfg.PermittedCallsInHalfOpen
	if admitted {
		h.trials++
	}
	h.mu.Unlock()
	if changed {
		h.publishChange(from, CircuitHalfOpen)
	}
	if !admitted {
		return cbPermit{}, h.reject()
	}
	return cbPermit{gen: sg, start: now}, nil
}

// classify maps a call's result, given the caller's context, to how it counts.
func (h *CircuitBreakerHandle) classify(ctx context.Context, err error) cbOutcome {
	switch {
	case err == nil:
		return cbSuccess
	case ctx.Err() != nil, isIgnored(err), matchesAny(err, h.cfg.IgnoreOn):
		return cbIgnored
	case len(h.cfg.RecordOn) > 0 && !matchesAny(err, h.cfg.RecordOn):
		return cbSuccess
	}
	return cbFailure
}

// release ends an admitted call with its outcome: it records it (if the breaker is still in the
// generation that admitted the call) and changes state when the rates say so.
func (h *CircuitBreakerHandle) release(p cbPermit, o cbOutcome) {
	var bits uint8
	var now int64
	if o != cbIgnored {
		now = h.clock.Nanotime()
		if o == cbFailure {
			bits |= cbFailed
		}
		if now-p.start >= h.slowNs {
			bits |= cbSlow
		}
	}
	h.mu.Lock()
	switch o {
	case cbSuccess:
		h.successful++
	case cbFailure:
		h.failedTotal++
	default:
		h.ignored++
	}
	h.slowTotal += int64(bits&cbSlow) >> 1
	if h.stateGen.Load() != p.gen {
		h.mu.Unlock() // admitted before a state change or a reset: nothing to record
		return
	}
	state := CircuitState(p.gen & cbStateMask)
	if o == cbIgnored {
		if state == CircuitHalfOpen {
			h.trials-- // the permission goes back
		}
		h.mu.Unlock()
		return
	}
	if state == CircuitClosed {
		if h.calls == len(h.ring) {
			old := h.ring[h.next]
			h.failed -= int(old & cbFailed)
			h.slow -= int(old&cbSlow) >> 1
		} else {
			h.calls++
		}
		h.ring[h.next] = bits
		if h.next++; h.next == len(h.ring) {
			h.next = 0
		}
	} else { // half-open (an open breaker admits nothing)
		h.calls++
	}
	h.failed += int(bits & cbFailed)
	h.slow += int(bits&cbSlow) >> 1

	to := state
	if h.calls >= h.need {
		switch {
		case h.exceededLocked():
			to = CircuitOpen
		case state == CircuitHalfOpen:
			to = CircuitClosed
		}
	}
	if to == state {
		h.mu.Unlock()
		return
	}
	h.setStateLocked(to, now)
	h.mu.Unlock()
	h.publishChange(state, to)
}

// ratesLocked returns the failure and slow-call rates of the current metrics in percent, or -1
// for both while fewer than the needed calls are recorded. h.mu must be held.
func (h *CircuitBreakerHandle) ratesLocked() (failure, slow float64) {
	if h.calls == 0 || h.calls < h.need {
		return -1, -1
	}
	n := float64(h.calls)
	return float64(h.failed) * 100 / n, float64(h.slow) * 100 / n
}

// exceededLocked reports whether either rate has reached its threshold. h.mu must be held.
func (h *CircuitBreakerHandle) exceededLocked() bool {
	failure, slow := h.ratesLocked()
	return failure >= h.cfg.FailureRateThreshold || slow >= h.cfg.SlowCallRateThreshold
}

// CircuitBreakerSnapshot is a reading of a circuit breaker's state and metrics. The metrics are
// those of the current state: the ring buffer while closed, the trial calls while half-open,
// and, while open, whichever of the two opened the breaker.
type CircuitBreakerSnapshot struct {
	ID      string
	Enabled bool
	State   CircuitState
	// FailureRate and SlowCallRate are the percentages (0 to 100) of the recorded calls that
	// failed and that were slow; -1 while fewer calls are recorded than the rates need
	// (min(MinimumCalls, SlidingWindowSize) while closed, PermittedCallsInHalfOpen while
	// half-open).
	FailureRate, SlowCallRate float64
	// BufferedCalls is how many outcomes are recorded; FailedCalls and SlowCalls count the
	// failures and the slow calls among them (a call can be both).
	BufferedCalls, FailedCalls, SlowCalls int
	// NotPermitted is how many calls were rejected since the instance was created (Reset keeps
	// it).
	NotPermitted int64
	// StateChanges is how many state changes happened since the instance was created.
	StateChanges int64
	// Successful, Failed and Ignored count the admitted calls that ended since the instance was
	// created, by how the breaker classified them (RecordOn, IgnoreOn; a caller's cancellation
	// is ignored); Slow counts those among the successful and failed that took at least
	// SlowCallDuration. Unlike the metrics above, Reset keeps them, and they include calls that
	// ended after a state change (which the new state does not record).
	Successful, Failed, Ignored, Slow int64
}

// Snapshot returns the breaker's state and metrics, read consistently under its mutex. Like
// State, it does not move an open breaker whose WaitInOpen has passed to half-open.
func (h *CircuitBreakerHandle) Snapshot() CircuitBreakerSnapshot {
	h.mu.Lock()
	failure, slow := h.ratesLocked()
	s := CircuitBreakerSnapshot{ID: h.id, Enabled: h.enabled, State: h.State(),
		FailureRate: failure, SlowCallRate: slow,
		BufferedCalls: h.calls, FailedCalls: h.failed, SlowCalls: h.slow,
		NotPermitted: h.notPermitted.Load(), StateChanges: h.stateChanges,
		Successful: h.successful, Failed: h.failedTotal, Ignored: h.ignored, Slow: h.slowTotal}
	h.mu.Unlock()
	return s
}

func (h *CircuitBreakerHandle) snapshotAny() any { return h.Snapshot() }

// CircuitBreaker returns the circuit breaker instance id, or an error with code R4C-REG-009.
func (r *Registry) CircuitBreaker(id string) (*CircuitBreakerHandle, error) {
	return lookup[*CircuitBreakerHandle](r, policyCircuitBreaker, id)
}

// The breaker as a pipeline gate: ask for permission (a rejection does not call the rest), run
// the rest, record its classified result. A panic records nothing and gives a half-open trial's
// permission back.
func (h *CircuitBreakerHandle) admit(context.Context) (cbPermit, error) { return h.acquire() }
func (h *CircuitBreakerHandle) settle(ctx context.Context, p cbPermit, err error) {
	h.release(p, h.classify(ctx, err))
}
func (h *CircuitBreakerHandle) abandon(p cbPermit) { h.release(p, cbIgnored) }

// String writes the configuration as its keys and values, as docs/configuration.md documents
// them ("circuitBreaker{...}"); settings not set are left out.
func (c CircuitBreakerConfig) String() string { return circuitBreakerSpec.text(c) }
