// Package r4cotel exports the metrics of an r4c registry through the OpenTelemetry metric API.
//
//	registration, err := r4cotel.Register(reg, r4cotel.WithMeterProvider(provider))
//	defer registration.Unregister()
//
// Every metric is an asynchronous (observable) instrument, observed in one callback that reads
// the registry's snapshot once per collection, so an admitted call costs what it costs without
// it, and the values of one collection agree with each other. Instances created after Register
// appear at the next collection. The metrics, their units, attributes and meaning are listed in
// docs/metrics.md; through the OpenTelemetry Prometheus exporter their names are those of the
// Prometheus module (r4cprom), so one dashboard serves both.
package r4cotel

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/metrics"
)

// ScopeName is the name of the meter the instruments belong to.
const ScopeName = "github.com/resilience4cata/r4c/r4cotel"

// Option configures Register.
type Option func(*config)

type config struct {
	provider metric.MeterProvider
}

// WithMeterProvider sets the meter provider the instruments are created with. Without it,
// Register uses the global provider (otel.GetMeterProvider()) at the time of the call.
func WithMeterProvider(provider metric.MeterProvider) Option {
	return func(c *config) { c.provider = provider }
}

// Register creates the instruments of reg's metrics with the meter ScopeName of the provider,
// and registers the callback that observes them. Unregister the returned registration to stop
// observing (the instruments stay, without values). It fails if reg or the provider is nil, or
// if the provider refuses an instrument or the callback.
func Register(reg *r4c.Registry, opts ...Option) (metric.Registration, error) {
	if reg == nil {
		return nil, errors.New("r4cotel: Register: the registry is nil")
	}
	c := config{}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.provider == nil {
		c.provider = otel.GetMeterProvider()
		if c.provider == nil {
			return nil, errors.New("r4cotel: Register: the meter provider is nil")
		}
	}
	meter := c.provider.Meter(ScopeName)
	instruments := make(map[*metrics.Metric]metric.Observable, len(metrics.All))
	list := make([]metric.Observable, 0, len(metrics.All))
	for _, m := range metrics.All {
		inst, err := newInstrument(meter, m)
		if err != nil {
			return nil, fmt.Errorf("r4cotel: instrument %s: %w", m.Name, err)
		}
		instruments[m] = inst
		list = append(list, inst)
	}
	callback := func(_ context.Context, o metric.Observer) error {
		metrics.Collect(reg.Snapshot(), func(m *metrics.Metric, v float64, labels ...string) {
			set := attributes(m, labels)
			switch inst := instruments[m].(type) {
			case metric.Int64Observable:
				o.ObserveInt64(inst, int64(v), metric.WithAttributeSet(set))
			case metric.Float64Observable:
				o.ObserveFloat64(inst, v, metric.WithAttributeSet(set))
			}
		})
		return nil
	}
	registration, err := meter.RegisterCallback(callback, list...)
	if err != nil {
		return nil, fmt.Errorf("r4cotel: register the callback: %w", err)
	}
	return registration, nil
}

// newInstrument creates m's observable instrument.
func newInstrument(meter metric.Meter, m *metrics.Metric) (metric.Observable, error) {
	switch {
	case m.Type == metrics.Counter && m.Float:
		return meter.Float64ObservableCounter(m.Name, metric.WithUnit(m.Unit), metric.WithDescription(m.Help))
	case m.Type == metrics.Counter:
		return meter.Int64ObservableCounter(m.Name, metric.WithUnit(m.Unit), metric.WithDescription(m.Help))
	case m.Float:
		return meter.Float64ObservableGauge(m.Name, metric.WithUnit(m.Unit), metric.WithDescription(m.Help))
	}
	return meter.Int64ObservableGauge(m.Name, metric.WithUnit(m.Unit), metric.WithDescription(m.Help))
}

// attributes returns the attribute set of m's labels with the values given.
func attributes(m *metrics.Metric, values []string) attribute.Set {
	kvs := make([]attribute.KeyValue, len(values))
	for i, v := range values {
		kvs[i] = attribute.String(m.Labels[i], v)
	}
	return attribute.NewSet(kvs...)
}
