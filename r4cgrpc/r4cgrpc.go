// Package r4cgrpc puts r4c's policies in gRPC interceptors, on the server and on the client:
// each call goes through a pipeline of the registry (an adaptive limit by default, or the
// policies given with WithPolicies).
//
// A call a policy rejects fails with codes.ResourceExhausted and a grpc-retry-pushback-ms
// trailer (the time the policy says to wait: an open breaker's remaining open time, a rate
// limiter's next period; for a full limit or bulkhead, 1 to 2 seconds at random), which gRPC's
// own retry honours, and so does an r4c Retry in the client interceptor; a call that runs past
// a Timeout fails with codes.DeadlineExceeded. The errors keep the policy's error reachable:
// errors.Is(err, r4c.ErrLimitExceeded) and status.Code(err) both work.
//
// What a call's status tells the policies, and why streams are limited but are not latency
// samples, is in docs/http-grpc.md and on each constructor.
package r4cgrpc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/edge"
)

// Option configures the interceptors.
type Option func(*options)

type options struct {
	policies   []r4c.PolicyConfig
	instanceID func(fullMethod string) string
	bypass     func(fullMethod string) bool
}

// WithPolicies sets the policies every call goes through, in the registry's canonical order.
// Without it, an adaptive limit with the instance's resolved settings. The server interceptors
// refuse Retry and Hedge (a call cannot be served twice); the stream interceptors leave them
// out (a stream cannot be replayed).
func WithPolicies(cfgs ...r4c.PolicyConfig) Option {
	return func(o *options) { o.policies = append([]r4c.PolicyConfig(nil), cfgs...) }
}

// WithInstanceID chooses the instance id per method ("/pkg.Service/Method"): each id gets its
// own instances, built on first use with the same policies; "" means the interceptor's id.
// MethodID gives every method its own.
func WithInstanceID(fn func(fullMethod string) string) Option {
	return func(o *options) { o.instanceID = fn }
}

// MethodID is a WithInstanceID function that gives each method an instance of its own: its
// full name, "/pkg.Service/Method".
func MethodID(fullMethod string) string { return fullMethod }

// WithBypass lets the methods for which fn returns true through without any policy (the
// health service, reflection).
func WithBypass(fn func(fullMethod string) bool) Option {
	return func(o *options) { o.bypass = fn }
}

func collect(opts []Option) options {
	o := edge.Apply(opts)
	o.policies = edge.Policies(o.policies)
	return o
}

// PushbackKey is the trailer in which a rejection says how long to wait before trying again,
// in milliseconds, as gRPC's retry policy reads it.
const PushbackKey = "grpc-retry-pushback-ms"

// policyError is the error of a call a policy rejected or timed out: gRPC sees its status
// (ResourceExhausted, DeadlineExceeded), errors.Is and errors.As the policy's error.
type policyError struct {
	st  *status.Status
	err error
}

func (e *policyError) Error() string              { return e.st.Message() }
func (e *policyError) Unwrap() error              { return e.err }
func (e *policyError) GRPCStatus() *status.Status { return e.st }

// policyStatus turns a policy's rejection or timeout into the error the interceptors return,
// with the pushback to send; ok is false for any other error.
func policyStatus(err error) (out error, pushback time.Duration, ok bool) {
	var code codes.Code
	switch {
	case errors.Is(err, r4c.ErrCallTimeout):
		code = codes.DeadlineExceeded
	case errors.Is(err, r4c.ErrLimitExceeded), errors.Is(err, r4c.ErrBulkheadFull),
		errors.Is(err, r4c.ErrRateLimited), errors.Is(err, r4c.ErrCircuitOpen):
		code = codes.ResourceExhausted
		pushback = edge.RejectionWait(err)
	default:
		return err, 0, false
	}
	return &policyError{st: status.New(code, err.Error()), err: err}, pushback, true
}

func pushbackMD(d time.Duration) metadata.MD {
	return metadata.Pairs(PushbackKey, strconv.FormatInt(d.Milliseconds(), 10))
}

// serverOutcome is what a server call's error tells the policies: nil and application errors
// are successes (the server answered: its latency is a sample); DeadlineExceeded,
// ResourceExhausted and Unavailable are drops; a cancelled call is ignored (the pipeline
// ignores it anyway once the caller's context is done).
func serverOutcome(err error) error {
	switch status.Code(err) {
	case codes.OK:
		return nil
	case codes.DeadlineExceeded, codes.ResourceExhausted, codes.Unavailable:
		return r4c.Dropped(err)
	case codes.Canceled:
		return r4c.Ignored(err)
	}
	return nil
}

// clientOutcome is what a client call's error tells the policies: Unavailable,
// ResourceExhausted and DeadlineExceeded (from the server, or a transport failure) are drops,
// retried by a retry and failures for a breaker; a call the caller cancelled is ignored; OK and
// application errors are successes (the server answered).
func clientOutcome(ctx context.Context, err error) error {
	switch status.Code(err) {
	case codes.OK:
		return nil
	case codes.Unavailable, codes.ResourceExhausted, codes.DeadlineExceeded:
		if ctx.Err() != nil {
			return r4c.Ignored(err)
		}
		return r4c.Dropped(err)
	case codes.Canceled:
		return r4c.Ignored(err)
	}
	return nil
}

// panicError is the error of a handler that panicked: codes.Internal to the client, a drop for
// the policies.
func panicError(v any) error {
	return status.Error(codes.Internal, fmt.Sprintf("r4cgrpc: the handler panicked: %v", v))
}

// errStreamEnded marks a stream's end for the policies: a stream is not a latency sample.
var errStreamEnded = errors.New("r4cgrpc: a stream ended")
