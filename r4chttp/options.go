// Package r4chttp puts r4c's policies at a service's HTTP edges: NewHandler around a server's
// handler, NewTransport under a client. Both run each request through a pipeline of the
// registry (an adaptive limit by default, or the policies given with WithPolicies), answer or
// return the policies' rejections the way HTTP users expect (503 and 429 with Retry-After, 504
// for a timeout; the policy's error on the client), and tell the policies what each response
// means: docs/http-grpc.md describes every status and outcome.
//
// The package belongs to the core module: it uses the standard library and r4c's public API
// only.
package r4chttp

import (
	"fmt"
	"net/http"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/edge"
)

// Option configures NewHandler and NewTransport. Options that apply to one of them only are
// ignored by the other (each says which).
type Option func(*options)

type options struct {
	policies   []r4c.PolicyConfig
	statuses   []errorStatus
	classify   func(status int) error
	instanceID func(*http.Request) string
	bypass     func(*http.Request) bool
}

type errorStatus struct {
	err  error
	code int
}

// WithPolicies sets the policies every request goes through, in the registry's canonical order
// whatever order they are given in. Without it, the policies are an adaptive limit with the
// instance's resolved settings (registry defaults, named and instance configuration). A
// server's handler refuses Retry, Hedge and Fallback: a request cannot be served twice, and a
// response is written, not returned.
func WithPolicies(cfgs ...r4c.PolicyConfig) Option {
	return func(o *options) { o.policies = append([]r4c.PolicyConfig(nil), cfgs...) }
}

// WithStatus (server) answers a rejection that matches err (errors.Is) with the status code
// instead of the default (503 for r4c.ErrLimitExceeded, r4c.ErrBulkheadFull and
// r4c.ErrCircuitOpen, 429 for r4c.ErrRateLimited, 504 for r4c.ErrCallTimeout). Later options
// are tried first.
func WithStatus(err error, code int) Option {
	return func(o *options) { o.statuses = append([]errorStatus{{err, code}}, o.statuses...) }
}

// WithClassifier says what a response's status means to the policies: nil for a success (a
// latency sample), r4c.Dropped(err) for a sign of overload (a drop for the limit, a failure for
// a breaker, retried by a retry), r4c.Ignored(err) for an outcome no policy learns from, and any
// other error for a failure that is not overload (the limit frees the slot without a sample; a
// breaker records a failure; a retry retries it). Return a new *StatusError (marked or not) on
// each call, so that the status reaches errors.As (the transport records the response's
// Retry-After in it). DefaultServerClassifier and DefaultClientClassifier are the
// defaults.
func WithClassifier(classify func(status int) error) Option {
	return func(o *options) { o.classify = classify }
}

// WithInstanceID chooses the instance id per request: per route, per tenant, per downstream
// host. Each id gets its own instances, built on first use with the same policies; "" means the
// id given to NewHandler or NewTransport. The ids must be a small, bounded set (route patterns,
// not raw paths): each one lives as long as the registry.
func WithInstanceID(fn func(*http.Request) string) Option {
	return func(o *options) { o.instanceID = fn }
}

// WithBypass lets the requests for which fn returns true through without any policy: health
// checks, metrics scrapes, the dashboard.
func WithBypass(fn func(*http.Request) bool) Option {
	return func(o *options) { o.bypass = fn }
}

// StatusError is a response status that a classifier counts as a failure.
type StatusError struct {
	StatusCode int
	// Wait is what the response's Retry-After header asked for (the client side reads it), 0
	// when there was none.
	Wait time.Duration
}

// Error returns "r4chttp: 503 Service Unavailable".
func (e *StatusError) Error() string {
	return fmt.Sprintf("r4chttp: %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// RetryAfter returns Wait: a retry waits at least that long (within its MaxWait) before its
// next attempt.
func (e *StatusError) RetryAfter() time.Duration { return e.Wait }

// DefaultServerClassifier is the server's default: a status below 500 is a success, except 429
// (the handler's own rate limiting: ignored); 500, 502, 503 and 504 are drops (overload); any
// other 5xx is a failure that is not overload.
func DefaultServerClassifier(status int) error {
	switch {
	case status == http.StatusTooManyRequests:
		return r4c.Ignored(&StatusError{StatusCode: status})
	case status < 500:
		return nil
	case isOverloadStatus(status):
		return r4c.Dropped(&StatusError{StatusCode: status})
	}
	return &StatusError{StatusCode: status}
}

// DefaultClientClassifier is the client's default: 429, 502, 503 and 504 are drops (overload:
// retried by a retry, failures for a breaker); every other status is a success (a 500 is the
// server's answer, not a sign that it is overloaded).
func DefaultClientClassifier(status int) error {
	if status == http.StatusTooManyRequests || status != http.StatusInternalServerError && isOverloadStatus(status) {
		return r4c.Dropped(&StatusError{StatusCode: status})
	}
	return nil
}

func isOverloadStatus(status int) bool {
	switch status {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

func collect(opts []Option) options {
	o := edge.Apply(opts)
	o.policies = edge.Policies(o.policies)
	return o
}
