package r4c

import (
	"fmt"
	"reflect"
)

// policies is the set of instances one pipeline (or generated wrapper method) uses, resolved
// once at construction. A nil handle means the policy is absent.
type policies struct {
	limit    *AdaptiveLimitHandle
	bulkhead *BulkheadHandle
	timeout  *TimeoutHandle
	rate     *RateLimiterHandle
	retry    *RetryHandle
	breaker  *CircuitBreakerHandle
	hedge    *HedgeHandle
}

// resolvePolicies resolves cfgs for instance id and claims their instances in r, creating them
// or sharing existing ones; owner names the user in R4C-REG-008 messages. The one fallback
// config, if any, goes to checkFallback before anything is registered (the caller types it).
// Nothing is registered when it fails. A policy given with Shared has the instance id it names.
func (r *Registry) resolvePolicies(id, owner string, cfgs []PolicyConfig, checkFallback func(fallbackConfig) error) (policies, error) {
	var ps policies
	var ids map[string]string // the policies given an instance id of their own (Shared)
	scope := "instance " + quote(id)
	byName := map[string]PolicyConfig{}
	var fb fallbackConfig
	for _, c := range cfgs {
		if isNil(c) {
			return ps, nilConfigError(scope)
		}
		if s, ok := c.(sharedConfig); ok {
			if s.id == "" || isNil(s.cfg) {
				return ps, &ConfigError{Code: codeInvalidSetting, Instance: id, Key: "id",
					Msg: fmt.Sprintf("%s: r4c.Shared needs an instance id and a config", scope)}
			}
			if ids == nil {
				ids = map[string]string{}
			}
			ids[s.cfg.policyName()] = s.id
			c = s.cfg
		}
		if v := reflect.ValueOf(c); v.Kind() == reflect.Pointer {
			c = v.Elem().Interface().(PolicyConfig)
		}
		if _, dup := byName[c.policyName()]; dup {
			return ps, &ConfigError{Code: codeDuplicatePolicy, Instance: id, Policy: c.policyName(),
				Msg: fmt.Sprintf("%s: %s is given twice", scope, c.policyName())}
		}
		byName[c.policyName()] = c
		if f, ok := c.(fallbackConfig); ok {
			fb = f
		}
	}
	var claims []claim
	for _, err := range []error{
		use(r, &adaptiveLimitSpec, byName, id, ids, owner, &claims, &ps.limit, newAdaptiveLimit, (*AdaptiveLimitHandle).snapshotAny),
		use(r, &bulkheadSpec, byName, id, ids, owner, &claims, &ps.bulkhead, newBulkhead, (*BulkheadHandle).snapshotAny),
		use(r, &timeoutSpec, byName, id, ids, owner, &claims, &ps.timeout, newTimeout, (*TimeoutHandle).snapshotAny),
		use(r, &rateLimiterSpec, byName, id, ids, owner, &claims, &ps.rate, newRateLimiter, (*RateLimiterHandle).snapshotAny),
		use(r, &retrySpec, byName, id, ids, owner, &claims, &ps.retry, newRetry, (*RetryHandle).snapshotAny),
		use(r, &circuitBreakerSpec, byName, id, ids, owner, &claims, &ps.breaker, newCircuitBreaker, (*CircuitBreakerHandle).snapshotAny),
		use(r, &hedgeSpec, byName, id, ids, owner, &claims, &ps.hedge, newHedge, (*HedgeHandle).snapshotAny),
	} {
		if err != nil {
			return ps, err
		}
	}
	if fb != nil {
		if err := checkFallback(fb); err != nil {
			return ps, err
		}
	}
	return ps, r.register(claims)
}

// use resolves the config of spec's policy in byName, if present, and adds the claim of its
// instance; *h receives the handle when the claims are registered.
func use[C any, H any](r *Registry, spec *policySpec[C], byName map[string]PolicyConfig, id string, ids map[string]string, owner string,
	claims *[]claim, h *H, mk func(*Registry, string) func(C) H, snap func(H) any) error {
	c, ok := byName[spec.name]
	if !ok {
		return nil
	}
	if own, ok := ids[spec.name]; ok {
		id = own
	}
	cfg, err := resolve(r, spec, id, c.(C))
	if err != nil {
		return err
	}
	*claims = append(*claims, claimInstance(r, spec, id, owner, cfg, h, mk(r, id), snap))
	return nil
}

// Shared gives the policy that cfg configures the instance id id instead of the pipeline's, so
// that pipelines of different ids share that one instance (their resolved settings must agree,
// R4C-REG-008 otherwise): one rate limiter for every endpoint, each with its own adaptive limit,
// for example. It is for NewPipeline; the registry's layers refuse it.
func Shared(id string, cfg PolicyConfig) PolicyConfig { return sharedConfig{id: id, cfg: cfg} }

// sharedConfig is a config given an instance id of its own by Shared.
type sharedConfig struct {
	id  string
	cfg PolicyConfig
}

// policyName returns the name of the shared policy.
func (s sharedConfig) policyName() string {
	if isNil(s.cfg) {
		return ""
	}
	return s.cfg.policyName()
}

func (s sharedConfig) addTo(_ layer, scope string, _ bool) error {
	return &ConfigError{Code: codeInvalidSetting, Instance: scopeID(scope), Policy: s.policyName(), Key: "id", Value: s.id,
		Msg: fmt.Sprintf("%s: r4c.Shared is for NewPipeline: a registry layer configures instances by their own ids", scope)}
}

func (s sharedConfig) namedConfig() string { return "" }

// fallbackConfig is implemented by FallbackConfig[T] for every T.
type fallbackConfig interface {
	PolicyConfig
	fallbackType() reflect.Type
}

// stages returns the enabled policies as pipeline stages in the canonical order, outermost
// first: Fallback > Retry > Hedge > CircuitBreaker > RateLimiter > AdaptiveLimit > Timeout >
// Bulkhead. This is the one place that order is written down.
func stages[T any](ps policies, fb *FallbackConfig[T]) []stage[T] {
	var s []stage[T]
	if fb != nil {
		s = append(s, fallbackStage(*fb))
	}
	if ps.retry != nil && ps.retry.enabled {
		s = append(s, retryStage[T](ps.retry))
	}
	if ps.hedge != nil && ps.hedge.enabled {
		s = append(s, hedgeStage[T](ps.hedge))
	}
	if ps.breaker != nil && ps.breaker.enabled {
		s = append(s, gateStage[T, cbPermit](ps.breaker))
	}
	if ps.rate != nil && ps.rate.enabled {
		s = append(s, rateLimiterStage[T](ps.rate))
	}
	if ps.limit != nil && ps.limit.enabled {
		s = append(s, gateStage[T, limitSlot](ps.limit))
	}
	if ps.timeout != nil && ps.timeout.enabled {
		s = append(s, timeoutStage[T](ps.timeout))
	}
	if ps.bulkhead != nil && ps.bulkhead.enabled {
		s = append(s, bulkheadStage[T](ps.bulkhead))
	}
	return s
}

// compose chains stages around the call, the first stage outermost.
func compose[T any](s []stage[T]) call[T] {
	run := call[T](invoke[T])
	for i := len(s) - 1; i >= 0; i-- {
		run = s[i](run)
	}
	return run
}
