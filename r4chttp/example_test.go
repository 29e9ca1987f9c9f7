package r4chttp_test

import (
	"encoding/json"
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

// A service mounts the dashboard of its registry beside its API: a browser on /r4c/ shows every
// instance live; /r4c/snapshot.json is the same state for scripts.
func ExampleDashboard() {
	reg, _ := r4c.NewRegistry()
	reg.Build("search", r4c.AdaptiveLimitConfig{MaxLimit: 100})

	mux := http.NewServeMux()
	mux.Handle("/r4c/", http.StripPrefix("/r4c", r4chttp.Dashboard(reg)))
	srv := httptest.NewServer(mux) // a real service: http.ListenAndServe(addr, mux), for operators only
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/r4c/snapshot.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var s struct {
		AdaptiveLimits []struct {
			ID        string
			Algorithm string
			Limit     int
		}
	}
	json.NewDecoder(resp.Body).Decode(&s)
	fmt.Printf("%+v\n", s.AdaptiveLimits)
	// Output: [{ID:search Algorithm:gradient2 Limit:20}]
}
