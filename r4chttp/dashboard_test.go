package r4chttp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4chttp"
)

func TestDashboardSnapshotJSON(t *testing.T) {
	reg, _ := newRegistry(t)
	if err := reg.Build("orders", r4c.AdaptiveLimitConfig{MaxLimit: 50}, r4c.CircuitBreakerConfig{}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.StripPrefix("/r4c", r4chttp.Dashboard(reg)))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/r4c/snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	var s struct {
		AdaptiveLimits []struct {
			ID, Algorithm, WindowLatency string
			MaxLimit                     int
		}
		CircuitBreakers []struct{ ID, State string }
		Bulkheads       []any
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	if len(s.AdaptiveLimits) != 1 || s.AdaptiveLimits[0].ID != "orders" || s.AdaptiveLimits[0].Algorithm != "gradient2" ||
		s.AdaptiveLimits[0].MaxLimit != 50 || s.AdaptiveLimits[0].WindowLatency != "0s" {
		t.Fatalf("%+v", s.AdaptiveLimits)
	}
	if len(s.CircuitBreakers) != 1 || s.CircuitBreakers[0].State != "closed" || s.Bulkheads == nil {
		t.Fatalf("%+v", s)
	}
}

// TestDashboardPageFetchesNothingFromElsewhere reads the page: every script and style is inline,
// and every address it uses is relative to where the dashboard is mounted.
func TestDashboardPageFetchesNothingFromElsewhere(t *testing.T) {
	reg, _ := newRegistry(t)
	rec := httptest.NewRecorder()
	r4chttp.Dashboard(reg).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	page := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(page, "<title>r4c dashboard</title>") {
		t.Fatalf("%d %.200s", rec.Code, page)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Fatalf("CSP %q", csp)
	}
	external := regexp.MustCompile(`(?i)((src|href|action)\s*=\s*["']?\s*(https?:)?//)|url\(\s*["']?\s*(https?:)?//|@import|(fetch|EventSource|XMLHttpRequest|WebSocket|import)\s*\(\s*["'](https?:|/)|<link\b|<script\s+[^>]*src=`)
	if m := external.FindString(page); m != "" {
		t.Fatalf("the page refers to something outside the server: %q", m)
	}
	for _, want := range []string{`new EventSource("events")`, `class: "chart"`, `role: "img"`, "aria-live"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// readEvent reads one Server-Sent Event's data.
func readEvent(t *testing.T, r *bufio.Reader) (e struct {
	Time     time.Time
	Snapshot struct {
		AdaptiveLimits []struct {
			ID                  string
			Limit, LimitChanges int
		}
	}
}) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				t.Fatal(err)
			}
			return e
		}
	}
}

func TestDashboardEventsStream(t *testing.T) {
	reg, clock := newRegistry(t)
	p, err := r4c.NewPipeline[string](reg, "orders", r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, Window: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r4chttp.Dashboard(reg))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a missing event fails the read
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	r := bufio.NewReader(resp.Body)
	first := readEvent(t, r) // at once
	if len(first.Snapshot.AdaptiveLimits) != 1 || first.Snapshot.AdaptiveLimits[0].ID != "orders" || !first.Time.Equal(clock.Now()) {
		t.Fatalf("%+v at %v", first, clock.Now())
	}

	// A second of the registry's clock: the next event.
	for range 10 {
		waitPending(t, clock, 1)
		clock.Advance(100 * time.Millisecond)
	}
	if e := readEvent(t, r); !e.Time.Equal(first.Time.Add(time.Second)) {
		t.Fatalf("the periodic event at %v, want %v", e.Time, first.Time.Add(time.Second))
	}

	// A limit change: an event within 100ms, not a second.
	p.Execute(context.Background(), func(context.Context) (string, error) { return "", r4c.ErrCallTimeout })
	waitPending(t, clock, 1)
	clock.Advance(time.Minute) // past the window's end; the tick sends a periodic event
	periodic := readEvent(t, r)
	if periodic.Snapshot.AdaptiveLimits[0].LimitChanges != 0 {
		t.Fatalf("%+v", periodic)
	}
	p.Execute(context.Background(), func(context.Context) (string, error) { return "ok", nil }) // ends the window: 20 -> 18
	waitPending(t, clock, 1)
	clock.Advance(100 * time.Millisecond)
	e := readEvent(t, r)
	if got := e.Snapshot.AdaptiveLimits[0]; got.LimitChanges != 1 || got.Limit != 18 || !e.Time.Equal(periodic.Time.Add(100*time.Millisecond)) {
		t.Fatalf("%+v at %v, want the change 100ms after %v", got, e.Time, periodic.Time)
	}

	// The client goes away: the stream ends, and stops its timer.
	cancel()
	resp.Body.Close()
	srv.Close() // waits for the handler to return
	if n := clock.Pending(); n != 0 {
		t.Fatalf("%d timers left after the client went away", n)
	}
}

func TestDashboardOnlyServesItsPaths(t *testing.T) {
	reg, _ := newRegistry(t)
	h := r4chttp.Dashboard(reg)
	for target, code := range map[string]int{"/": 200, "/snapshot.json": 200, "/nope": 404, "/index.html": 404} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != code {
			t.Errorf("%s: %d, want %d", target, rec.Code, code)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/snapshot.json", strings.NewReader("")))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
}
