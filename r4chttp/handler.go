package r4chttp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/edge"
)

// NewHandler returns a handler that serves each request through the policies of instance id
// (an adaptive limit by default; see WithPolicies) and then next.
//
// A request a policy rejects is answered at once, without calling next: 503 for a full adaptive
// limit or bulkhead and an open circuit breaker, 429 for a rate limiter without permits, each
// with a Retry-After header (the breaker's remaining open time, the time to the rate limiter's
// next period; for a full limit or bulkhead, where no one can tell when a slot frees, 1 or 2
// seconds at random so that rejected clients do not come back together). A request that runs
// past a Timeout is answered 504 if next has written nothing yet; next's context is cancelled
// and what it writes afterwards is discarded (its writes return http.ErrHandlerTimeout).
//
// What each response tells the policies is the classifier's (DefaultServerClassifier: a status
// below 500 is a success, 429 is ignored, 500, 502, 503 and 504 are drops). A panic in next is a
// drop; it is re-raised once the slot is freed, as net/http expects (http.ErrAbortHandler is
// ignored, then re-raised). A request whose client went away is ignored. A hijacked connection
// (a WebSocket) is ignored too: its slot is held until next returns, but its duration says
// nothing of latency.
//
// The response writer next gets keeps http.Flusher, http.Hijacker and Unwrap, so
// http.ResponseController works through it.
func NewHandler(reg *r4c.Registry, id string, next http.Handler, opts ...Option) (http.Handler, error) {
	if next == nil {
		return nil, fmt.Errorf("r4chttp: NewHandler(%q): the next handler is nil", id)
	}
	o := collect(opts)
	for _, c := range o.policies {
		if edge.Repeats(c) {
			return nil, fmt.Errorf("r4chttp: NewHandler(%q): %T cannot serve a request: a handler runs once per request (use them in NewTransport, on the client)", id, c)
		}
	}
	ps, err := newPipelines[struct{}](reg, id, o.policies, o.instanceID)
	if err != nil {
		return nil, fmt.Errorf("r4chttp: NewHandler(%q): %w", id, err)
	}
	classify := o.classify
	if classify == nil {
		classify = DefaultServerClassifier
	}
	return &handler{next: next, ps: ps, classify: classify, statuses: o.statuses, bypass: o.bypass}, nil
}

type handler struct {
	next     http.Handler
	ps       *pipelines[struct{}]
	classify func(int) error
	statuses []errorStatus
	bypass   func(*http.Request) bool
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.bypass != nil && h.bypass(r) {
		h.next.ServeHTTP(w, r)
		return
	}
	p, err := h.ps.forRequest(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	rw := newResponseWriter(w)
	_, err = p.Execute(r.Context(), func(ctx context.Context) (_ struct{}, err error) {
		defer func() {
			if v := recover(); v != nil {
				err = rw.panicked(v)
			}
		}()
		req := r
		if ctx != r.Context() { // a Timeout's context
			req = r.WithContext(ctx)
		}
		h.next.ServeHTTP(rw, req)
		return struct{}{}, rw.outcome(h.classify)
	})
	if v, ok := rw.panicValue(); ok {
		panic(v) // the slot is free: re-raise for net/http
	}
	if err != nil {
		h.reject(rw, err)
	}
	rw.close()
}

// reject answers a request that a policy rejected or that timed out, if nothing was written.
func (h *handler) reject(rw *responseWriter, err error) {
	code := 0
	for _, s := range h.statuses {
		if errors.Is(err, s.err) {
			code = s.code
			break
		}
	}
	if code == 0 {
		switch {
		case errors.Is(err, r4c.ErrRateLimited):
			code = http.StatusTooManyRequests
		case errors.Is(err, r4c.ErrLimitExceeded), errors.Is(err, r4c.ErrBulkheadFull), errors.Is(err, r4c.ErrCircuitOpen):
			code = http.StatusServiceUnavailable
		case errors.Is(err, r4c.ErrCallTimeout):
			code = http.StatusGatewayTimeout
		default:
			return // next's own outcome, already written
		}
	}
	retryAfter := ""
	if code != http.StatusGatewayTimeout {
		retryAfter = strconv.Itoa(retryAfterSeconds(err))
	}
	rw.answer(code, retryAfter, http.StatusText(code)) // the error names instances: not for clients
}

// retryAfterSeconds is the Retry-After of a rejection: edge.RejectionWait rounded up to whole
// seconds.
func retryAfterSeconds(err error) int {
	return int(math.Ceil(edge.RejectionWait(err).Seconds()))
}
