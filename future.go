package r4c

import (
	"context"
	"sync"
)

// Future is the result of an asynchronous call: pending until completed once, with a value and
// an error. It is safe for concurrent use. A Future made by NewFuture is pending; the library
// returns futures from Pipeline.Go and Pipeline.ExecuteAsync.
//
// Callbacks that the library attaches (to release a slot and record a sample) run synchronously
// in the goroutine that completes the future: when Complete returns, they have run.
type Future[T any] struct {
	mu        sync.Mutex
	done      chan struct{}
	completed bool
	val       T
	err       error
	onDone    []func(T, error) // run after completion, in order
	onCancel  []func()         // run by Cancel before onDone
}

// closedDone is the done channel of futures created already completed: no channel per future.
var closedDone = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// NewFuture returns a pending future.
func NewFuture[T any]() *Future[T] {
	return &Future[T]{done: make(chan struct{})}
}

// failedFuture returns a future already completed with err.
func failedFuture[T any](err error) *Future[T] {
	return &Future[T]{done: closedDone, completed: true, err: err}
}

// Complete completes the future with v and err. It reports false, and changes nothing, when the
// future was already completed or cancelled.
func (f *Future[T]) Complete(v T, err error) bool {
	return f.finish(v, err, false)
}

// Cancel cancels a pending future: it completes with context.Canceled, the call behind it has
// its context cancelled and its slot freed without a sample. It reports false when the future
// was already done.
func (f *Future[T]) Cancel() bool {
	var zero T
	return f.finish(zero, context.Canceled, true)
}

// cancelWith cancels the future with err (the caller's context error) instead of Canceled.
func (f *Future[T]) cancelWith(err error) bool {
	var zero T
	return f.finish(zero, err, true)
}

func (f *Future[T]) finish(v T, err error, cancel bool) bool {
	f.mu.Lock()
	if f.completed {
		f.mu.Unlock()
		return false
	}
	f.completed, f.val, f.err = true, v, err
	onDone, onCancel := f.onDone, f.onCancel
	f.onDone, f.onCancel = nil, nil
	f.mu.Unlock()
	if cancel {
		for _, fn := range onCancel {
			fn()
		}
	}
	for _, fn := range onDone {
		fn(v, err)
	}
	// Waiters wake only after the callbacks ran: a Get that returns sees the slot released.
	close(f.done)
	return true
}

// Get waits for the future and returns its value and error, or ctx's error if ctx is done first
// (the future itself is not cancelled then).
func (f *Future[T]) Get(ctx context.Context) (T, error) {
	select {
	case <-f.done:
		return f.val, f.err
	default:
	}
	if ctx == nil {
		var zero T
		return zero, errNilContext
	}
	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// Done returns a channel that is closed once the future is complete.
func (f *Future[T]) Done() <-chan struct{} { return f.done }

// whenDone calls fn with the result once the future completes: at once, in this goroutine, if
// it already has.
func (f *Future[T]) whenDone(fn func(T, error)) {
	f.mu.Lock()
	if f.completed {
		f.mu.Unlock()
		fn(f.val, f.err)
		return
	}
	f.onDone = append(f.onDone, fn)
	f.mu.Unlock()
}

// whenCancelled calls fn if the future is cancelled (never if it completes otherwise). It
// reports false, and will never call fn, when the future was already done.
func (f *Future[T]) whenCancelled(fn func()) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.completed {
		return false
	}
	f.onCancel = append(f.onCancel, fn)
	return true
}
