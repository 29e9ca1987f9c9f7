package r4chttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/edge"
)

// NewTransport returns a RoundTripper that sends each request through the policies of instance
// id (an adaptive limit by default; see WithPolicies) and then base (http.DefaultTransport if
// nil).
//
// A request a policy rejects is not sent: RoundTrip returns the policy's error
// (errors.Is(err, r4c.ErrLimitExceeded), r4c.ErrCircuitOpen, ...), which http.Client wraps in a
// *url.Error. What each response tells the policies is the classifier's
// (DefaultClientClassifier: 429, 502, 503 and 504 are failures for a retry and a breaker and
// drops for the limit; so are transport errors).
//
// The adaptive limit's slot (and a bulkhead's) is held until the response body is read to its
// end or closed, not only until the headers arrive, and a Timeout covers the body too, as
// http.Client.Timeout does: close every body.
//
// A Retry sends the request again with a body from Request.GetBody (http.NewRequest sets it for
// the usual bodies); a request whose body cannot be replayed is sent once. A response that
// fails and will be retried is drained and closed; the wait before the next attempt is the
// longer of the retry's backoff and the response's Retry-After, and the retry gives up when
// Retry-After is longer than its MaxWait. When the retry gives up on failing responses,
// RoundTrip returns the last of them (its body open), as a transport without retry would have.
// A Hedge sends another request when no headers have arrived after its Delay; the first
// response to arrive is returned, the others are closed. A Fallback (r4c.Fallback of
// *http.Response) may answer in place of a failure.
func NewTransport(reg *r4c.Registry, id string, base http.RoundTripper, opts ...Option) (http.RoundTripper, error) {
	if base == nil {
		base = http.DefaultTransport
	}
	o := collect(opts)
	all, err := newPipelines[*http.Response](reg, id, o.policies, o.instanceID)
	if err != nil {
		return nil, fmt.Errorf("r4chttp: NewTransport(%q): %w", id, err)
	}
	// Requests whose body cannot be replayed go through the same instances, without the policies
	// that send a request more than once.
	once := edge.WithoutRepeats(o.policies)
	single, err := newPipelines[*http.Response](reg, id, once, o.instanceID)
	if err != nil {
		return nil, fmt.Errorf("r4chttp: NewTransport(%q): %w", id, err)
	}
	classify := o.classify
	if classify == nil {
		classify = DefaultClientClassifier
	}
	return &transport{base: base, all: all, single: single, classify: classify, bypass: o.bypass}, nil
}

type transport struct {
	base        http.RoundTripper
	all, single *pipelines[*http.Response]
	classify    func(int) error
	bypass      func(*http.Request) bool
}

// RoundTrip sends req through the policies.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.bypass != nil && t.bypass(req) {
		return t.base.RoundTrip(req)
	}
	ps := t.all
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		ps = t.single
	}
	p, err := ps.forRequest(req)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	rt := &roundTrip{t: t, req: req, got: make(chan *http.Response, 1)}
	f := p.ExecuteAsync(req.Context(), rt.attempt)
	select {
	case resp := <-rt.got:
		return resp, nil
	case <-f.Done():
	}
	rt.mu.Lock()
	rt.finished = true // from now on, a late response is drained by its attempt
	last, sent := rt.last, rt.sent
	rt.last = nil
	var delivered *http.Response
	select {
	case delivered = <-rt.got: // delivered as the call ended
	default:
	}
	rt.mu.Unlock()
	if delivered != nil {
		if last != nil {
			drain(last)
		}
		return delivered, nil
	}
	resp, err := f.Get(context.Background()) // done: Get does not wait
	if err == nil {
		if last != nil {
			drain(last)
		}
		return resp, nil // a fallback's
	}
	var se *StatusError
	if last != nil && errors.As(err, &se) {
		return last, nil // the retry gave up on failing responses: the last one, as sent
	}
	if last != nil {
		drain(last)
	}
	if !sent {
		closeBody(req) // rejected before sending: the body is closed as a RoundTripper must
	}
	return nil, err
}

// roundTrip is one RoundTrip: its attempts, the response handed to the caller, and the last
// failing response, kept in case the retry gives up.
type roundTrip struct {
	t   *transport
	req *http.Request
	got chan *http.Response // the response handed to the caller, at most one

	mu        sync.Mutex
	attempts  int
	delivered bool
	finished  bool // RoundTrip has returned, or is returning without a delivered response
	last      *http.Response
	sent      bool // the original body went to base (which closes it)
}

var errDelivered = errors.New("r4chttp: a response was already returned to the caller")

// attempt sends the request once. Its future completes when the call can say how it went: at
// once for a transport error or a failing response; for a good response, when its body is read
// to the end or closed (until then the attempt holds its slot).
func (rt *roundTrip) attempt(ctx context.Context) *r4c.Future[*http.Response] {
	f := r4c.NewFuture[*http.Response]()
	rt.mu.Lock()
	if rt.delivered { // a hedge or a retry after the caller has its response: nothing to do
		rt.mu.Unlock()
		f.Complete(nil, r4c.Ignored(errDelivered))
		return f
	}
	rt.attempts++
	first := rt.attempts == 1
	rt.sent = true
	rt.mu.Unlock()
	// The policies' timers (a timeout, a hedge's delay) start when attempt returns: the request
	// goes in a goroutine of its own.
	go rt.send(ctx, first, f)
	return f
}

// send sends the request once and completes f as attempt says.
func (rt *roundTrip) send(ctx context.Context, first bool, f *r4c.Future[*http.Response]) {

	req := rt.req.WithContext(ctx)
	if !first && rt.req.Body != nil && rt.req.Body != http.NoBody {
		req = req.Clone(ctx)
		body, err := rt.req.GetBody()
		if err != nil {
			f.Complete(nil, r4c.Ignored(fmt.Errorf("r4chttp: GetBody: %w", err)))
			return
		}
		req.Body = body
	}
	resp, err := rt.t.base.RoundTrip(req)
	if err != nil {
		f.Complete(nil, r4c.Dropped(err))
		return
	}
	if cerr := rt.t.classify(resp.StatusCode); cerr != nil {
		var se *StatusError
		if errors.As(cerr, &se) {
			se.Wait = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		}
		rt.mu.Lock()
		prev := rt.last
		if rt.finished {
			prev = resp // RoundTrip returned: no one will take it
		} else {
			rt.last = resp
		}
		rt.mu.Unlock()
		if prev != nil {
			drain(prev)
		}
		f.Complete(nil, cerr)
		return
	}
	resp.Body = &trackedBody{rc: resp.Body, done: func(err error) { f.Complete(resp, err) }}
	rt.mu.Lock()
	if rt.delivered || rt.finished { // another attempt of a hedge won, or RoundTrip returned
		rt.mu.Unlock()
		drain(resp) // ends the attempt, without a sample
		f.Complete(nil, r4c.Ignored(errDelivered))
		return
	}
	rt.delivered = true
	prev := rt.last
	rt.last = nil
	rt.got <- resp // under mu: RoundTrip finds it there once it holds mu (the channel has room)
	rt.mu.Unlock()
	if prev != nil {
		drain(prev)
	}
}

// trackedBody ends its attempt when it is read to the end or closed.
type trackedBody struct {
	rc   io.ReadCloser
	once sync.Once
	done func(error)
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.end(nil)
	case err != nil:
		// A body cut short says little about the server's load, and the caller has the response
		// already: the attempt ends without a sample, and is not retried.
		b.end(r4c.Ignored(err))
	}
	return n, err
}

func (b *trackedBody) Close() error {
	err := b.rc.Close()
	b.end(nil)
	return err
}

func (b *trackedBody) end(err error) { b.once.Do(func() { b.done(err) }) }

// drain reads a little of a discarded response's body, so that its connection can be reused,
// and closes it.
func drain(resp *http.Response) {
	io.CopyN(io.Discard, resp.Body, 4<<10)
	resp.Body.Close()
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// parseRetryAfter reads a Retry-After header: seconds, or an HTTP date. 0 if absent or invalid.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(min(int64(s), int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
