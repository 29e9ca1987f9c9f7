package r4c

import "context"

// gate is a policy that admits a call before it runs and learns how it ended: the adaptive
// limit (a slot and a start time) and the circuit breaker (a permission). P is what admission
// hands to the settlement.
type gate[P any] interface {
	// admit takes the call's slot or permission (waiting for it, with ctx, if the policy waits),
	// or returns the policy's rejection.
	admit(ctx context.Context) (P, error)
	// settle ends an admitted call with its result, given the caller's context.
	settle(ctx context.Context, p P, err error)
	// abandon ends an admitted call that panicked: nothing is learned from it.
	abandon(p P)
}

// gateStage applies a gate around the rest of the pipeline. A panic abandons the call and keeps
// unwinding; the deferred closure is open-coded and captures by reference on the stack, so the
// stage allocates nothing.
func gateStage[T, P any](g gate[P]) stage[T] {
	return func(next call[T]) call[T] {
		return func(ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
			p, err := g.admit(ctx)
			if err != nil {
				var zero T
				return zero, err
			}
			done := false
			defer func() {
				if !done {
					g.abandon(p)
				}
			}()
			v, err := next(ctx, fn)
			done = true
			g.settle(ctx, p, err)
			return v, err
		}
	}
}
