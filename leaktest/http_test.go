package leaktest

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4chttp"
)

// The HTTP integration frees every slot and leaves no goroutine behind (TestMain checks) when a
// handler panics, a client goes away, or a request times out, on the server and on the client.

func httpServer(t *testing.T, reg *r4c.Registry, next http.Handler, cfgs ...r4c.PolicyConfig) *httptest.Server {
	t.Helper()
	h, err := r4chttp.NewHandler(reg, "srv", next, r4chttp.WithPolicies(cfgs...))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the panics net/http recovers
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func inFlight(t *testing.T, reg *r4c.Registry, id string) int {
	t.Helper()
	l, err := reg.AdaptiveLimit(id)
	if err != nil {
		t.Fatal(err)
	}
	return l.InFlight()
}

func TestHTTPHandlerPanicFreesItsSlot(t *testing.T) {
	reg, _ := registry(t)
	srv := httpServer(t, reg, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }), r4c.AdaptiveLimitConfig{})
	if _, err := http.Get(srv.URL); err == nil {
		t.Fatal("a panicking handler answered") // net/http closes the connection
	}
	if n := inFlight(t, reg, "srv"); n != 0 {
		t.Fatalf("%d slots held", n)
	}
}

func TestHTTPClientThatGoesAwayFreesTheServersSlot(t *testing.T) {
	reg, _ := registry(t)
	entered, left := make(chan struct{}), make(chan struct{})
	srv := httpServer(t, reg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done()
		close(left)
	}), r4c.AdaptiveLimitConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-entered; cancel() }()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if _, err := http.DefaultClient.Do(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	<-left
	srv.Close() // waits for the handler to return
	if n := inFlight(t, reg, "srv"); n != 0 {
		t.Fatalf("%d slots held", n)
	}
}

func TestHTTPTimeoutFreesItsSlotAndItsHandlerEnds(t *testing.T) {
	reg, clock := registry(t)
	release := make(chan struct{})
	srv := httpServer(t, reg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // ignores its context
	}), r4c.AdaptiveLimitConfig{}, r4c.TimeoutConfig{Timeout: time.Second})
	got := make(chan *http.Response, 1)
	go func() {
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Error(err)
		}
		got <- resp
	}()
	if err := clock.WaitPending(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	resp := <-got
	resp.Body.Close()
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("%d", resp.StatusCode)
	}
	if n := inFlight(t, reg, "srv"); n != 0 {
		t.Fatalf("%d slots held", n)
	}
	close(release) // the abandoned handler ends; TestMain checks its goroutine is gone
}

func TestHTTPTransportFreesItsSlotOnCancelAndTimeout(t *testing.T) {
	reg, clock := registry(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // a body that never ends
	}))
	defer srv.Close()
	rt, err := r4chttp.NewTransport(reg, "cli", nil, r4chttp.WithPolicies(r4c.AdaptiveLimitConfig{}, r4c.TimeoutConfig{Timeout: time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: rt}

	// The caller cancels while reading the body.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := inFlight(t, reg, "cli"); n != 0 {
		t.Fatalf("after a cancellation: %d slots held", n)
	}

	// The timeout ends a body that never ends.
	resp, err = client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := clock.WaitPending(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Fatal("the body outlived the timeout")
	}
	resp.Body.Close()
	if n := inFlight(t, reg, "cli"); n != 0 {
		t.Fatalf("after a timeout: %d slots held", n)
	}
	client.CloseIdleConnections()
	srv.CloseClientConnections()
}

// The dashboard's event stream ends, and leaves no goroutine or timer, when its client goes
// away.
func TestDashboardEventsEndWithTheClient(t *testing.T) {
	reg, clock := registry(t)
	srv := httptest.NewServer(r4chttp.Dashboard(reg))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "data: " {
		t.Fatalf("%q %v", buf, err)
	}
	cancel()
	resp.Body.Close()
	srv.Close() // returns once the handler has returned
	if n := clock.Pending(); n != 0 {
		t.Fatalf("%d timers left", n)
	}
}
