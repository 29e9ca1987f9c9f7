package r4c

import (
	"context"
	"sync"
)

// Future is the result of an asynchronous call: pending until completed once, with a value and
// an error. It is safe for concurrent use. A Future made by NewFuture is pending; the library
// returns futures from Pipeline.Go and Pipeline.ExecuteAsync.
//
// What the library attaches to a future (the end of a call: its slots freed, its sample
// recorded, its breaker outcome, its retry) runs synchronously in the goroutine that completes
// it: when Complete returns, all of it has run, and a Get that returns sees it done.
type Future[T any] struct {
	mu    sync.Mutex
	state futureState
	done  chan struct{} // made when first asked for while pending; closed once done
	val   T
	err   error
	// Listeners are the library's: one in a field, since nearly every future has one, more in
	// a slice (a function that returns the same future for two attempts).
	first futureListener[T]
	more  []futureListener[T]
	// owner is the call behind a future the library returned: cancelling the future cancels it.
	owner canceller
}

type futureState uint8

const (
	futurePending    futureState = iota
	futureCompleting             // completed; listeners running, waiters not yet woken
	futureDone
)

// futureListener is told once when a future completes, in the completing goroutine.
type futureListener[T any] interface {
	futureDone(v T, err error)
}

// canceller is the call behind a future the library returned: Cancel on that future cancels it.
type canceller interface {
	cancelCall(err error)
}

// closedDone is the done channel of futures that were done before anyone asked for it.
var closedDone = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// NewFuture returns a pending future.
func NewFuture[T any]() *Future[T] {
	return &Future[T]{}
}

// failedFuture returns a future already completed with err.
func failedFuture[T any](err error) *Future[T] {
	return &Future[T]{state: futureDone, done: closedDone, err: err}
}

// Complete completes the future with v and err. It reports false, and changes nothing, when the
// future was already completed or cancelled. Completing a future that the library returned ends
// the call behind it, as Cancel does (its function's context and future are cancelled, its slots
// freed without a sample), and the future holds v and err.
func (f *Future[T]) Complete(v T, err error) bool {
	return f.finish(v, err, true)
}

// Cancel cancels a pending future: it completes with context.Canceled and, when the library
// returned it, the call behind it ends: its function's context and inner future are cancelled,
// its slots freed without a sample and its timers stopped. It reports false when the future was
// already done.
func (f *Future[T]) Cancel() bool {
	var zero T
	return f.finish(zero, context.Canceled, true)
}

// finish completes the future; ending tells the call behind it (if any) to end, which the call
// itself does not need when it completes its own future.
func (f *Future[T]) finish(v T, err error, ending bool) bool {
	f.mu.Lock()
	if f.state != futurePending {
		f.mu.Unlock()
		return false
	}
	f.state, f.val, f.err = futureCompleting, v, err
	first, more, owner := f.first, f.more, f.owner
	f.first, f.more, f.owner = nil, nil, nil
	f.mu.Unlock()
	if ending && owner != nil {
		owner.cancelCall(err)
	}
	if first != nil {
		first.futureDone(v, err)
	}
	for _, l := range more {
		l.futureDone(v, err)
	}
	// Waiters wake only after the listeners ran: a Get that returns sees the slot released.
	f.mu.Lock()
	f.state = futureDone
	if f.done == nil {
		f.done = closedDone
	} else {
		close(f.done)
	}
	f.mu.Unlock()
	return true
}

// Get waits for the future and returns its value and error, or ctx's error if ctx is done first
// (the future itself is not cancelled then).
func (f *Future[T]) Get(ctx context.Context) (T, error) {
	done := f.Done()
	select {
	case <-done:
		return f.val, f.err
	default:
	}
	if ctx == nil {
		var zero T
		return zero, errNilContext
	}
	select {
	case <-done:
		return f.val, f.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// Done returns a channel that is closed once the future is complete.
func (f *Future[T]) Done() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done == nil {
		// Made only when somebody waits: a future completed before anyone asked costs none.
		f.done = make(chan struct{})
	}
	return f.done
}

// listen tells l once the future completes: at once, in this goroutine, if it already has.
func (f *Future[T]) listen(l futureListener[T]) {
	f.mu.Lock()
	if f.state != futurePending {
		v, err := f.val, f.err
		f.mu.Unlock()
		l.futureDone(v, err)
		return
	}
	if f.first == nil {
		f.first = l
	} else {
		f.more = append(f.more, l)
	}
	f.mu.Unlock()
}
