package r4cotel_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4cotel"
)

// A service exports its registry's metrics with OpenTelemetry and serves them on /metrics
// through the OpenTelemetry Prometheus exporter. Without the exporter's scope labels the series
// are exactly those of r4cprom.
func ExampleRegister() {
	reg, _ := r4c.NewRegistry()

	promReg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(promReg), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		fmt.Println(err)
		return
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer provider.Shutdown(context.Background())
	registration, err := r4cotel.Register(reg, r4cotel.WithMeterProvider(provider))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer registration.Unregister()

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
