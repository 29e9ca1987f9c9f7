// Package edge holds what the integrations at a service's edges (r4chttp, r4cgrpc) share: a
// pipeline per instance id (their options let each request or method have an instance of its
// own, every id's pipeline with the same policies, built on first use), their default policies,
// and the wait they tell a rejected client.
package edge

import (
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/resilience4cata/r4c"
)

// Apply applies opts (nil ones are skipped) to a zero O and returns it: the integrations' options
// are functions of their options struct.
func Apply[O any, F ~func(*O)](opts []F) O {
	var o O
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// Policies returns cfgs, or, when there are none, an adaptive limit with the instance's
// resolved settings: the integrations' default.
func Policies(cfgs []r4c.PolicyConfig) []r4c.PolicyConfig {
	if len(cfgs) == 0 {
		return []r4c.PolicyConfig{r4c.AdaptiveLimitConfig{}}
	}
	return cfgs
}

// RejectionWait is how long a rejected client should wait before trying again: what the policy
// says (an open breaker's remaining open time, a rate limiter's next period), or, when it cannot
// tell (a full limit or bulkhead frees a slot whenever a call ends), 1 to 2 seconds at random, so
// that rejected clients do not come back together.
func RejectionWait(err error) time.Duration {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		if d := ra.RetryAfter(); d > 0 {
			return d
		}
	}
	return time.Second + rand.N(time.Second)
}

// Cache holds the pipelines of one integration, by instance id.
type Cache[T any] struct {
	reg  *r4c.Registry
	cfgs []r4c.PolicyConfig
	id   string
	def  *r4c.Pipeline[T]
	mu   sync.Mutex // one build per id: a second would only join the first's instances
	byID sync.Map   // instance id -> *r4c.Pipeline[T]
}

// New builds the default id's pipeline at once, so that a configuration error is the
// constructor's.
func New[T any](reg *r4c.Registry, id string, cfgs []r4c.PolicyConfig) (*Cache[T], error) {
	p, err := r4c.NewPipeline[T](reg, id, cfgs...)
	if err != nil {
		return nil, err
	}
	return &Cache[T]{reg: reg, cfgs: cfgs, id: id, def: p}, nil
}

// Get returns the pipeline of instance id; "" is the default id.
func (c *Cache[T]) Get(id string) (*r4c.Pipeline[T], error) {
	if id == "" || id == c.id {
		return c.def, nil
	}
	if p, ok := c.byID.Load(id); ok {
		return p.(*r4c.Pipeline[T]), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.byID.Load(id); ok {
		return p.(*r4c.Pipeline[T]), nil
	}
	p, err := r4c.NewPipeline[T](c.reg, id, c.cfgs...)
	if err != nil {
		return nil, err
	}
	c.byID.Store(id, p)
	return p, nil
}

// WithoutRepeats returns cfgs without the policies that run a call more than once (Retry,
// Hedge): for calls that cannot be repeated (a request body that cannot be replayed, a stream).
func WithoutRepeats(cfgs []r4c.PolicyConfig) []r4c.PolicyConfig {
	var out []r4c.PolicyConfig
	for _, c := range cfgs {
		if !Repeats(c) {
			out = append(out, c)
		}
	}
	return out
}

// Repeats reports whether c is a policy that runs a call more than once.
func Repeats(c r4c.PolicyConfig) bool {
	switch c.(type) {
	case r4c.RetryConfig, *r4c.RetryConfig, r4c.HedgeConfig, *r4c.HedgeConfig:
		return true
	}
	return false
}
