package r4c

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
)

// Pipeline runs functions returning T through a fixed set of policies, all with the instance id
// given to NewPipeline. The policies are resolved once, at construction; a call does no lookups
// and, through an adaptive limit alone, allocates nothing. A Pipeline is safe for concurrent use.
//
// Whatever order the configs are given in, the policies apply in the canonical order, outermost
// first: Fallback > Retry > Hedge > CircuitBreaker > RateLimiter > AdaptiveLimit > Timeout >
// Bulkhead > the call.
type Pipeline[T any] struct {
	id    string
	reg   *Registry
	limit *AdaptiveLimitHandle // nil when the pipeline has no adaptive limit
	run   call[T]              // the policies composed in canonical order, ending in the call
	// limitRejected is the future every async call rejected by the limit gets: completed once,
	// a future is immutable, so all rejections can share it and allocate nothing.
	limitRejected *Future[T]
	// limitOnly: the adaptive limit is the one enabled policy, so async calls take its slot
	// directly and hold it until their future completes.
	limitOnly bool
	// bridged: other policies apply, so an async call runs the whole chain in a goroutine.
	bridged bool
}

// call is a pipeline, or the rest of one, applied to a function. Stages pass fn down instead of
// wrapping it, so composing them costs no allocation per call.
type call[T any] func(ctx context.Context, fn func(context.Context) (T, error)) (T, error)

// stage is one policy: it wraps the rest of the pipeline.
type stage[T any] func(next call[T]) call[T]

func invoke[T any](ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	return fn(ctx)
}

// pipelineOwner labels instances created by pipelines in R4C-REG-008 messages.
const pipelineOwner = "a pipeline"

// NewPipeline builds a pipeline whose policies have instance id id, creating the instances in
// reg or sharing them with earlier pipelines and wrappers of the same id. Each policy's
// configuration resolves as built-in defaults < WithDefaults < its named configuration (Config)
// < cfgs < WithInstance(id). It fails with a coded error (see ErrorCode) for an invalid or
// unknown setting, a policy given twice, or an existing instance with a different resolved
// configuration (R4C-REG-008); nothing is registered then.
func NewPipeline[T any](reg *Registry, id string, cfgs ...PolicyConfig) (*Pipeline[T], error) {
	return newPipeline[T](reg, id, pipelineOwner, nil, cfgs)
}

// newPipeline builds a pipeline for NewPipeline or a generated wrapper's method (owner names it
// in R4C-REG-008 messages; ids gives policies with a name= of their own their instance id).
func newPipeline[T any](reg *Registry, id, owner string, ids map[string]string, cfgs []PolicyConfig) (*Pipeline[T], error) {
	if reg == nil {
		return nil, &ConfigError{Code: CodeInvalidSetting, Instance: id, Msg: fmt.Sprintf("NewPipeline(%s): the registry is nil", quote(id))}
	}
	if id == "" {
		return nil, &ConfigError{Code: CodeInvalidSetting, Key: "id", Msg: "NewPipeline: the instance id is empty"}
	}
	ps, fb, err := reg.resolvePolicies(id, owner, ids, cfgs)
	if err != nil {
		return nil, err
	}
	var fallback *FallbackConfig[T]
	if fb != nil {
		f, ok := fb.(FallbackConfig[T])
		if !ok {
			return nil, &ConfigError{Code: CodeInvalidSetting, Instance: id, Policy: "fallback",
				Msg: fmt.Sprintf("instance %s: the fallback returns %v, the pipeline %v", quote(id), fb.fallbackType(), reflect.TypeFor[T]())}
		}
		if f.Fn == nil {
			return nil, &ConfigError{Code: CodeInvalidSetting, Instance: id, Policy: "fallback", Key: "fn", Value: "nil",
				Msg: fmt.Sprintf("instance %s: the fallback function is nil", quote(id))}
		}
		if _, err := checkErrorList(f.On, "instance "+quote(id), "fallback", "on"); err != nil {
			return nil, err
		}
		fallback = &f
	}
	p := &Pipeline[T]{id: id, reg: reg, limit: ps.limit}
	s := stages(ps, fallback)
	p.run = compose(s)
	if ps.limit != nil && ps.limit.enabled {
		p.limitRejected = failedFuture[T](ps.limit.rejection)
		// Async calls take their slot directly (and are measured to their future's completion)
		// only when the limit is the one policy; otherwise the whole chain runs per call.
		p.limitOnly = len(s) == 1
	}
	p.bridged = len(s) > 0 && !p.limitOnly
	return p, nil
}

// ID returns the pipeline's instance id.
func (p *Pipeline[T]) ID() string { return p.id }

func (p *Pipeline[T]) checkCall(ctx context.Context, fnNil bool) error {
	if ctx == nil {
		return fmt.Errorf("r4c: pipeline %s: %w", quote(p.id), errNilContext)
	}
	if fnNil {
		return fmt.Errorf("r4c: pipeline %s: the function is nil", quote(p.id))
	}
	return nil
}

// Execute runs fn through the pipeline in the calling goroutine and returns its result, or the
// error of the policy that stopped it (errors.Is(err, ErrLimitExceeded) when the limit is full:
// fn is not called then). fn receives ctx. A panic in fn frees its slot and is re-raised.
func (p *Pipeline[T]) Execute(ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	if ctx == nil || fn == nil {
		var zero T
		return zero, p.checkCall(ctx, fn == nil)
	}
	return p.run(ctx, fn)
}

// asyncSlot ends an asynchronous call's slot exactly once, whichever of completion,
// cancellation of the future or of the caller's context comes first.
type asyncSlot struct {
	l     *AdaptiveLimitHandle
	start int64
	ended atomic.Bool
}

func (s *asyncSlot) end(o outcome) {
	if s.l != nil && s.ended.CompareAndSwap(false, true) {
		s.l.release(s.start, o)
	}
}

// admitAsync takes the slot of an asynchronous call, if the pipeline has a limit. On a
// rejection it returns the pipeline's shared rejected future, before anything is allocated.
func (p *Pipeline[T]) admitAsync() (*asyncSlot, *Future[T]) {
	if !p.limitOnly {
		return &asyncSlot{}, nil
	}
	start, err := p.limit.acquire()
	if err != nil {
		return nil, p.limitRejected
	}
	return &asyncSlot{l: p.limit, start: start}, nil
}

// beginAsync prepares the future of an admitted asynchronous call: cancelling the future, or
// the caller's ctx, cancels the call's context and frees the slot without a sample. finish
// ends the call with its result.
func (p *Pipeline[T]) beginAsync(ctx context.Context, slot *asyncSlot) (cctx context.Context, out *Future[T], finish func(T, error)) {
	cctx, cancel := context.WithCancel(ctx)
	out = NewFuture[T]()
	stop := context.AfterFunc(ctx, func() { out.cancelWith(ctx.Err()) })
	cancelled := func() {
		stop() // unregisters from ctx, which may live much longer than the call
		slot.end(outcomeFree)
		cancel()
	}
	if !out.whenCancelled(cancelled) {
		cancelled() // ctx was already done: the future is cancelled
	}
	finish = func(v T, err error) {
		stop()
		if slot.l != nil {
			slot.end(slot.l.classify(ctx, err))
		}
		cancel()
		out.Complete(v, err)
	}
	return cctx, out, finish
}

// Go runs fn through the pipeline in a new goroutine and returns its future at once. The call
// holds its slot until fn returns, and its latency is measured to then. A full limit returns
// an already failed future (fn is not called). Cancelling the future, or ctx, cancels fn's
// context and frees the slot at once without a sample. A panic in fn frees the slot and fails
// the future with a *PanicError.
func (p *Pipeline[T]) Go(ctx context.Context, fn func(context.Context) (T, error)) *Future[T] {
	if ctx == nil || fn == nil {
		return failedFuture[T](p.checkCall(ctx, fn == nil))
	}
	if p.bridged {
		return p.goChain(ctx, fn)
	}
	slot, rejected := p.admitAsync()
	if rejected != nil {
		return rejected
	}
	cctx, out, finish := p.beginAsync(ctx, slot)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				slot.end(outcomeFree)
				var zero T
				finish(zero, newPanicError(r))
			}
		}()
		v, err := fn(cctx)
		finish(v, err)
	}()
	return out
}

// ExecuteAsync runs fn, which is itself asynchronous, through the pipeline. The call holds its
// slot until fn's future completes, and its latency is measured to that completion. A full
// limit returns an already failed future (fn is not called). Cancelling the returned future, or
// ctx, cancels fn's future and context and frees the slot at once without a sample. A panic in
// fn frees the slot and is re-raised; a nil future from fn fails the call.
func (p *Pipeline[T]) ExecuteAsync(ctx context.Context, fn func(context.Context) *Future[T]) *Future[T] {
	if ctx == nil || fn == nil {
		return failedFuture[T](p.checkCall(ctx, fn == nil))
	}
	if p.bridged {
		return p.goChain(ctx, func(ctx context.Context) (T, error) { return p.await(ctx, fn) })
	}
	slot, rejected := p.admitAsync()
	if rejected != nil {
		return rejected
	}
	cctx, out, finish := p.beginAsync(ctx, slot)
	var inner *Future[T]
	func() {
		defer func() {
			if inner == nil {
				// fn panicked or returned nil: no future will ever end this call.
				slot.end(outcomeFree)
				var zero T
				finish(zero, fmt.Errorf("r4c: pipeline %s: %w", quote(p.id), errNilFuture))
			}
		}()
		inner = fn(cctx)
	}()
	if inner == nil {
		return out
	}
	if !out.whenCancelled(func() { inner.Cancel() }) {
		inner.Cancel() // ctx was cancelled while fn ran
	}
	inner.whenDone(finish)
	return out
}

var errNilFuture = errors.New("the function returned a nil *Future")

// goChain runs the whole chain of policies in a new goroutine, for async calls through a
// pipeline with more than an adaptive limit: every policy then applies to the call as a whole
// (a retry calls fn again, a timeout bounds the wait for the result), and an adaptive limit's
// slot is held until the chain returns.
func (p *Pipeline[T]) goChain(ctx context.Context, fn func(context.Context) (T, error)) *Future[T] {
	cctx, out, finish := p.beginAsync(ctx, &asyncSlot{})
	go func() {
		defer func() {
			if r := recover(); r != nil {
				var zero T
				finish(zero, newPanicError(r))
			}
		}()
		v, err := p.run(cctx, fn)
		finish(v, err)
	}()
	return out
}

// await calls the asynchronous fn and waits for its future, cancelling it if ctx is done first
// (the caller cancelled, or a timeout expired).
func (p *Pipeline[T]) await(ctx context.Context, fn func(context.Context) *Future[T]) (T, error) {
	f := fn(ctx)
	if f == nil {
		var zero T
		return zero, fmt.Errorf("r4c: pipeline %s: %w", quote(p.id), errNilFuture)
	}
	select {
	case <-f.Done():
		return f.val, f.err
	case <-ctx.Done():
		f.Cancel()
		<-f.Done()
		return f.val, f.err
	}
}
