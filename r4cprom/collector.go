// Package r4cprom exports the metrics of an r4c registry to Prometheus.
//
//	prometheus.MustRegister(r4cprom.NewCollector(reg))
//
// The collector reads the registry's snapshot when it is scraped, and nothing else: an admitted
// call costs what it costs without it. Instances created after the collector was registered
// appear at the next scrape. The metrics, their labels and meaning are listed in docs/metrics.md;
// their names are those the OpenTelemetry module (r4cotel) gives through the OpenTelemetry
// Prometheus exporter, so one dashboard serves both.
package r4cprom

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/metrics"
)

// Option configures a collector.
type Option func(*collector)

// WithConstLabels adds labels with fixed values to every metric of the collector, e.g. the
// service a registry belongs to when a process has several. The metric names and their own
// labels (kind, name, state, outcome, algorithm) stay the same; a constant label must not use
// one of those keys.
func WithConstLabels(labels prometheus.Labels) Option {
	return func(c *collector) {
		for k, v := range labels {
			c.constLabels[k] = v
		}
	}
}

// collector is a prometheus.Collector over a registry's snapshots.
type collector struct {
	reg         *r4c.Registry
	constLabels prometheus.Labels
	descs       map[*metrics.Metric]*prometheus.Desc
}

// NewCollector returns a Prometheus collector of reg's metrics. Register it once per registry
// (prometheus.MustRegister); each scrape reads reg.Snapshot() and reports every instance it
// holds then. A nil reg reports no instance.
func NewCollector(reg *r4c.Registry, opts ...Option) prometheus.Collector {
	c := &collector{reg: reg, constLabels: prometheus.Labels{}, descs: map[*metrics.Metric]*prometheus.Desc{}}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	for _, m := range metrics.All {
		c.descs[m] = prometheus.NewDesc(m.Prom, m.Help, m.Labels, c.constLabels)
		for _, l := range m.Labels {
			if _, clash := c.constLabels[l]; clash {
				// Registering the collector fails with this error.
				c.descs[m] = prometheus.NewInvalidDesc(fmt.Errorf("r4cprom: the constant label %q (WithConstLabels) clashes with a label of %s", l, m.Prom))
			}
		}
	}
	return c
}

// Describe sends the descriptor of every metric, whether or not an instance reports it yet.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range metrics.All {
		ch <- c.descs[m]
	}
}

// Collect reads one snapshot of the registry and sends its samples.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	metrics.Collect(c.reg.Snapshot(), func(m *metrics.Metric, v float64, labels ...string) {
		typ := prometheus.GaugeValue
		if m.Type == metrics.Counter {
			typ = prometheus.CounterValue
		}
		ch <- prometheus.MustNewConstMetric(c.descs[m], typ, v, labels...)
	})
}
