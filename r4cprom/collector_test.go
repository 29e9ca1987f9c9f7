package r4cprom_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/resilience4cata/r4c/internal/metricstest"
	"github.com/resilience4cata/r4c/r4cprom"
)

// TestCollectorScrapesEveryPolicy registers the collector before the registry has instances,
// then drives one instance of every policy and scrapes again: every name, label, type and value
// must be as the scenario says.
func TestCollectorScrapesEveryPolicy(t *testing.T) {
	reg, clock := metricstest.NewRegistry(t)
	promReg := prometheus.NewPedanticRegistry()
	c := r4cprom.NewCollector(reg)
	if err := promReg.Register(c); err != nil {
		t.Fatal(err)
	}
	if err := testutil.GatherAndCompare(promReg, strings.NewReader(metricstest.Text(metricstest.Before))); err != nil {
		t.Fatalf("before any instance: %v", err)
	}
	metricstest.Drive(t, reg, clock)
	if err := testutil.GatherAndCompare(promReg, strings.NewReader(metricstest.Text(metricstest.Expected))); err != nil {
		t.Fatal(err)
	}
}

func TestCollectorIsLintClean(t *testing.T) {
	reg, clock := metricstest.NewRegistry(t)
	metricstest.Drive(t, reg, clock)
	problems, err := testutil.CollectAndLint(r4cprom.NewCollector(reg))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

func TestConstLabelsAddToEveryMetric(t *testing.T) {
	reg, clock := metricstest.NewRegistry(t)
	metricstest.Drive(t, reg, clock)
	withLabel := make([]metricstest.Sample, len(metricstest.Expected))
	for i, s := range metricstest.Expected {
		pairs := []string{`service="checkout"`}
		if s.Labels != "" {
			pairs = append(pairs, strings.Split(s.Labels, ",")...)
		}
		sort.Strings(pairs)
		s.Labels = strings.Join(pairs, ",")
		withLabel[i] = s
	}
	c := r4cprom.NewCollector(reg, r4cprom.WithConstLabels(prometheus.Labels{"service": "checkout"}))
	if err := testutil.CollectAndCompare(c, strings.NewReader(metricstest.Text(withLabel))); err != nil {
		t.Fatal(err)
	}
}

// A constant label that takes the key of one of the metrics' own labels is refused when the
// collector is registered, with the key in the error.
func TestConstLabelClashIsAnError(t *testing.T) {
	reg, _ := metricstest.NewRegistry(t)
	err := prometheus.NewRegistry().Register(r4cprom.NewCollector(reg, r4cprom.WithConstLabels(prometheus.Labels{"name": "x"})))
	if err == nil || !strings.Contains(err.Error(), `constant label "name" (WithConstLabels) clashes`) {
		t.Fatalf("%v", err)
	}
}

// A nil registry has no instances: the collector reports only the registry-wide counter.
func TestNilRegistryReportsNoInstance(t *testing.T) {
	if err := testutil.CollectAndCompare(r4cprom.NewCollector(nil), strings.NewReader(metricstest.Text(metricstest.Before))); err != nil {
		t.Fatal(err)
	}
}
