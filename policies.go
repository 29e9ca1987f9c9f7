package r4c

import (
	"fmt"
	"reflect"
)

// policies is the set of instances one pipeline (or generated wrapper method) uses, resolved
// once at construction. A nil handle means the policy is absent.
type policies struct {
	limit *AdaptiveLimitHandle
}

// resolvePolicies resolves cfgs for instance id and claims their instances in r, creating them
// or sharing existing ones; owner names the user in R4C-REG-008 messages. It returns the one
// fallback config, if any, for the caller to type. Nothing is registered when it fails.
func (r *Registry) resolvePolicies(id, owner string, cfgs []PolicyConfig) (policies, fallbackConfig, error) {
	var ps policies
	scope := "instance " + quote(id)
	byName := map[string]PolicyConfig{}
	var fb fallbackConfig
	for _, c := range cfgs {
		if isNil(c) {
			return ps, nil, nilConfigError(scope)
		}
		if v := reflect.ValueOf(c); v.Kind() == reflect.Pointer {
			c = v.Elem().Interface().(PolicyConfig)
		}
		if _, dup := byName[c.PolicyName()]; dup {
			return ps, nil, &ConfigError{Code: CodeInvalidSetting, Instance: id, Policy: c.PolicyName(),
				Msg: fmt.Sprintf("%s: %s is given twice", scope, c.PolicyName())}
		}
		byName[c.PolicyName()] = c
		if f, ok := c.(fallbackConfig); ok {
			fb = f
		}
	}
	var claims []claim
	if err := use(r, &adaptiveLimitSpec, byName, id, owner, &claims, &ps.limit, newAdaptiveLimit(r, id), (*AdaptiveLimitHandle).snapshotAny); err != nil {
		return ps, nil, err
	}
	return ps, fb, r.register(claims)
}

// use resolves the config of spec's policy in byName, if present, and adds the claim of its
// instance; *h receives the handle when the claims are registered.
func use[C any, H any](r *Registry, spec *policySpec[C], byName map[string]PolicyConfig, id, owner string, claims *[]claim, h *H, mk func(C) H, snap func(H) any) error {
	c, ok := byName[spec.name]
	if !ok {
		return nil
	}
	cfg, err := resolve(r, spec, id, c.(C))
	if err != nil {
		return err
	}
	*claims = append(*claims, claimInstance(r, spec, id, owner, cfg, h, mk, snap))
	return nil
}

// fallbackConfig is implemented by FallbackConfig[T] for every T.
type fallbackConfig interface {
	PolicyConfig
	fallbackType() reflect.Type
}
