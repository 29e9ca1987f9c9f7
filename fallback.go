package r4c

import (
	"context"
	"reflect"
)

// FallbackConfig replaces a pipeline's failure with a value. It is typed by the pipeline's T, so
// it is given to NewPipeline (not to the registry) and is always the outermost policy: it sees
// the final error of every inner policy (a full limit, an open breaker, an exhausted retry...).
type FallbackConfig[T any] struct {
	// Fn computes the replacement from the failure. It may itself fail.
	Fn func(ctx context.Context, err error) (T, error)
	// On lists the errors that fall back (errors.Is); empty means every error. A failure once
	// the caller's context is done never falls back.
	On []error
}

// Fallback returns a FallbackConfig calling fn for the errors in on (every error if none).
func Fallback[T any](fn func(ctx context.Context, err error) (T, error), on ...error) FallbackConfig[T] {
	return FallbackConfig[T]{Fn: fn, On: on}
}

// policyName returns "fallback".
func (FallbackConfig[T]) policyName() string { return "fallback" }

func (FallbackConfig[T]) addTo(layer, string, bool) error { return nil } // refused before: see addLayer
func (FallbackConfig[T]) namedConfig() string             { return "" }
func (FallbackConfig[T]) fallbackType() reflect.Type      { return reflect.TypeFor[T]() }

// fallbackStage runs the rest and replaces a matching failure with Fn's result.
func fallbackStage[T any](f FallbackConfig[T]) stage[T] {
	return func(next call[T]) call[T] {
		return func(ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
			v, err := next(ctx, fn)
			if err == nil || ctx.Err() != nil || (len(f.On) > 0 && !matchesAny(err, f.On)) {
				return v, err
			}
			return f.Fn(ctx, err)
		}
	}
}
