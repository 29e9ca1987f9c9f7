package r4chttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4chttp"
)

// slowBackend serves one request at a time (a dependency with a capacity of one), each for
// service; it records how many requests were queued in front of each one when it arrived: the
// request's latency is (queued+1) x service.
type slowBackend struct {
	service time.Duration
	work    sync.Mutex

	mu      sync.Mutex
	waiting int
	queued  []int
}

func (b *slowBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.queued = append(b.queued, b.waiting)
	b.waiting++
	b.mu.Unlock()
	b.work.Lock()
	time.Sleep(b.service) // the work itself
	b.work.Unlock()
	b.mu.Lock()
	b.waiting--
	b.mu.Unlock()
	io.WriteString(w, "ok")
}

// load sends requests from clients goroutines, each perClient requests in a row, and returns
// the latencies of the answered ones and how many were rejected with 503.
func load(t *testing.T, url string, clients, perClient int) (latencies []time.Duration, rejected int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for range perClient {
				start := time.Now()
				resp, err := http.Get(url)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				d := time.Since(start)
				mu.Lock()
				if resp.StatusCode == http.StatusServiceUnavailable {
					rejected++
				} else {
					latencies = append(latencies, d)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return latencies, rejected
}

func p99[T int | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)*99)/100]
}

// TestLoadKeepsTheQueueBoundedWhileRejecting: 32 clients against a dependency that serves one
// request at a time. Behind a limit of 4, no request finds more than 3 in front of it, so its
// latency stays within 4 service times, and the rest are rejected at once; without the limit,
// the queue (and latency) grows with the clients. The bound is asserted on the queue each
// request found (deterministic); wall-clock latencies are logged.
func TestLoadKeepsTheQueueBoundedWhileRejecting(t *testing.T) {
	const clients, perClient, limit = 32, 10, 4
	reg, err := r4c.NewRegistry() // the system clock: real latencies
	if err != nil {
		t.Fatal(err)
	}
	limited := &slowBackend{service: time.Millisecond}
	h, err := r4chttp.NewHandler(reg, "api", limited, r4chttp.WithPolicies(fixedLimit(limit)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	lat, rejected := load(t, srv.URL, clients, perClient)

	open := &slowBackend{service: time.Millisecond}
	srvOpen := httptest.NewServer(open)
	defer srvOpen.Close()
	latOpen, _ := load(t, srvOpen.URL, clients, perClient)

	if q := slices.Max(limited.queued); q > limit-1 {
		t.Errorf("behind the limit a request found %d in front of it, want at most %d", q, limit-1)
	}
	if rejected == 0 {
		t.Error("nothing was rejected under 8x the capacity")
	}
	if q := p99(open.queued); q <= limit {
		t.Errorf("without the limit the p99 queue is %d: the load does not overload the backend", q)
	}
	t.Logf("behind the limit: %d answered, %d rejected, p99 %v, p99 queue %d; without: %d answered, p99 %v, p99 queue %d",
		len(lat), rejected, p99(lat), p99(limited.queued), len(latOpen), p99(latOpen), p99(open.queued))
}
