package realtime

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	"github.com/resilience4cata/r4c"
)

// Contenders returns the limits the command runs: ours with the settings the quality bench
// gives them (MaxLimit 200, everything else at its default), and failsafe-go's adaptive limiter
// with its defaults, told of a timeout as its documentation asks (Permit.Drop), and, as a
// variant, with the timed-out call's latency recorded like any other.
func Contenders() []Contender {
	return []Contender{
		r4cContender("knee", r4c.Knee, "ours (`r4c.Knee`), `AdaptiveLimitConfig{Algorithm: r4c.Knee, MaxLimit: 200}`; a timeout is a drop"),
		r4cContender("gradient2", r4c.Gradient2, "ours (`r4c.Gradient2`, the default algorithm, with the drop guard on by default), `MaxLimit: 200`; a timeout is a drop"),
		{Name: "failsafe-go", Doc: "failsafe-go's adaptive limiter (v0.9.8) with its defaults (limits 1 to 200, initially 20): `TryAcquirePermit`, then `Record` for a call served, `Drop` for a timeout, as its documentation says of an execution that ends by a timeout",
			New: func() Limiter { return &failsafeLimiter{l: adaptivelimiter.NewBuilder[any]().Build()} }},
		{Name: "failsafe-go-record", Doc: "the same, but a timeout is recorded like a call served (`Record`), so that its latency, the timeout, reaches the limiter",
			New: func() Limiter { return &failsafeLimiter{l: adaptivelimiter.NewBuilder[any]().Build(), record: true} }},
		{Name: "at-1.2knee", Doc: "a reference, not an algorithm: a limit of 1.2 times the knee of the phase under way, known in advance, as on the quality bench; it shows what a limit that knows the knee gets on the wall clock, where a freed slot also waits for goroutines to be scheduled",
			New: func() Limiter { return &fixedLimiter{factor: 1.2} }},
	}
}

// fixedLimiter holds its limit at a multiple of the knee of the phase under way.
type fixedLimiter struct {
	factor   float64
	limit    atomic.Int64
	inFlight atomic.Int64
}

func (l *fixedLimiter) setKnee(workers int) {
	l.limit.Store(max(1, int64(math.Round(l.factor*float64(workers)))))
}

func (l *fixedLimiter) Acquire() (Permit, bool) {
	if l.inFlight.Add(1) > l.limit.Load() {
		l.inFlight.Add(-1)
		return nil, false
	}
	return fixedPermit{l}, true
}

func (l *fixedLimiter) Limit() int { return int(l.limit.Load()) }

type fixedPermit struct{ l *fixedLimiter }

func (p fixedPermit) Success() { p.l.inFlight.Add(-1) }
func (p fixedPermit) Timeout() { p.l.inFlight.Add(-1) }

// r4cContender is one of our algorithms behind an AdaptiveLimit of its own registry.
func r4cContender(name string, alg r4c.LimitAlgorithm, doc string) Contender {
	return Contender{Name: name, Doc: doc, New: func() Limiter {
		reg, err := r4c.NewRegistry()
		if err == nil {
			err = reg.Build("dependency", r4c.AdaptiveLimitConfig{Algorithm: alg, MaxLimit: 200})
		}
		h, herr := reg.AdaptiveLimit("dependency")
		if err != nil || herr != nil {
			// The configuration is fixed above: failing here is a bug of this package.
			panic(fmt.Sprintf("realtime: %s: %v %v", name, err, herr))
		}
		return r4cLimiter{h}
	}}
}

type r4cLimiter struct{ h *r4c.AdaptiveLimitHandle }

func (l r4cLimiter) Acquire() (Permit, bool) {
	p, err := l.h.Acquire()
	return r4cPermit{p}, err == nil
}

func (l r4cLimiter) Limit() int { return l.h.Limit() }

type r4cPermit struct{ p r4c.AdaptiveLimitPermit }

func (p r4cPermit) Success() { p.p.Success() }
func (p r4cPermit) Timeout() { p.p.Drop() }

type failsafeLimiter struct {
	l      adaptivelimiter.AdaptiveLimiter[any]
	record bool // a timeout is recorded as a completion, not dropped
}

func (l *failsafeLimiter) Acquire() (Permit, bool) {
	p, ok := l.l.TryAcquirePermit()
	return failsafePermit{p, l.record}, ok
}

func (l *failsafeLimiter) Limit() int { return l.l.Limit() }

type failsafePermit struct {
	p      adaptivelimiter.Permit
	record bool
}

func (p failsafePermit) Success() { p.p.Record() }
func (p failsafePermit) Timeout() {
	if p.record {
		p.p.Record()
	} else {
		p.p.Drop()
	}
}
