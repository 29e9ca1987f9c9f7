package r4c

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// Sentinel errors of the policies. Every runtime error the library returns matches one of them
// with errors.Is, and carries the instance id in a typed error (errors.As).
var (
	// ErrLimitExceeded: an adaptive limit had every slot taken; the function was not called.
	ErrLimitExceeded = errors.New("r4c: adaptive limit exceeded")
	// ErrBulkheadFull: a bulkhead had every slot taken.
	ErrBulkheadFull = errors.New("r4c: bulkhead full")
	// ErrCallTimeout: a call ran past its timeout.
	ErrCallTimeout = errors.New("r4c: call timed out")
	// ErrRateLimited: a rate limiter had no permit to give.
	ErrRateLimited = errors.New("r4c: rate limited")
	// ErrCircuitOpen: a circuit breaker was open.
	ErrCircuitOpen = errors.New("r4c: circuit open")
)

// errNilContext is returned by calls given a nil context: the library never substitutes one.
var errNilContext = &ConfigError{Code: codeBadCall, Msg: "nil context: the library never substitutes one"}

// errNilRegistry is returned by a nil *Registry's methods.
var errNilRegistry = &ConfigError{Code: codeNilRegistry, Msg: "the registry is nil: make one with NewRegistry"}

// LimitExceededError is the rejection of an adaptive limit. It matches ErrLimitExceeded with
// errors.Is. Each instance allocates its error once and returns that same value on every
// rejection, so a rejection allocates nothing; do not modify it.
type LimitExceededError struct {
	id  string
	msg string
}

func newLimitExceededError(id string) *LimitExceededError {
	return &LimitExceededError{id: id, msg: fmt.Sprintf("r4c: adaptive limit %q exceeded: every slot is taken", id)}
}

// InstanceID returns the id of the adaptive limit that rejected the call.
func (e *LimitExceededError) InstanceID() string { return e.id }

// Error returns a message that names the instance.
func (e *LimitExceededError) Error() string { return e.msg }

// Is reports whether target is ErrLimitExceeded.
func (e *LimitExceededError) Is(target error) bool { return target == ErrLimitExceeded }

// PanicError is the error of a Future whose function, run by Pipeline.Go, panicked. The slot
// was freed without a sample, as for a synchronous panic; Value is what was passed to panic
// and Stack the goroutine's stack at that point.
type PanicError struct {
	Value any
	Stack []byte
}

func newPanicError(v any) *PanicError { return &PanicError{Value: v, Stack: debug.Stack()} }

// Error describes the panic.
func (e *PanicError) Error() string { return fmt.Sprintf("r4c: function panicked: %v", e.Value) }

// Unwrap returns the panic value when it is an error, so errors.Is and errors.As see it.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// The codes of configuration and registration errors (ConfigError.Code, returned by ErrorCode).
// They are stable strings: match on them ("R4C-REG-009"), not on messages. docs/errors.md
// describes each one with its message and the fix.
const (
	codeBadDuration     = "R4C-ATR-001"  // a duration with bad syntax
	codeBadAttribute    = "R4C-ATR-002"  // a directive with an unknown attribute or malformed value
	codeLimitBelowOne   = "R4C-ATR-003"  // a limit less than 1
	codeOutOfOrder      = "R4C-ATR-009"  // limits out of order, or window out of range
	codeInvalidSetting  = "R4C-REG-001"  // an invalid setting given in Go code
	codeUnknownConfig   = "R4C-REG-004"  // an unknown named configuration
	codeConflict        = "R4C-REG-008"  // one instance id resolved to two configurations
	codeUnknownInstance = "R4C-REG-009"  // an unknown instance id asked of the registry
	codeNilRegistry     = "R4C-REG-010"  // a nil *Registry given or used
	codeBadFallback     = "R4C-REG-011"  // a fallback that does not fit its pipeline
	codeNoWrapper       = "R4C-REG-012"  // Of: no generated wrapper for the type
	codeDuplicatePolicy = "R4C-REG-013"  // one policy given twice to a pipeline
	codeUnknownKey      = "R4C-CFG-001"  // external configuration: unknown key
	codeInvalidValue    = "R4C-CFG-002"  // external configuration: invalid value
	codeUnmatchedKey    = "R4C-CFG-003"  // external configuration: an instance key that matched nothing (Registry.Check)
	codeBadCall         = "R4C-CALL-001" // a call given a nil context or a nil function
)

// ConfigError is a configuration or registration error. Its message starts with its code and
// names the instance, the setting and the bad value where they apply.
type ConfigError struct {
	Code     string // the stable code, such as "R4C-REG-009" (docs/errors.md)
	Instance string // the instance id or named configuration, "" for registry defaults
	Policy   string // "adaptiveLimit", ...; "" when not about one policy
	Key      string // the setting, as in the configuration keys ("maxLimit")
	Value    string // the bad value as text, "" when not about one value
	Msg      string // the explanation, without the code
}

// Error returns "CODE: explanation".
func (e *ConfigError) Error() string { return e.Code + ": " + e.Msg }

// ErrorCode returns the R4C code of the first *ConfigError in err's tree, or "" if there is none.
func ErrorCode(err error) string {
	var ce *ConfigError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}

// instanceError is the shape of the policies' rejection errors: one value per instance,
// allocated once, returned on every rejection.
type instanceError struct {
	id       string
	msg      string
	sentinel error
}

// InstanceID returns the id of the instance that rejected the call.
func (e *instanceError) InstanceID() string { return e.id }

// Error returns a message that names the instance.
func (e *instanceError) Error() string { return e.msg }

// Is reports whether target is the policy's sentinel error.
func (e *instanceError) Is(target error) bool { return target == e.sentinel }

// BulkheadFullError is the rejection of a full bulkhead (after MaxWait, if any). It matches
// ErrBulkheadFull with errors.Is; InstanceID names the bulkhead. It is allocated once per
// instance: do not modify it.
type BulkheadFullError struct{ instanceError }

// RateLimitedError is the rejection of a rate limiter with no permit to give within MaxWait.
// It matches ErrRateLimited; allocated once per instance.
type RateLimitedError struct {
	instanceError
	h *RateLimiterHandle
}

// RetryAfter returns how long from now until the rate limiter's next period with a permit left
// to give (later periods may be taken already by waiting calls): the least a caller should wait
// before trying again. An outer Retry waits at least that long (see RetryConfig), and the HTTP
// and gRPC integrations send it to clients (Retry-After, grpc-retry-pushback-ms).
func (e *RateLimitedError) RetryAfter() time.Duration { return e.h.nextPermit() }

// CircuitOpenError is the rejection of an open (or saturated half-open) circuit breaker. It
// matches ErrCircuitOpen; allocated once per instance.
type CircuitOpenError struct {
	instanceError
	h *CircuitBreakerHandle
}

// RetryAfter returns how long from now the breaker stays open: when WaitInOpen will have passed
// and it lets trial calls through. It is 0 when that time has come, or when the breaker is not
// open (a half-open breaker whose trial permissions are taken, or one that closed since). An
// outer Retry waits at least that long (see RetryConfig), and the HTTP and gRPC integrations
// send it to clients.
func (e *CircuitOpenError) RetryAfter() time.Duration { return e.h.openRemaining() }

// CallTimeoutError is the error of a call that ran past its timeout. It matches both
// ErrCallTimeout and context.DeadlineExceeded with errors.Is, and has Timeout() true like the
// net package's timeout errors. Allocated once per instance.
type CallTimeoutError struct {
	instanceError
	timeout time.Duration
}

// Is reports whether target is ErrCallTimeout or context.DeadlineExceeded.
func (e *CallTimeoutError) Is(target error) bool {
	return target == ErrCallTimeout || target == context.DeadlineExceeded
}

// Timeout reports true: the call timed out.
func (e *CallTimeoutError) Timeout() bool { return true }

// Duration returns the timeout that expired.
func (e *CallTimeoutError) Duration() time.Duration { return e.timeout }

// RetryExhaustedError is the error of a retry whose every attempt failed. It wraps the last
// attempt's error, so errors.Is and errors.As see it.
type RetryExhaustedError struct {
	ID       string // the retry instance
	Attempts int    // how many attempts were made
	Last     error  // the last attempt's error
}

// Error names the instance, the attempts and the last error.
func (e *RetryExhaustedError) Error() string {
	return fmt.Sprintf("r4c: retry %q gave up after %d attempts: %v", e.ID, e.Attempts, e.Last)
}

// Unwrap returns the last attempt's error.
func (e *RetryExhaustedError) Unwrap() error { return e.Last }

// InstanceID returns the id of the retry.
func (e *RetryExhaustedError) InstanceID() string { return e.ID }
