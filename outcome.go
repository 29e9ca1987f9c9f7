package r4c

import "errors"

// Dropped marks err as a sign of overload: every adaptive limit the call passes through counts
// it as a drop, whatever its DropOn says, as it counts a timeout. The other policies see err as
// they see any error (a failure for a circuit breaker, retried by a retry, unless their own
// lists say otherwise). errors.Is and errors.As see through the mark to err; Dropped(nil) is nil.
//
// Integrations use it for failures that are not Go errors of the dependency: an HTTP client
// marks a 503 response, a server a 5xx it is about to send. DropOn stays the way to name errors
// that are drops wherever they come from.
func Dropped(err error) error {
	if err == nil {
		return nil
	}
	return &markedError{err: err, mark: errDroppedMark}
}

// Ignored marks err as an outcome no policy learns from: an adaptive limit frees the call's slot
// without a sample, a circuit breaker does not record it (a half-open trial's permission goes
// back), a retry does not retry it; as if the caller had cancelled the call. errors.Is and
// errors.As see through the mark to err; Ignored(nil) is nil.
//
// Integrations use it for endings that say nothing of the dependency's health: a request whose
// client went away, a response the server's own rate limiting refused.
func Ignored(err error) error {
	if err == nil {
		return nil
	}
	return &markedError{err: err, mark: errIgnoredMark}
}

// The marks of Dropped and Ignored, matched with errors.Is.
var (
	errDroppedMark = errors.New("r4c: dropped")
	errIgnoredMark = errors.New("r4c: ignored")
)

// markedError is an error with a mark that the policies read: it matches its mark with
// errors.Is and unwraps to the error it marks.
type markedError struct {
	err  error
	mark error
}

func (e *markedError) Error() string        { return e.err.Error() }
func (e *markedError) Unwrap() error        { return e.err }
func (e *markedError) Is(target error) bool { return target == e.mark }

// isIgnored reports whether err carries the mark of Ignored.
func isIgnored(err error) bool { return errors.Is(err, errIgnoredMark) }

// isDropped reports whether err carries the mark of Dropped.
func isDropped(err error) bool { return errors.Is(err, errDroppedMark) }
