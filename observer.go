package r4c

import "time"

// EventType says what happened.
type EventType uint8

// The event types.
const (
	// EventRejected: a call was rejected by a full adaptive limit or bulkhead, a rate limiter
	// without permits or an open circuit breaker (for an adaptive limit, Limit holds the limit at
	// that moment).
	EventRejected EventType = iota + 1
	// EventLimitChanged: a window ended with a new limit (OldLimit -> Limit).
	EventLimitChanged
	// EventStateChanged: a circuit breaker moved from OldState to State.
	EventStateChanged
	// EventTimedOut: a call ran past its timeout (Duration holds the timeout).
	EventTimedOut
	// EventRetried: a failed attempt will be retried after Duration (Attempt is the attempt that
	// failed, from 1).
	EventRetried
	// EventHedged: a hedge launched an extra attempt (Attempt is its number, from 2).
	EventHedged
)

// String returns the event type's name, as used in logs and metric labels.
func (t EventType) String() string {
	switch t {
	case EventRejected:
		return "rejected"
	case EventLimitChanged:
		return "limit_changed"
	case EventStateChanged:
		return "state_changed"
	case EventTimedOut:
		return "timed_out"
	case EventRetried:
		return "retried"
	case EventHedged:
		return "hedged"
	}
	return "unknown"
}

// Policy kinds, as used in metric labels (kind="adaptivelimit").
const (
	KindAdaptiveLimit  = "adaptivelimit"
	KindBulkhead       = "bulkhead"
	KindTimeout        = "timeout"
	KindRateLimiter    = "ratelimiter"
	KindRetry          = "retry"
	KindCircuitBreaker = "circuitbreaker"
	KindHedge          = "hedge"
)

// Event is one event of a registry's policies, handed to the functions registered with
// WithObserver: limit changes, rejections, timeouts, retries, hedges and circuit breaker
// transitions. It is passed by value and allocates nothing. Fields that do not apply to the
// event's type are zero.
//
// An admitted call that ends normally publishes nothing, and a window that keeps its limit
// publishes nothing; but every rejection publishes an EventRejected, so with an observer
// registered a rejection costs the observer's call (and the building of the Event) where it
// otherwise costs a few nanoseconds. Without observers nothing is built or called.
//
// Observers are called synchronously, in the goroutine of the call that caused the event (or of
// the call that noticed it, for a breaker's transition out of the open state), after every lock
// of the policy has been released. They must be fast and must not block; they may read
// snapshots. A panic in an observer is recovered and never reaches the policy (its state stays
// whole): the first is logged, all are counted in Snapshot().ObserverPanics.
type Event struct {
	Type     EventType
	Kind     string // the policy kind: KindAdaptiveLimit, ...
	Instance string // the instance id
	Limit    int    // EventLimitChanged: the new limit; EventRejected by an adaptive limit: the limit
	OldLimit int    // EventLimitChanged: the limit before the change
	// State and OldState: EventStateChanged.
	State, OldState CircuitState
	Attempt         int           // EventRetried, EventHedged
	Duration        time.Duration // EventTimedOut: the timeout; EventRetried: the wait
	Err             error         // EventRetried: the error of the attempt that failed
}
