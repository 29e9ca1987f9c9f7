package r4chttp_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4chttp"
	"github.com/resilience4cata/r4c/r4ctest"
)

func newRegistry(t *testing.T) (*r4c.Registry, *r4ctest.ManualClock) {
	t.Helper()
	clock := r4ctest.NewManualClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock), r4c.WithDefaults(r4c.AdaptiveLimitConfig{MinWindowSamples: 1}))
	if err != nil {
		t.Fatal(err)
	}
	return reg, clock
}

func newHandler(t *testing.T, reg *r4c.Registry, id string, next http.Handler, opts ...r4chttp.Option) http.Handler {
	t.Helper()
	h, err := r4chttp.NewHandler(reg, id, next, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func fixedLimit(n int) r4c.AdaptiveLimitConfig {
	return r4c.AdaptiveLimitConfig{InitialLimit: n, MinLimit: n, MaxLimit: n}
}

func limitOf(t *testing.T, reg *r4c.Registry, id string) *r4c.AdaptiveLimitHandle {
	t.Helper()
	h, err := reg.AdaptiveLimit(id)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// blocking is a handler that holds every request until release is closed.
type blocking struct {
	entered chan struct{}
	release chan struct{}
	calls   sync.WaitGroup
}

func newBlocking() *blocking {
	return &blocking{entered: make(chan struct{}, 100), release: make(chan struct{})}
}

func (b *blocking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.entered <- struct{}{}
	<-b.release
	io.WriteString(w, "done")
}

func TestHandlerAtItsLimitAnswers503WithRetryAfterWithoutCallingNext(t *testing.T) {
	reg, _ := newRegistry(t)
	next := newBlocking()
	srv := httptest.NewServer(newHandler(t, reg, "api", next, r4chttp.WithPolicies(fixedLimit(1))))
	defer srv.Close()

	first := make(chan *http.Response, 1)
	go func() {
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Error(err)
		}
		first <- resp
	}()
	<-next.entered // the only slot is taken
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", resp.StatusCode)
	}
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 2 {
		t.Fatalf("Retry-After %q, want 1 or 2", resp.Header.Get("Retry-After"))
	}
	if strings.Contains(string(body), "api") {
		t.Fatalf("the body names the instance: %q", body)
	}
	select {
	case <-next.entered:
		t.Fatal("next was called for a rejected request")
	default:
	}
	if s := limitOf(t, reg, "api").Snapshot(); s.Rejected != 1 || s.InFlight != 1 {
		t.Fatalf("%+v", s)
	}
	close(next.release)
	if r := <-first; r == nil || r.StatusCode != http.StatusOK {
		t.Fatalf("the admitted request: %v", r)
	} else {
		r.Body.Close()
	}
	if n := limitOf(t, reg, "api").InFlight(); n != 0 {
		t.Fatalf("%d slots held after the request", n)
	}
}

func TestHandlerRateLimiterAnswers429WithTheNextPeriod(t *testing.T) {
	reg, clock := newRegistry(t)
	h := newHandler(t, reg, "rl", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
		r4chttp.WithPolicies(r4c.RateLimiterConfig{Limit: 1, Period: time.Minute}))
	serve(h, "/")
	clock.Advance(20*time.Second + time.Millisecond)
	rec := serve(h, "/")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "40" {
		t.Fatalf("%d Retry-After %q, want 429 and 40 (the next period, rounded up)", rec.Code, rec.Header().Get("Retry-After"))
	}
}

func TestHandlerOpenBreakerAnswers503WithItsRemainingOpenTime(t *testing.T) {
	reg, clock := newRegistry(t)
	h := newHandler(t, reg, "cb", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}), r4chttp.WithPolicies(r4c.CircuitBreakerConfig{MinimumCalls: 1, SlidingWindowSize: 1, WaitInOpen: 30 * time.Second}))
	if rec := serve(h, "/"); rec.Code != http.StatusBadGateway {
		t.Fatalf("%d", rec.Code)
	}
	clock.Advance(10 * time.Second)
	rec := serve(h, "/")
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "20" {
		t.Fatalf("%d Retry-After %q, want 503 and 20", rec.Code, rec.Header().Get("Retry-After"))
	}
}

func TestWithStatusChangesTheAnswer(t *testing.T) {
	reg, _ := newRegistry(t)
	h := newHandler(t, reg, "s", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
		r4chttp.WithPolicies(r4c.RateLimiterConfig{Limit: 1, Period: time.Minute}),
		r4chttp.WithStatus(r4c.ErrRateLimited, http.StatusServiceUnavailable))
	serve(h, "/")
	if rec := serve(h, "/"); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("%d, want 503", rec.Code)
	}
}

func serve(h http.Handler, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec
}

// TestHandlerClassifiesResponses checks what each response teaches the adaptive limit: on a
// manual clock, each request takes 10ms; one window then holds every outcome.
func TestHandlerClassifiesResponses(t *testing.T) {
	reg, clock := newRegistry(t)
	h := newHandler(t, reg, "c", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clock.Advance(10 * time.Millisecond)
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		w.WriteHeader(code)
	}), r4chttp.WithPolicies(r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, MinWindowSamples: 1, Window: time.Hour}))
	for _, code := range []int{200, 404, 429, 500, 501, 503} {
		serve(h, "/?code="+strconv.Itoa(code))
	}
	clock.Advance(time.Hour)
	serve(h, "/?code=200") // ends the window
	// Samples: 200, 404, 500, 503 and the last 200; drops: 500 and 503; 429 and 501 free their
	// slot without a sample.
	if s := limitOf(t, reg, "c").Snapshot(); s.Samples != 5 || s.Drops != 2 {
		t.Fatalf("%+v", s)
	}
}

func TestHandlerTimeoutAnswers504WhenNothingWasWritten(t *testing.T) {
	reg, clock := newRegistry(t)
	release := make(chan struct{})
	nextDone := make(chan error, 1)
	h := newHandler(t, reg, "t", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // the timeout cancels next's context
		<-release
		w.Header().Set("X-Late", "1")
		_, err := w.Write([]byte("late"))
		nextDone <- err
	}), r4chttp.WithPolicies(r4c.AdaptiveLimitConfig{}, r4c.TimeoutConfig{Timeout: time.Second}))
	got := make(chan *httptest.ResponseRecorder, 1)
	go func() { got <- serve(h, "/") }()
	waitPending(t, clock, 1)
	clock.Advance(time.Second)
	rec := <-got
	if rec.Code != http.StatusGatewayTimeout || rec.Header().Get("X-Late") != "" {
		t.Fatalf("%d %v, want 504", rec.Code, rec.Header())
	}
	close(release)
	if err := <-nextDone; !errors.Is(err, http.ErrHandlerTimeout) {
		t.Fatalf("a write after the timeout: %v", err)
	}
	if strings.Contains(rec.Body.String(), "late") {
		t.Fatal("a write after the timeout reached the response")
	}
	if n := limitOf(t, reg, "t").InFlight(); n != 0 {
		t.Fatalf("%d slots held after a timeout", n)
	}
}

func TestHandlerTimeoutAfterAWriteKeepsTheStatus(t *testing.T) {
	reg, clock := newRegistry(t)
	wrote := make(chan struct{})
	h := newHandler(t, reg, "t", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "partial")
		close(wrote)
		<-r.Context().Done()
	}), r4chttp.WithPolicies(r4c.TimeoutConfig{Timeout: time.Second}))
	got := make(chan *httptest.ResponseRecorder, 1)
	go func() { got <- serve(h, "/") }()
	<-wrote
	waitPending(t, clock, 1)
	clock.Advance(time.Second)
	if rec := <-got; rec.Code != http.StatusAccepted || rec.Body.String() != "partial" {
		t.Fatalf("%d %q", rec.Code, rec.Body.String())
	}
}

func waitPending(t *testing.T, clock *r4ctest.ManualClock, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := clock.WaitPending(ctx, n); err != nil {
		t.Fatal(err)
	}
}

func TestHandlerPanicIsADropReRaisedAfterTheSlotIsFree(t *testing.T) {
	reg, clock := newRegistry(t)
	var h http.Handler
	h = newHandler(t, reg, "p", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clock.Advance(time.Second)
		panic("boom")
	}), r4chttp.WithPolicies(r4c.AdaptiveLimitConfig{Window: time.Second, MinWindowSamples: 1}))
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Fatalf("recovered %v, want the handler's panic", v)
			}
			if n := limitOf(t, reg, "p").InFlight(); n != 0 {
				t.Fatalf("the panic was re-raised with %d slots held", n)
			}
		}()
		serve(h, "/")
	}()
	if s := limitOf(t, reg, "p").Snapshot(); s.Drops != 1 {
		t.Fatalf("the panic is not a drop: %+v", s)
	}
}

func TestHandlerIgnoresAClientThatWentAway(t *testing.T) {
	reg, clock := newRegistry(t)
	ctx, cancel := context.WithCancel(context.Background())
	h := newHandler(t, reg, "gone", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clock.Advance(time.Second)
		if r.URL.Path == "/gone" {
			cancel() // the client goes away; what the handler writes then says nothing
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}), r4chttp.WithPolicies(r4c.AdaptiveLimitConfig{Window: time.Second, MinWindowSamples: 1}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/gone", nil).WithContext(ctx))
	serve(h, "/")
	if s := limitOf(t, reg, "gone").Snapshot(); s.Samples != 1 || s.Drops != 0 || s.InFlight != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestBypassAndInstancePerRequest(t *testing.T) {
	reg, _ := newRegistry(t)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	h := newHandler(t, reg, "api", next,
		r4chttp.WithBypass(func(r *http.Request) bool { return r.URL.Path == "/healthz" }),
		r4chttp.WithInstanceID(func(r *http.Request) string { return "api " + r.Header.Get("X-Tenant") }))
	serve(h, "/healthz")
	req := httptest.NewRequest(http.MethodGet, "/orders", nil)
	req.Header.Set("X-Tenant", "acme")
	h.ServeHTTP(httptest.NewRecorder(), req)
	s := reg.Snapshot()
	if len(s.AdaptiveLimits) != 2 || s.AdaptiveLimits[0].ID != "api" || s.AdaptiveLimits[1].ID != "api acme" {
		t.Fatalf("%+v", s.AdaptiveLimits)
	}
	if s.AdaptiveLimits[0].Windows != 0 || limitOf(t, reg, "api acme").Snapshot().Rejected != 0 {
		t.Fatalf("%+v", s.AdaptiveLimits)
	}
}

func TestHandlerRefusesPoliciesThatServeTwice(t *testing.T) {
	reg, _ := newRegistry(t)
	for _, c := range []r4c.PolicyConfig{r4c.RetryConfig{}, r4c.HedgeConfig{}} {
		if _, err := r4chttp.NewHandler(reg, "x", http.NotFoundHandler(), r4chttp.WithPolicies(c)); err == nil {
			t.Errorf("%T accepted", c)
		}
	}
	if _, err := r4chttp.NewHandler(reg, "x", nil); err == nil {
		t.Error("a nil next accepted")
	}
	if _, err := r4chttp.NewHandler(reg, "x", http.NotFoundHandler(), r4chttp.WithPolicies(r4c.AdaptiveLimitConfig{Smoothing: 3})); r4c.ErrorCode(err) != "R4C-REG-001" {
		t.Errorf("an invalid setting: %v", err)
	}
}

// TestResponseWriterKeepsItsInterfaces: Flush, Hijack, http.ResponseController (through
// Unwrap), headers set without a write, and trailers.
func TestResponseWriterKeepsItsInterfaces(t *testing.T) {
	reg, _ := newRegistry(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/flush", func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		io.WriteString(w, "a")
		if err := rc.Flush(); err != nil {
			t.Error(err)
		}
		if err := rc.SetWriteDeadline(time.Now().Add(time.Minute)); err != nil { // through Unwrap
			t.Error(err)
		}
	})
	mux.HandleFunc("/header", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Only", "header")
		w.Header().Set("Trailer", "X-Sum")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "body")
		w.Header().Set("X-Sum", "42")
	})
	mux.HandleFunc("/hijack", func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi")
		brw.Flush()
	})
	srv := httptest.NewServer(newHandler(t, reg, "w", mux))
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/flush")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "a" {
		t.Fatalf("%q", b)
	}
	resp, err = http.Get(srv.URL + "/header")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("X-Only") != "header" || string(b) != "body" || resp.Trailer.Get("X-Sum") != "42" {
		t.Fatalf("%v %q trailer %v", resp.Header, b, resp.Trailer)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n")
	hijacked, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(hijacked.Body)
	if string(b) != "hi" {
		t.Fatalf("%q", b)
	}
	// The hijacking handler returns after the client has read its answer.
	eventually(t, "the hijacked request's slot is free", func() bool { return limitOf(t, reg, "w").InFlight() == 0 })
}

// eventually waits, yielding, until cond holds: for a handler that returns after its client has
// what it needs.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		runtime.Gosched()
	}
}
