package r4chttp_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4chttp"
)

func newClient(t *testing.T, reg *r4c.Registry, id string, opts ...r4chttp.Option) *http.Client {
	t.Helper()
	rt, err := r4chttp.NewTransport(reg, id, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: rt}
}

// flaky answers 503 (with retryAfter, if set) to the first fails requests, then 200 with the
// request's body; it records the bodies it received.
type flaky struct {
	fails      int
	retryAfter string
	mu         sync.Mutex
	bodies     []string
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, string(b))
	n := len(f.bodies)
	f.mu.Unlock()
	if n <= f.fails {
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "busy")
		return
	}
	io.WriteString(w, "got "+string(b))
}

func TestClientRetryResendsThePostBody(t *testing.T) {
	reg, _ := newRegistry(t)
	backend := &flaky{fails: 2}
	srv := httptest.NewServer(backend)
	defer srv.Close()
	client := newClient(t, reg, "orders", r4chttp.WithPolicies(r4c.AdaptiveLimitConfig{}, r4c.RetryConfig{MaxAttempts: 3, Wait: r4c.NoWait}))
	resp, err := client.Post(srv.URL, "text/plain", strings.NewReader("order 42"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "got order 42" {
		t.Fatalf("%d %q", resp.StatusCode, b)
	}
	if strings.Join(backend.bodies, "|") != "order 42|order 42|order 42" {
		t.Fatalf("bodies sent: %q", backend.bodies)
	}
	retry, _ := reg.Retry("orders")
	if s := retry.Snapshot(); s.SuccessfulWithRetry != 1 || s.Retries != 2 {
		t.Fatalf("%+v", s)
	}
}

func TestClientDoesNotRetryABodyThatCannotBeReplayed(t *testing.T) {
	reg, _ := newRegistry(t)
	backend := &flaky{fails: 1}
	srv := httptest.NewServer(backend)
	defer srv.Close()
	client := newClient(t, reg, "orders", r4chttp.WithPolicies(r4c.AdaptiveLimitConfig{}, r4c.RetryConfig{MaxAttempts: 3, Wait: r4c.NoWait}))
	req, _ := http.NewRequest(http.MethodPost, srv.URL, io.NopCloser(strings.NewReader("once"))) // no GetBody
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || len(backend.bodies) != 1 {
		t.Fatalf("%d after %d sends, want the 503 of the only send", resp.StatusCode, len(backend.bodies))
	}
}

func TestClientRetryHonoursRetryAfterWithinMaxWait(t *testing.T) {
	reg, clock := newRegistry(t)
	backend := &flaky{fails: 1, retryAfter: "5"}
	srv := httptest.NewServer(backend)
	defer srv.Close()
	client := newClient(t, reg, "ra", r4chttp.WithPolicies(r4c.RetryConfig{MaxAttempts: 2, Wait: time.Second, MaxWait: 10 * time.Second}))
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	waitPending(t, clock, 1) // the retry's wait
	clock.Advance(5*time.Second - 1)
	select {
	case <-done:
		t.Fatal("retried before Retry-After")
	default:
	}
	clock.Advance(1)
	if resp := <-done; resp == nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%v", resp)
	} else {
		resp.Body.Close()
	}

	// Retry-After beyond MaxWait: the retry gives up at once, and the caller gets the 503.
	backend2 := &flaky{fails: 1, retryAfter: "60"}
	srv2 := httptest.NewServer(backend2)
	defer srv2.Close()
	resp, err := client.Get(srv2.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || string(b) != "busy" || len(backend2.bodies) != 1 {
		t.Fatalf("%d %q after %d sends", resp.StatusCode, b, len(backend2.bodies))
	}
}

func TestClientSlotIsHeldUntilTheBodyIsClosed(t *testing.T) {
	reg, clock := newRegistry(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 1<<16))
	}))
	defer srv.Close()
	client := newClient(t, reg, "dl", r4chttp.WithPolicies(r4c.AdaptiveLimitConfig{Window: time.Second, MinWindowSamples: 1}))
	limit := limitOf(t, reg, "dl")
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if n := limit.InFlight(); n != 1 {
		t.Fatalf("%d in flight with the body unread, want 1", n)
	}
	clock.Advance(3 * time.Second) // the sample is measured to the body's end
	io.ReadAll(resp.Body)
	if n := limit.InFlight(); n != 0 {
		t.Fatalf("%d in flight after the body's end", n)
	}
	resp.Body.Close()
	resp, err = client.Get(srv.URL) // ends the window
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s := limit.Snapshot(); s.WindowLatency != 3*time.Second || s.InFlight != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestClientRejectionIsThePolicysErrorWithoutSending(t *testing.T) {
	reg, _ := newRegistry(t)
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent.Add(1) }))
	defer srv.Close()
	client := newClient(t, reg, "full", r4chttp.WithPolicies(fixedLimit(1)))
	held, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body := &closeCounter{ReadCloser: io.NopCloser(strings.NewReader("payload"))}
	req, _ := http.NewRequest(http.MethodPost, srv.URL, body)
	_, err = client.Do(req)
	if !errors.Is(err, r4c.ErrLimitExceeded) || sent.Load() != 1 || body.closed.Load() != 1 {
		t.Fatalf("%v, %d sent, body closed %d times", err, sent.Load(), body.closed.Load())
	}
	held.Body.Close()
}

type closeCounter struct {
	io.ReadCloser
	closed atomic.Int64
}

func (c *closeCounter) Close() error { c.closed.Add(1); return c.ReadCloser.Close() }

func TestClientFailuresAreDropsForTheLimit(t *testing.T) {
	reg, clock := newRegistry(t)
	srv := httptest.NewServer(&flaky{fails: 1})
	defer srv.Close()
	client := newClient(t, reg, "d", r4chttp.WithPolicies(r4c.AdaptiveLimitConfig{Window: time.Second, MinWindowSamples: 1}))
	resp, err := client.Get(srv.URL) // a 503: returned as it is, a drop for the limit
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	if _, err := client.Get("http://127.0.0.1:1/"); err == nil { // a transport error: a drop
		t.Fatal("no error from a closed port")
	}
	clock.Advance(time.Second)
	resp, _ = client.Get(srv.URL)
	resp.Body.Close()
	if s := limitOf(t, reg, "d").Snapshot(); s.Samples != 3 || s.Drops != 2 {
		t.Fatalf("%+v", s)
	}
}

func TestClientHedgeReturnsTheFirstResponse(t *testing.T) {
	reg, clock := newRegistry(t)
	var calls atomic.Int64
	slow := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			select { // the first request is slow: the hedge's wins
			case <-slow:
			case <-r.Context().Done():
			}
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	defer close(slow)
	client := newClient(t, reg, "h", r4chttp.WithPolicies(r4c.HedgeConfig{Delay: 100 * time.Millisecond, MaxHedges: 1}))
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	waitPending(t, clock, 1)
	clock.Advance(100 * time.Millisecond)
	resp := <-done
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" || calls.Load() != 2 {
		t.Fatalf("%q after %d calls", b, calls.Load())
	}
	hedge, _ := reg.Hedge("h")
	if s := hedge.Snapshot(); s.Hedges != 1 {
		t.Fatalf("%+v", s)
	}
}
