package r4cprom_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4cprom"
)

// A service exposes its registry's metrics on /metrics. The collector reads the registry when
// Prometheus scrapes; pipelines built later show up at the next scrape.
func ExampleNewCollector() {
	reg, _ := r4c.NewRegistry()
	promReg := prometheus.NewRegistry()
	promReg.MustRegister(r4cprom.NewCollector(reg))

	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(promReg, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(mux) // a real service: http.ListenAndServe(addr, mux)
	defer srv.Close()

	search, _ := r4c.NewPipeline[string](reg, "search", r4c.AdaptiveLimitConfig{MaxLimit: 100})
	search.Execute(context.Background(), func(context.Context) (string, error) { return "results", nil })

	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if l := lines.Text(); strings.HasPrefix(l, "r4c_adaptivelimit_limit{") || strings.HasPrefix(l, "r4c_calls_rejected_total{") {
			fmt.Println(l)
		}
	}
	// Output:
	// r4c_adaptivelimit_limit{name="search"} 20
	// r4c_calls_rejected_total{kind="adaptivelimit",name="search"} 0
}
