package r4c

import (
	"context"
	"fmt"
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
	// SlidingWindowSize is how many of the latest calls are recorded (default 100).
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

// PolicyName returns "circuitBreaker".
func (CircuitBreakerConfig) PolicyName() string { return policyCircuitBreaker }

func (c CircuitBreakerConfig) addTo(l layer, scope string, named bool) error {
	return addToLayer(&circuitBreakerSpec, c, l, scope, named)
}

func (c CircuitBreakerConfig) namedConfig() string { return c.Config }

func percent(v float64) bool { return v > 0 && v <= 100 }

var circuitBreakerSpec = policySpec[CircuitBreakerConfig]{
	name:   policyCircuitBreaker,
	kind:   KindCircuitBreaker,
	goType: "r4c.CircuitBreakerConfig",
	defaults: CircuitBreakerConfig{FailureRateThreshold: 50, SlowCallRateThreshold: 100, SlowCallDuration: 60 * time.Second,
		SlidingWindowSize: 100, MinimumCalls: 100, WaitInOpen: 60 * time.Second, PermittedCallsInHalfOpen: 10,
		RecordOn: []error{}, IgnoreOn: []error{}, Enabled: On},
	named: func(c *CircuitBreakerConfig) *string { return &c.Config },
	settings: []setting[CircuitBreakerConfig]{
		floatSetting("failureRateThreshold", "in (0, 100]",
			func(c *CircuitBreakerConfig) *float64 { return &c.FailureRateThreshold }, percent).
			describe("Opens the breaker when this percentage of the recorded calls failed."),
		floatSetting("slowCallRateThreshold", "in (0, 100]",
			func(c *CircuitBreakerConfig) *float64 { return &c.SlowCallRateThreshold }, percent).
			describe("Opens the breaker when this percentage of the recorded calls were slow."),
		durationSetting("slowCallDuration", "a positive duration",
			func(c *CircuitBreakerConfig) *time.Duration { return &c.SlowCallDuration }, positive, CodeInvalidSetting).
			describe("The duration from which a call is slow."),
		intSetting("slidingWindowSize", "at least 1",
			func(c *CircuitBreakerConfig) *int { return &c.SlidingWindowSize }, atLeastOne, CodeInvalidSetting).
			describe("How many of the latest calls are recorded."),
		intSetting("minimumCalls", "at least 1",
			func(c *CircuitBreakerConfig) *int { return &c.MinimumCalls }, atLeastOne, CodeInvalidSetting).
			describe("How many calls must be recorded before the rates count (at most slidingWindowSize are)."),
		durationSetting("waitInOpen", "a positive duration",
			func(c *CircuitBreakerConfig) *time.Duration { return &c.WaitInOpen }, positive, CodeInvalidSetting).
			describe("How long the breaker stays open before letting trial calls through."),
		intSetting("permittedCallsInHalfOpen", "at least 1",
			func(c *CircuitBreakerConfig) *int { return &c.PermittedCallsInHalfOpen }, atLeastOne, CodeInvalidSetting).
			describe("How many trial calls the half-open breaker lets through; their rates close or reopen it."),
		errorsSetting("recordOn", "a list of errors, matched with errors.Is; no nil entries",
			func(c *CircuitBreakerConfig) *[]error { return &c.RecordOn }).
			describe("The errors that count as failures; empty counts every error but those in ignoreOn."),
		errorsSetting("ignoreOn", "a list of errors, matched with errors.Is; no nil entries",
			func(c *CircuitBreakerConfig) *[]error { return &c.IgnoreOn }).
			describe("The errors that are not recorded at all."),
		toggleSetting(func(c *CircuitBreakerConfig) *Toggle { return &c.Enabled }, "false disables the breaker: always closed."),
	},
}

// CircuitBreakerHandle is one circuit breaker instance of a registry. Get it with
// Registry.CircuitBreaker; it is safe for concurrent use.
type CircuitBreakerHandle struct {
	id      string
	cfg     CircuitBreakerConfig
	enabled bool
	clock   Clock
	reg     *Registry
	open    *CircuitOpenError
}

func newCircuitBreaker(reg *Registry, id string) func(CircuitBreakerConfig) *CircuitBreakerHandle {
	return func(cfg CircuitBreakerConfig) *CircuitBreakerHandle {
		return &CircuitBreakerHandle{id: id, cfg: cfg, enabled: cfg.Enabled != Off, clock: reg.clock, reg: reg,
			open: &CircuitOpenError{instanceError{id: id, sentinel: ErrCircuitOpen,
				msg: fmt.Sprintf("r4c: circuit breaker %q is open", id)}}}
	}
}

// ID returns the instance id.
func (h *CircuitBreakerHandle) ID() string { return h.id }

// Config returns the instance's resolved configuration.
func (h *CircuitBreakerHandle) Config() CircuitBreakerConfig { return h.cfg }

// State returns the breaker's state.
func (h *CircuitBreakerHandle) State() CircuitState { return CircuitClosed } // TODO

// CircuitBreakerSnapshot is a reading of a circuit breaker's state.
type CircuitBreakerSnapshot struct {
	ID      string
	Enabled bool
	State   CircuitState
}

// Snapshot returns the breaker's state.
func (h *CircuitBreakerHandle) Snapshot() CircuitBreakerSnapshot {
	return CircuitBreakerSnapshot{ID: h.id, Enabled: h.enabled, State: h.State()}
}

func (h *CircuitBreakerHandle) snapshotAny() any { return h.Snapshot() }

// CircuitBreaker returns the circuit breaker instance id, or an error with code R4C-REG-009.
func (r *Registry) CircuitBreaker(id string) (*CircuitBreakerHandle, error) {
	return lookup[*CircuitBreakerHandle](r, policyCircuitBreaker, id)
}

// circuitBreakerStage: TODO, implemented separately.
func circuitBreakerStage[T any](h *CircuitBreakerHandle) stage[T] {
	return func(next call[T]) call[T] {
		return func(ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
			return next(ctx, fn)
		}
	}
}
