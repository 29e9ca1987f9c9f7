package r4c

// Observer receives the rare events of a registry's policies: limit changes and rejections.
// Admitted calls publish nothing, and a window that keeps its limit publishes nothing.
//
// Observe is called synchronously, in the goroutine of the call that caused the event (the
// rejected call, or the call that ended the window), after every lock of the policy has been
// released. It must be fast and must not block; it may read snapshots. Register observers with
// WithObserver.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to an Observer.
type ObserverFunc func(Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) { f(e) }

// EventType says what happened.
type EventType uint8

// The event types.
const (
	// EventRejected: a call was rejected (Limit holds the limit at that moment).
	EventRejected EventType = iota + 1
	// EventLimitChanged: a window ended with a new limit (OldLimit -> Limit).
	EventLimitChanged
)

// String returns "rejected" or "limit_changed".
func (t EventType) String() string {
	switch t {
	case EventRejected:
		return "rejected"
	case EventLimitChanged:
		return "limit_changed"
	}
	return "unknown"
}

// Policy kinds, as used in metric labels (kind="adaptivelimit").
const (
	KindAdaptiveLimit = "adaptivelimit"
)

// Event is one observed event. It is passed by value and allocates nothing.
type Event struct {
	Type     EventType
	Kind     string // the policy kind: KindAdaptiveLimit, ...
	Instance string // the instance id
	Limit    int    // the limit after the event (EventLimitChanged) or at the rejection
	OldLimit int    // the limit before the change (EventLimitChanged)
}
