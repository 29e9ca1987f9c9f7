package r4cotel_test

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/resilience4cata/r4c/internal/metricstest"
	"github.com/resilience4cata/r4c/r4cotel"
	"github.com/resilience4cata/r4c/r4cprom"
)

// point is one data point as the test compares it: the instrument, its kind and unit, the
// attributes and the value.
type point struct {
	name, kind, unit, attrs string
	value                   float64
}

func (p point) String() string {
	return fmt.Sprintf("%s %s [%s] {%s} %v", p.kind, p.name, p.unit, p.attrs, p.value)
}

// collect reads every data point of the reader, sorted.
func collect(t *testing.T, reader *sdkmetric.ManualReader) []string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != r4cotel.ScopeName {
			t.Errorf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			add := func(kind string, attrs string, v float64) {
				out = append(out, point{m.Name, kind, m.Unit, attrs, v}.String())
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if !d.IsMonotonic || d.Temporality != metricdata.CumulativeTemporality {
					t.Errorf("%s: not a cumulative monotonic sum", m.Name)
				}
				for _, p := range d.DataPoints {
					add("counter", attrString(p.Attributes), float64(p.Value))
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					add("gauge", attrString(p.Attributes), float64(p.Value))
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					add("gauge", attrString(p.Attributes), p.Value)
				}
			default:
				t.Errorf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	sort.Strings(out)
	return out
}

// expected converts the scenario's Prometheus samples to OpenTelemetry data points: the dotted
// name and the UCUM unit of each metric are written out here, independently of the metric
// table, so that a wrong name or unit in the table fails the test.
func expected(samples []metricstest.Sample) []string {
	otelName := map[string][2]string{
		"r4c_calls_rejected_total":                     {"r4c.calls.rejected", "{call}"},
		"r4c_adaptivelimit_limit":                      {"r4c.adaptivelimit.limit", "{call}"},
		"r4c_adaptivelimit_concurrent_calls":           {"r4c.adaptivelimit.concurrent.calls", "{call}"},
		"r4c_adaptivelimit_limit_changes_total":        {"r4c.adaptivelimit.limit.changes", "{change}"},
		"r4c_adaptivelimit_min_limit":                  {"r4c.adaptivelimit.min.limit", "{call}"},
		"r4c_adaptivelimit_max_limit":                  {"r4c.adaptivelimit.max.limit", "{call}"},
		"r4c_adaptivelimit_windows_total":              {"r4c.adaptivelimit.windows", "{window}"},
		"r4c_adaptivelimit_window_latency_seconds":     {"r4c.adaptivelimit.window.latency", "s"},
		"r4c_adaptivelimit_samples_total":              {"r4c.adaptivelimit.samples", "{call}"},
		"r4c_adaptivelimit_drops_total":                {"r4c.adaptivelimit.drops", "{call}"},
		"r4c_adaptivelimit_info":                       {"r4c.adaptivelimit.info", ""},
		"r4c_adaptivelimit_waiting_calls":              {"r4c.adaptivelimit.waiting.calls", "{call}"},
		"r4c_adaptivelimit_wait_timeouts_total":        {"r4c.adaptivelimit.wait.timeouts", "{call}"},
		"r4c_adaptivelimit_partition_concurrent_calls": {"r4c.adaptivelimit.partition.concurrent.calls", "{call}"},
		"r4c_adaptivelimit_partition_guaranteed_calls": {"r4c.adaptivelimit.partition.guaranteed.calls", "{call}"},
		"r4c_adaptivelimit_partition_rejected_total":   {"r4c.adaptivelimit.partition.rejected", "{call}"},
		"r4c_bulkhead_available_concurrent_calls":      {"r4c.bulkhead.available.concurrent.calls", "{call}"},
		"r4c_bulkhead_max_allowed_concurrent_calls":    {"r4c.bulkhead.max.allowed.concurrent.calls", "{call}"},
		"r4c_bulkhead_waiting_calls":                   {"r4c.bulkhead.waiting.calls", "{call}"},
		"r4c_ratelimiter_available_permissions":        {"r4c.ratelimiter.available.permissions", "{permission}"},
		"r4c_ratelimiter_waiting_calls":                {"r4c.ratelimiter.waiting.calls", "{call}"},
		"r4c_circuitbreaker_state":                     {"r4c.circuitbreaker.state", ""},
		"r4c_circuitbreaker_failure_ratio":             {"r4c.circuitbreaker.failure.ratio", "1"},
		"r4c_circuitbreaker_slow_call_ratio":           {"r4c.circuitbreaker.slow.call.ratio", "1"},
		"r4c_circuitbreaker_buffered_calls":            {"r4c.circuitbreaker.buffered.calls", "{call}"},
		"r4c_circuitbreaker_calls_total":               {"r4c.circuitbreaker.calls", "{call}"},
		"r4c_circuitbreaker_slow_calls_total":          {"r4c.circuitbreaker.slow.calls", "{call}"},
		"r4c_circuitbreaker_state_changes_total":       {"r4c.circuitbreaker.state.changes", "{change}"},
		"r4c_retry_calls_total":                        {"r4c.retry.calls", "{call}"},
		"r4c_retry_retries_total":                      {"r4c.retry.retries", "{attempt}"},
		"r4c_timeout_expired_total":                    {"r4c.timeout.expired", "{call}"},
		"r4c_hedge_calls_total":                        {"r4c.hedge.calls", "{call}"},
		"r4c_hedge_launched_total":                     {"r4c.hedge.launched", "{attempt}"},
		"r4c_hedge_won_total":                          {"r4c.hedge.won", "{call}"},
		"r4c_observer_panics_total":                    {"r4c.observer.panics", "{panic}"},
	}
	var out []string
	for _, s := range samples {
		n, ok := otelName[s.Name]
		if !ok {
			panic("no OpenTelemetry name for " + s.Name)
		}
		attrs := strings.ReplaceAll(s.Labels, `"`, "")
		out = append(out, point{n[0], s.Type, n[1], attrs, s.Value}.String())
	}
	sort.Strings(out)
	return out
}

// attrString writes attributes as k=v pairs sorted by key, separated by commas: the scenario's
// label pairs without quotes.
func attrString(set attribute.Set) string {
	var pairs []string
	for _, kv := range set.ToSlice() {
		pairs = append(pairs, string(kv.Key)+"="+kv.Value.Emit())
	}
	return strings.Join(pairs, ",")
}

// TestRegisterObservesEveryPolicy reads a ManualReader before the registry has instances and
// after one instance of every policy has run: every instrument, kind, unit, attribute and value
// must be as the scenario says.
func TestRegisterObservesEveryPolicy(t *testing.T) {
	reg, clock := metricstest.NewRegistry(t)
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	registration, err := r4cotel.Register(reg, r4cotel.WithMeterProvider(provider))
	if err != nil {
		t.Fatal(err)
	}
	same(t, "before any instance", collect(t, reader), expected(metricstest.Before))
	metricstest.Drive(t, reg, clock)
	same(t, "after the scenario", collect(t, reader), expected(metricstest.Expected))

	if err := registration.Unregister(); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, reader); len(got) != 0 {
		t.Fatalf("after Unregister: %q", got)
	}
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestPrometheusExporterMatchesR4cprom scrapes the same registry through the OpenTelemetry
// Prometheus exporter and through r4cprom: the two outputs must be the same text, name for name,
// label for label, value for value (the exporter's scope labels and target_info turned off,
// as one does to compare).
func TestPrometheusExporterMatchesR4cprom(t *testing.T) {
	reg, clock := metricstest.NewRegistry(t)
	viaOTel := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(viaOTel), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r4cotel.Register(reg, r4cotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter)))); err != nil {
		t.Fatal(err)
	}
	viaProm := prometheus.NewRegistry()
	viaProm.MustRegister(r4cprom.NewCollector(reg))

	metricstest.Drive(t, reg, clock)
	otelText, promText := gatherText(t, viaOTel), gatherText(t, viaProm)
	if otelText != promText {
		t.Fatalf("through the OpenTelemetry exporter:\n%s\nthrough r4cprom:\n%s", otelText, promText)
	}
	if err := testutil.GatherAndCompare(viaOTel, strings.NewReader(metricstest.Text(metricstest.Expected))); err != nil {
		t.Fatal(err)
	}
}

// gatherText renders what g gathers in the Prometheus text format.
func gatherText(t *testing.T, g prometheus.Gatherer) string {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func TestRegisterUsesTheGlobalProviderByDefault(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	previous := otel.GetMeterProvider()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	defer otel.SetMeterProvider(previous)

	reg, _ := metricstest.NewRegistry(t)
	if _, err := r4cotel.Register(reg); err != nil {
		t.Fatal(err)
	}
	same(t, "through the global provider", collect(t, reader), expected(metricstest.Before))
}

func TestRegisterRefusesANilRegistry(t *testing.T) {
	if _, err := r4cotel.Register(nil); err == nil || !strings.Contains(err.Error(), "registry is nil") {
		t.Fatalf("%v", err)
	}
}
