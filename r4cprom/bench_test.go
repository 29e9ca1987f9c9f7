package r4cprom_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4cprom"
)

// BenchmarkEngineWhileScraped is the core module's BenchmarkEngine (an admitted call: Acquire,
// then Success, on the system clock) in five settings run side by side:
//
//   - idle: no collector;
//   - registered: a collector registered, never scraped (a collector adds nothing to a call);
//   - scraped-10ms: gathered every 10ms by another goroutine (a hundred times a second, still
//     far more often than Prometheus scrapes);
//   - other-busy: another goroutine gathers, back to back, the collector of another registry
//     with the same instance: the same work and allocations as the next setting, sharing no
//     state with the calls;
//   - scraped: that goroutine gathers this registry's collector, back to back.
//
// scraped/other-busy is what reading the calls' own state costs them; other-busy/idle is the
// price of a second core kept busy (and of its garbage), which any work beside the calls has.
// scrapes/op reports how many gathers the run overlapped; B/op includes the gathering
// goroutine's allocations (the memory statistics are the process's), allocs/op rounds them away.
func BenchmarkEngineWhileScraped(b *testing.B) {
	for _, mode := range []string{"idle", "registered", "scraped-10ms", "other-busy", "scraped"} {
		b.Run(mode, func(b *testing.B) {
			reg, h := benchRegistry(b)
			var scrapes atomic.Int64
			if mode != "idle" {
				target := reg
				if mode == "other-busy" {
					target, _ = benchRegistry(b)
				}
				promReg := prometheus.NewRegistry()
				promReg.MustRegister(r4cprom.NewCollector(target))
				if mode != "registered" {
					pause := time.Duration(0)
					if mode == "scraped-10ms" {
						pause = 10 * time.Millisecond
					}
					defer scrapeInLoop(b, promReg, pause, &scrapes)()
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				p, err := h.Acquire()
				if err != nil {
					b.Fatal(err)
				}
				p.Success()
			}
			b.ReportMetric(float64(scrapes.Load())/float64(b.N), "scrapes/op")
		})
	}
}

// benchRegistry returns a registry with one adaptive limit "bench", fixed at 1000 slots, on the
// system clock, as the core module's engine benchmark has.
func benchRegistry(b *testing.B) (*r4c.Registry, *r4c.AdaptiveLimitHandle) {
	const limit = 1000
	reg, err := r4c.NewRegistry()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := r4c.NewPipeline[struct{}](reg, "bench", r4c.AdaptiveLimitConfig{InitialLimit: limit, MinLimit: limit, MaxLimit: limit}); err != nil {
		b.Fatal(err)
	}
	h, err := reg.AdaptiveLimit("bench")
	if err != nil {
		b.Fatal(err)
	}
	return reg, h
}

// scrapeInLoop gathers g in a goroutine, with pause between gathers, counting them in n, until
// the returned function is called. It returns once the first gather is done (so the measured
// loop starts with the scraper running) and resets n.
func scrapeInLoop(b *testing.B, g prometheus.Gatherer, pause time.Duration, n *atomic.Int64) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	first := make(chan struct{})
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			if _, err := g.Gather(); err != nil {
				panic(err)
			}
			n.Add(1)
			if i == 0 {
				close(first)
			}
			if pause > 0 {
				select {
				case <-time.After(pause):
				case <-ctx.Done():
				}
			}
		}
	})
	<-first
	n.Store(0)
	return func() { cancel(); wg.Wait() }
}
