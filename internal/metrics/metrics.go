// Package metrics describes the metrics of a registry once, for the Prometheus module (r4cprom)
// and the OpenTelemetry module (r4cotel): their names, units, types, labels and meaning, and how
// each is read from a registry's Snapshot. Both modules read the snapshot when scraped, so the
// metrics cost an admitted call nothing.
//
// A metric's name is its OpenTelemetry name (dotted); its Prometheus name is what the
// OpenTelemetry Prometheus exporter makes of that name, unit and type (PromName), so one
// dashboard serves both modules.
//
//go:generate go test -run ^TestReference$ -update .
package metrics

import (
	"strings"

	"github.com/resilience4cata/r4c"
)

// Type is an instrument type.
type Type uint8

// The instrument types.
const (
	// Counter is monotonic: it only grows while the registry lives.
	Counter Type = iota
	// Gauge is a value that goes up and down.
	Gauge
)

// String returns "counter" or "gauge", as in the reference table.
func (t Type) String() string {
	if t == Counter {
		return "counter"
	}
	return "gauge"
}

// Metric is one metric: a name with a set of label keys, and a sample per instance (and label
// values).
type Metric struct {
	Name   string   // OpenTelemetry name, e.g. "r4c.adaptivelimit.limit"
	Unit   string   // UCUM unit: "{call}" (a count of calls), "s", "1" (a ratio)
	Type   Type     //
	Float  bool     // the value is fractional (seconds, ratios); otherwise an integer
	Labels []string // label (attribute) keys, in the order Collect gives their values
	Help   string   // what it measures, one sentence
	Prom   string   // the Prometheus name, PromName of the above
}

// The metrics. Each policy's metrics carry the instance id as the name label; the kind label of
// r4c.calls.rejected is the policy's kind (r4c.KindAdaptiveLimit, ...).
var (
	CallsRejected = def("r4c.calls.rejected", "{call}", Counter, false, "Calls a policy rejected without running them (a full adaptive limit or bulkhead, a rate limiter without permits, an open circuit breaker).", "kind", "name")

	AdaptiveLimitLimit         = def("r4c.adaptivelimit.limit", "{call}", Gauge, false, "How many calls the adaptive limit lets run at once now.", "name")
	AdaptiveLimitConcurrent    = def("r4c.adaptivelimit.concurrent.calls", "{call}", Gauge, false, "Calls the adaptive limit admitted that are running now.", "name")
	AdaptiveLimitChanges       = def("r4c.adaptivelimit.limit.changes", "{change}", Counter, false, "Windows after which the adaptive limit changed.", "name")
	AdaptiveLimitMin           = def("r4c.adaptivelimit.min.limit", "{call}", Gauge, false, "The lowest value the adaptive limit may take (MinLimit).", "name")
	AdaptiveLimitMax           = def("r4c.adaptivelimit.max.limit", "{call}", Gauge, false, "The highest value the adaptive limit may take (MaxLimit).", "name")
	AdaptiveLimitWindows       = def("r4c.adaptivelimit.windows", "{window}", Counter, false, "Completed windows, each a recomputation of the adaptive limit.", "name")
	AdaptiveLimitWindowLatency = def("r4c.adaptivelimit.window.latency", "s", Gauge, true, "Average latency of the adaptive limit's last completed window (0 before the first).", "name")
	AdaptiveLimitSamples       = def("r4c.adaptivelimit.samples", "{call}", Counter, false, "Latency samples of the adaptive limit's completed windows.", "name")
	AdaptiveLimitDrops         = def("r4c.adaptivelimit.drops", "{call}", Counter, false, "Samples of completed windows that were drops (an error in DropOn).", "name")
	AdaptiveLimitInfo          = def("r4c.adaptivelimit.info", "", Gauge, false, "Always 1; the algorithm label names the adaptive limit's algorithm.", "name", "algorithm")
	AdaptiveLimitWaiting       = def("r4c.adaptivelimit.waiting.calls", "{call}", Gauge, false, "Calls waiting for a slot of the adaptive limit now (MaxWait).", "name")
	AdaptiveLimitWaitTimeouts  = def("r4c.adaptivelimit.wait.timeouts", "{call}", Counter, false, "Waits for a slot that ended without one, at MaxWait or the call's deadline (also counted as rejections).", "name")
	PartitionConcurrent        = def("r4c.adaptivelimit.partition.concurrent.calls", "{call}", Gauge, false, "Calls of a partition of the adaptive limit running now.", "name", "partition")
	PartitionGuaranteed        = def("r4c.adaptivelimit.partition.guaranteed.calls", "{call}", Gauge, false, "Slots the partition's share guarantees under the current limit.", "name", "partition")
	PartitionRejected          = def("r4c.adaptivelimit.partition.rejected", "{call}", Counter, false, "Calls of a partition the adaptive limit rejected (also counted in r4c.calls.rejected).", "name", "partition")

	BulkheadAvailable = def("r4c.bulkhead.available.concurrent.calls", "{call}", Gauge, false, "Slots of the bulkhead free now.", "name")
	BulkheadMax       = def("r4c.bulkhead.max.allowed.concurrent.calls", "{call}", Gauge, false, "Slots of the bulkhead (MaxConcurrent).", "name")
	BulkheadWaiting   = def("r4c.bulkhead.waiting.calls", "{call}", Gauge, false, "Calls waiting for a slot of the bulkhead now.", "name")

	RateLimiterAvailable = def("r4c.ratelimiter.available.permissions", "{permission}", Gauge, false, "Permits the rate limiter's current period has left, less those reserved by waiting calls (negative while calls wait).", "name")
	RateLimiterWaiting   = def("r4c.ratelimiter.waiting.calls", "{call}", Gauge, false, "Calls waiting for a permit of the rate limiter now.", "name")

	CircuitBreakerState        = def("r4c.circuitbreaker.state", "", Gauge, false, "1 for the circuit breaker's current state, 0 for the others.", "name", "state")
	CircuitBreakerFailureRatio = def("r4c.circuitbreaker.failure.ratio", "1", Gauge, true, "Share of the recorded calls that failed (0 to 1); absent while too few calls are recorded.", "name")
	CircuitBreakerSlowRatio    = def("r4c.circuitbreaker.slow.call.ratio", "1", Gauge, true, "Share of the recorded calls that were slow (0 to 1); absent while too few calls are recorded.", "name")
	CircuitBreakerBuffered     = def("r4c.circuitbreaker.buffered.calls", "{call}", Gauge, false, "Outcomes the circuit breaker holds in its current metrics.", "name")
	CircuitBreakerCalls        = def("r4c.circuitbreaker.calls", "{call}", Counter, false, "Calls the circuit breaker let through that ended, by outcome (successful, failed, ignored).", "name", "outcome")
	CircuitBreakerSlowCalls    = def("r4c.circuitbreaker.slow.calls", "{call}", Counter, false, "Calls the circuit breaker let through that took at least SlowCallDuration.", "name")
	CircuitBreakerTransitions  = def("r4c.circuitbreaker.state.changes", "{change}", Counter, false, "State changes of the circuit breaker.", "name")

	RetryCalls   = def("r4c.retry.calls", "{call}", Counter, false, "Calls through the retry that ended, by outcome (successful_without_retry, successful_with_retry, failed_without_retry, failed_with_retry).", "name", "outcome")
	RetryRetries = def("r4c.retry.retries", "{attempt}", Counter, false, "Attempts the retry made after the first.", "name")

	TimeoutExpired = def("r4c.timeout.expired", "{call}", Counter, false, "Calls that ran past their timeout.", "name")

	HedgeCalls    = def("r4c.hedge.calls", "{call}", Counter, false, "Calls (retry attempts included) that went through the hedge.", "name")
	HedgeLaunched = def("r4c.hedge.launched", "{attempt}", Counter, false, "Extra attempts the hedge launched.", "name")
	HedgeWon      = def("r4c.hedge.won", "{call}", Counter, false, "Calls whose result came from an extra attempt.", "name")

	ObserverPanics = def("r4c.observer.panics", "{panic}", Counter, false, "Panics of the registry's observers, recovered.")
)

// All lists every metric, in the order of the reference in docs/metrics.md.
var All = []*Metric{
	CallsRejected,
	AdaptiveLimitLimit, AdaptiveLimitConcurrent, AdaptiveLimitChanges, AdaptiveLimitMin, AdaptiveLimitMax,
	AdaptiveLimitWindows, AdaptiveLimitWindowLatency, AdaptiveLimitSamples, AdaptiveLimitDrops, AdaptiveLimitInfo,
	AdaptiveLimitWaiting, AdaptiveLimitWaitTimeouts, PartitionConcurrent, PartitionGuaranteed, PartitionRejected,
	BulkheadAvailable, BulkheadMax, BulkheadWaiting,
	RateLimiterAvailable, RateLimiterWaiting,
	CircuitBreakerState, CircuitBreakerFailureRatio, CircuitBreakerSlowRatio, CircuitBreakerBuffered,
	CircuitBreakerCalls, CircuitBreakerSlowCalls, CircuitBreakerTransitions,
	RetryCalls, RetryRetries,
	TimeoutExpired,
	HedgeCalls, HedgeLaunched, HedgeWon,
	ObserverPanics,
}

func def(name, unit string, typ Type, float bool, help string, labels ...string) *Metric {
	m := &Metric{Name: name, Unit: unit, Type: typ, Float: float, Labels: labels, Help: help}
	m.Prom = PromName(name, unit, typ)
	return m
}

// PromName is the Prometheus name of an OpenTelemetry metric, as the OpenTelemetry Prometheus
// exporter writes it by default: the name's words joined by underscores, the unit's word
// appended ("s" seconds, "1" on a gauge ratio; a {annotation} adds nothing) unless the name has
// it already, and _total appended to a counter.
func PromName(name, unit string, typ Type) string {
	words := strings.FieldsFunc(name, func(r rune) bool { return r == '.' || r == '_' })
	add := func(w string) {
		for i, x := range words {
			if x == w {
				words = append(words[:i], words[i+1:]...)
				break
			}
		}
		words = append(words, w)
	}
	switch {
	case unit == "s":
		add("seconds")
	case unit == "1" && typ == Gauge:
		add("ratio")
	}
	if typ == Counter {
		add("total")
	}
	return strings.Join(words, "_")
}

// Collect reads a snapshot and calls emit once per sample, with the label values in the order
// of m.Labels.
func Collect(s r4c.Snapshot, emit func(m *Metric, v float64, labels ...string)) {
	for _, l := range s.AdaptiveLimits {
		emit(CallsRejected, float64(l.Rejected), r4c.KindAdaptiveLimit, l.ID)
		emit(AdaptiveLimitLimit, float64(l.Limit), l.ID)
		emit(AdaptiveLimitConcurrent, float64(l.InFlight), l.ID)
		emit(AdaptiveLimitChanges, float64(l.LimitChanges), l.ID)
		emit(AdaptiveLimitMin, float64(l.MinLimit), l.ID)
		emit(AdaptiveLimitMax, float64(l.MaxLimit), l.ID)
		emit(AdaptiveLimitWindows, float64(l.Windows), l.ID)
		emit(AdaptiveLimitWindowLatency, l.WindowLatency.Seconds(), l.ID)
		emit(AdaptiveLimitSamples, float64(l.Samples), l.ID)
		emit(AdaptiveLimitDrops, float64(l.Drops), l.ID)
		emit(AdaptiveLimitInfo, 1, l.ID, l.Algorithm.String())
		emit(AdaptiveLimitWaiting, float64(l.Waiting), l.ID)
		emit(AdaptiveLimitWaitTimeouts, float64(l.WaitTimeouts), l.ID)
		for _, p := range l.Partitions {
			emit(PartitionConcurrent, float64(p.InFlight), l.ID, p.Name)
			emit(PartitionGuaranteed, float64(p.Guaranteed), l.ID, p.Name)
			emit(PartitionRejected, float64(p.Rejected), l.ID, p.Name)
		}
	}
	for _, b := range s.Bulkheads {
		emit(CallsRejected, float64(b.Rejected), r4c.KindBulkhead, b.ID)
		emit(BulkheadAvailable, float64(max(b.MaxConcurrent-b.InFlight, 0)), b.ID)
		emit(BulkheadMax, float64(b.MaxConcurrent), b.ID)
		emit(BulkheadWaiting, float64(b.Waiting), b.ID)
	}
	for _, r := range s.RateLimiters {
		emit(CallsRejected, float64(r.Rejected), r4c.KindRateLimiter, r.ID)
		emit(RateLimiterAvailable, float64(r.AvailablePermits), r.ID)
		emit(RateLimiterWaiting, float64(r.Waiting), r.ID)
	}
	for _, c := range s.CircuitBreakers {
		emit(CallsRejected, float64(c.NotPermitted), r4c.KindCircuitBreaker, c.ID)
		for _, st := range []r4c.CircuitState{r4c.CircuitClosed, r4c.CircuitOpen, r4c.CircuitHalfOpen} {
			emit(CircuitBreakerState, b2f(c.State == st), c.ID, st.String())
		}
		if c.FailureRate >= 0 {
			emit(CircuitBreakerFailureRatio, c.FailureRate/100, c.ID)
		}
		if c.SlowCallRate >= 0 {
			emit(CircuitBreakerSlowRatio, c.SlowCallRate/100, c.ID)
		}
		emit(CircuitBreakerBuffered, float64(c.BufferedCalls), c.ID)
		emit(CircuitBreakerCalls, float64(c.Successful), c.ID, "successful")
		emit(CircuitBreakerCalls, float64(c.Failed), c.ID, "failed")
		emit(CircuitBreakerCalls, float64(c.Ignored), c.ID, "ignored")
		emit(CircuitBreakerSlowCalls, float64(c.Slow), c.ID)
		emit(CircuitBreakerTransitions, float64(c.StateChanges), c.ID)
	}
	for _, r := range s.Retries {
		emit(RetryCalls, float64(r.SuccessfulWithoutRetry), r.ID, "successful_without_retry")
		emit(RetryCalls, float64(r.SuccessfulWithRetry), r.ID, "successful_with_retry")
		emit(RetryCalls, float64(r.FailedWithoutRetry), r.ID, "failed_without_retry")
		emit(RetryCalls, float64(r.FailedWithRetry), r.ID, "failed_with_retry")
		emit(RetryRetries, float64(r.Retries), r.ID)
	}
	for _, t := range s.Timeouts {
		emit(TimeoutExpired, float64(t.TimedOut), t.ID)
	}
	for _, h := range s.Hedges {
		emit(HedgeCalls, float64(h.Calls), h.ID)
		emit(HedgeLaunched, float64(h.Hedges), h.ID)
		emit(HedgeWon, float64(h.HedgeWins), h.ID)
	}
	emit(ObserverPanics, float64(s.ObserverPanics))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
