package r4chttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4chttp"
)

// A server limits the requests it serves at once with an adaptive limit; health checks bypass
// it. A request beyond the limit gets 503 with a Retry-After, without reaching the handler.
func ExampleNewHandler() {
	reg, _ := r4c.NewRegistry()
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "orders")
	})
	h, err := r4chttp.NewHandler(reg, "api", api,
		r4chttp.WithPolicies(r4c.AdaptiveLimitConfig{MaxLimit: 100}),
		r4chttp.WithBypass(func(r *http.Request) bool { return r.URL.Path == "/healthz" }))
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(h) // a real service: http.ListenAndServe(addr, h)
	defer srv.Close()

	resp, _ := http.Get(srv.URL + "/orders")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	limit, _ := reg.AdaptiveLimit("api")
	fmt.Println(resp.StatusCode, string(body), limit.Snapshot().InFlight)
	// Output: 200 orders 0
}

// A client retries a flaky dependency, resending the POST body, and holds the limit's slot
// until it has read the response.
func ExampleNewTransport() {
	failures := 2
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if failures > 0 {
			failures--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "placed %s", b)
	}))
	defer backend.Close()

	reg, _ := r4c.NewRegistry()
	rt, err := r4chttp.NewTransport(reg, "orders", http.DefaultTransport,
		r4chttp.WithPolicies(r4c.AdaptiveLimitConfig{}, r4c.RetryConfig{MaxAttempts: 3, Wait: r4c.NoWait}))
	if err != nil {
		fmt.Println(err)
		return
	}
	client := &http.Client{Transport: rt}
	resp, err := client.Post(backend.URL, "text/plain", strings.NewReader("order 42"))
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	retry, _ := reg.Retry("orders")
	fmt.Println(resp.StatusCode, string(body), retry.Snapshot().Retries)
	// Output: 200 placed order 42 2
}
