package r4c

import (
	"context"
	"fmt"
	"reflect"
	"strings"
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
	limitRejected  *Future[T]
	limitRejection error

	// The enabled policies, for the asynchronous driver (async.go); nil when absent or
	// disabled.
	breaker  *CircuitBreakerHandle
	rate     *RateLimiterHandle
	timeout  *TimeoutHandle
	bulkhead *BulkheadHandle
	retry    *RetryHandle
	hedge    *HedgeHandle
	fallback *FallbackConfig[T]
	// admitsFirst: no policy acts on a rejection by the breaker, the rate limiter or the limit
	// (neither waits), so an async call is admitted before anything is allocated.
	admitsFirst bool
}

// call is a pipeline, or the rest of one, applied to a function. Stages pass fn down instead of
// wrapping it, so composing them costs no allocation per call.
type call[T any] func(ctx context.Context, fn func(context.Context) (T, error)) (T, error)

// stage is one policy: it wraps the rest of the pipeline.
type stage[T any] func(next call[T]) call[T]

func invoke[T any](ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	return fn(ctx)
}

// pipelineOwner labels the instances a pipeline creates, in R4C-REG-008 messages: a generated
// method's id, "<package path>.<Type>#<Method>(<parameter types>)", as a reader knows the method
// ("OrderClient#Place(string)": no package, no context); any other id as pipeline "<id>".
func pipelineOwner(id string) string {
	typ, rest, ok := strings.Cut(id, "#")
	open := strings.IndexByte(rest, '(')
	if !ok || open <= 0 || !strings.HasSuffix(rest, ")") {
		return "pipeline " + quote(id)
	}
	if dot := strings.LastIndexByte(typ, '.'); dot >= 0 {
		typ = typ[dot+1:]
	}
	params := strings.TrimSuffix(rest[open+1:], ")")
	params = strings.TrimPrefix(strings.TrimPrefix(params, "context.Context"), ",")
	return typ + "#" + rest[:open] + "(" + params + ")"
}

// NewPipeline builds a pipeline whose policies have instance id id, creating the instances in
// reg or sharing them with earlier pipelines and wrappers of the same id. Each policy's
// configuration resolves as built-in defaults < WithDefaults < its named configuration (Config)
// < cfgs < WithInstance(id). It fails with a coded error (see ErrorCode) for an invalid or
// unknown setting, a policy given twice, or an existing instance with a different resolved
// configuration (R4C-REG-008); nothing is registered then.
//
// A policy given with Shared(otherID, cfg) has the instance id otherID instead.
func NewPipeline[T any](reg *Registry, id string, cfgs ...PolicyConfig) (*Pipeline[T], error) {
	if reg == nil {
		return nil, &ConfigError{Code: codeNilRegistry, Instance: id, Msg: fmt.Sprintf("NewPipeline(%s): the registry is nil: make one with NewRegistry", quote(id))}
	}
	if id == "" {
		return nil, &ConfigError{Code: codeInvalidSetting, Key: "id", Msg: "NewPipeline: the instance id is empty"}
	}
	var fallback *FallbackConfig[T]
	ps, err := reg.resolvePolicies(id, pipelineOwner(id), cfgs, func(fb fallbackConfig) error {
		f, ok := fb.(FallbackConfig[T])
		if !ok {
			return &ConfigError{Code: codeBadFallback, Instance: id, Policy: "fallback",
				Msg: fmt.Sprintf("instance %s: the fallback returns %v, the pipeline %v", quote(id), fb.fallbackType(), reflect.TypeFor[T]())}
		}
		if f.Fn == nil {
			return &ConfigError{Code: codeBadFallback, Instance: id, Policy: "fallback", Key: "fn", Value: "nil",
				Msg: fmt.Sprintf("instance %s: the fallback function is nil", quote(id))}
		}
		if _, err := checkErrorList(f.On, "instance "+quote(id), "fallback", "on"); err != nil {
			return err
		}
		fallback = &f
		return nil
	})
	if err != nil {
		return nil, err
	}
	p := &Pipeline[T]{id: id, reg: reg, limit: ps.limit}
	s := stages(ps, fallback)
	p.run = compose(s)
	if ps.limit != nil && ps.limit.enabled {
		p.limitRejection = ps.limit.rejection
		p.limitRejected = failedFuture[T](ps.limit.rejection)
	}
	p.breaker = enabled(ps.breaker, ps.breaker != nil && ps.breaker.enabled)
	p.rate = enabled(ps.rate, ps.rate != nil && ps.rate.enabled)
	p.timeout = enabled(ps.timeout, ps.timeout != nil && ps.timeout.enabled)
	p.bulkhead = enabled(ps.bulkhead, ps.bulkhead != nil && ps.bulkhead.enabled)
	p.retry = enabled(ps.retry, ps.retry != nil && ps.retry.enabled)
	p.hedge = enabled(ps.hedge, ps.hedge != nil && ps.hedge.enabled)
	p.fallback = fallback
	p.admitsFirst = p.retry == nil && p.hedge == nil && p.fallback == nil && (p.rate == nil || p.rate.maxWait == 0) &&
		(p.limit == nil || p.limit.maxWait == 0)
	return p, nil
}

// ID returns the pipeline's instance id.
func (p *Pipeline[T]) ID() string { return p.id }

func (p *Pipeline[T]) checkCall(ctx context.Context, fnNil bool) error {
	if ctx == nil {
		return &ConfigError{Code: codeBadCall, Instance: p.id, Key: "ctx", Value: "nil",
			Msg: fmt.Sprintf("pipeline %s: the context is nil: the library never substitutes one", quote(p.id))}
	}
	if fnNil {
		return &ConfigError{Code: codeBadCall, Instance: p.id, Key: "fn", Value: "nil",
			Msg: fmt.Sprintf("pipeline %s: the function is nil", quote(p.id))}
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

// enabled returns h when on, else nil.
func enabled[H any](h *H, on bool) *H {
	if on {
		return h
	}
	return nil
}
