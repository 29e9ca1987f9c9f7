package r4chttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4chttp"
	"github.com/resilience4cata/r4c/r4ctest"
)

// traffic counts the clients still sending, the requests inside the backend and the services
// started. The driver of the clock advances it once per service, and only when every client
// still sending waits inside the backend: nothing else can happen then, so the queues the test
// sees do not depend on how fast the machine runs the clients (on a busy machine, advancing as
// soon as a timer was pending served them one at a time, and nothing queued; and the registry's
// own timers let the clock move while no request was in service).
type traffic struct {
	mu                      sync.Mutex
	changed                 *sync.Cond
	active, inside, started int
	advanced                int // services the driver has advanced the clock for
}

func newTraffic() *traffic {
	t := &traffic{}
	t.changed = sync.NewCond(&t.mu)
	return t
}

func (t *traffic) add(active, inside, started int) {
	t.mu.Lock()
	t.active += active
	t.inside += inside
	t.started += started
	t.changed.Broadcast()
	t.mu.Unlock()
}

// next waits until a service has started that the clock was not advanced for, with every client
// still sending inside the backend, and counts it as advanced; false if ctx ends first.
func (t *traffic) next(ctx context.Context) bool {
	stop := context.AfterFunc(ctx, func() { t.add(0, 0, 0) })
	defer stop()
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.started == t.advanced || t.inside < t.active {
		if ctx.Err() != nil {
			return false
		}
		t.changed.Wait()
	}
	t.advanced++
	return true
}

// slowBackend serves one request at a time in arrival order (a dependency with a capacity of
// one and a FIFO queue), each for service on a manual clock; it records how many requests were
// queued in front of each one when it arrived, and each one's latency on the clock, from its
// arrival to its answer.
type slowBackend struct {
	clock   *r4ctest.ManualClock
	service time.Duration
	traffic *traffic

	mu        sync.Mutex
	turn      *sync.Cond // signalled when serving moves on
	next      int        // the next ticket to hand out
	serving   int        // the ticket being served
	waiting   int
	queued    []int
	latencies []time.Duration
}

func (b *slowBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	if b.turn == nil {
		b.turn = sync.NewCond(&b.mu)
	}
	// The arrival is the moment the request takes its place in the queue, and only from then
	// is it inside for the driver: a request between the two would see services it was not
	// queued behind.
	arrived := b.clock.Nanotime()
	b.queued = append(b.queued, b.waiting)
	b.waiting++
	ticket := b.next
	b.next++
	b.traffic.add(0, 1, 0)
	defer b.traffic.add(0, -1, 0)
	for b.serving != ticket {
		b.turn.Wait()
	}
	b.mu.Unlock()
	t := b.clock.NewTimer(b.service) // the work itself: the driver advances the clock
	b.traffic.add(0, 0, 1)
	<-t.C()
	b.mu.Lock()
	b.serving++
	b.waiting--
	b.latencies = append(b.latencies, time.Duration(b.clock.Nanotime()-arrived))
	b.turn.Broadcast()
	b.mu.Unlock()
	io.WriteString(w, "ok")
}

// drive advances clock by step once for every service started, when every client still sending
// waits inside the backend, until stop is called: the backend's work takes simulated time, and
// nothing else does.
func drive(clock *r4ctest.ManualClock, tr *traffic, step time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for tr.next(ctx) {
			clock.Advance(step)
		}
	})
	return func() { cancel(); wg.Wait() }
}

// load sends requests from clients goroutines, each perClient requests in a row, and returns how
// many were rejected with 503.
func load(t *testing.T, tr *traffic, url string, clients, perClient int) (rejected int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	tr.add(clients, 0, 0)
	for range clients {
		wg.Go(func() {
			defer tr.add(-1, 0, 0)
			for range perClient {
				resp, err := http.Get(url)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusServiceUnavailable {
					mu.Lock()
					rejected++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return rejected
}

func p99[T int | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)*99)/100]
}

// TestLoadKeepsTheQueueBoundedWhileRejecting: 32 clients against a dependency that serves one
// request at a time, 1ms each on the manual clock. Behind a limit of 4, no request finds more
// than 3 in front of it, so every answered request takes at most 4 service times (its p99 too),
// and the rest are rejected at once; without the limit, the queue and the latency grow with the
// clients.
func TestLoadKeepsTheQueueBoundedWhileRejecting(t *testing.T) {
	const clients, perClient, limit = 32, 10, 4
	const service = time.Millisecond
	clock := r4ctest.NewManualClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	tr := newTraffic()
	limited := &slowBackend{clock: clock, service: service, traffic: tr}
	h, err := r4chttp.NewHandler(reg, "api", limited, r4chttp.WithPolicies(fixedLimit(limit)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	stop := drive(clock, tr, service)
	rejected := load(t, tr, srv.URL, clients, perClient)

	open := &slowBackend{clock: clock, service: service, traffic: tr}
	srvOpen := httptest.NewServer(open)
	defer srvOpen.Close()
	load(t, tr, srvOpen.URL, clients, perClient)
	stop()

	if q := slices.Max(limited.queued); q > limit-1 {
		t.Errorf("behind the limit a request found %d in front of it, want at most %d", q, limit-1)
	}
	if d := p99(limited.latencies); d > limit*service {
		t.Errorf("behind the limit the p99 latency is %v, want at most %v (%d service times)", d, limit*service, limit)
	}
	if rejected == 0 {
		t.Error("nothing was rejected under 8x the capacity")
	}
	if q, d := p99(open.queued), p99(open.latencies); q <= limit || d <= limit*service {
		t.Errorf("without the limit the p99 queue is %d and latency %v: the load does not overload the backend", q, d)
	}
	t.Logf("behind the limit: %d answered, %d rejected, p99 %v, p99 queue %d; without: %d answered, p99 %v, p99 queue %d",
		len(limited.latencies), rejected, p99(limited.latencies), p99(limited.queued), len(open.latencies), p99(open.latencies), p99(open.queued))
}
