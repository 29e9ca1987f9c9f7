package metrics_test

import (
	"testing"

	"github.com/resilience4cata/r4c/internal/metrics"
	"github.com/resilience4cata/r4c/internal/metricstest"
)

// TestCollectCoversEveryMetric drives the scenario of every policy and checks that each metric
// of All has samples, with as many label values as it has labels.
func TestCollectCoversEveryMetric(t *testing.T) {
	reg, clock := metricstest.NewRegistry(t)
	metricstest.Drive(t, reg, clock)
	s := reg.Snapshot()
	seen := map[*metrics.Metric]int{}
	metrics.Collect(s, func(m *metrics.Metric, v float64, labels ...string) {
		if len(labels) != len(m.Labels) {
			t.Errorf("%s: label values %q for keys %q", m.Name, labels, m.Labels)
		}
		seen[m]++
	})
	for _, m := range metrics.All {
		if seen[m] == 0 {
			t.Errorf("%s: no sample", m.Name)
		}
	}
	if len(seen) != len(metrics.All) {
		t.Errorf("%d metrics emitted, %d listed in All", len(seen), len(metrics.All))
	}
}
