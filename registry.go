package r4c

import (
	"errors"
	"fmt"
	"sort"
	"sync"
)

// Registry holds the policy instances of an application, the configuration they resolve from
// (built-in defaults < WithDefaults < the named configuration < the call site < WithInstance),
// the clock they measure with and the observers of their events. Instances are created when a
// pipeline is built (or a generated wrapper constructed) and shared by id. A Registry is safe for
// concurrent use; the limits are per registry.
type Registry struct {
	clock       Clock
	systemClock bool
	observers   []Observer
	observed    bool

	defaults  layer
	configs   map[string]layer
	instances map[string]layer

	mu       sync.Mutex
	adaptive map[string]*adaptiveEntry
}

// layer is one level of configuration: at most one config per policy.
type layer struct {
	adaptive *AdaptiveLimitConfig
}

type adaptiveEntry struct {
	h     *AdaptiveLimitHandle
	owner string // who created it, for R4C-REG-008 messages
}

// Option configures a Registry.
type Option func(*registryBuilder)

type registryBuilder struct {
	r    *Registry
	errs []error
}

// WithClock sets the clock of every time-based decision (default: SystemClock()).
func WithClock(c Clock) Option {
	return func(b *registryBuilder) {
		if c == nil {
			b.errs = append(b.errs, &ConfigError{Code: CodeInvalidSetting, Key: "clock", Value: "nil", Msg: "WithClock: the clock is nil"})
			return
		}
		b.r.clock = c
		_, b.r.systemClock = c.(systemClock)
	}
}

// WithDefaults sets registry-wide defaults for the policies given; repeated, later values win
// field by field.
func WithDefaults(cfgs ...PolicyConfig) Option {
	return func(b *registryBuilder) { b.addLayer(&b.r.defaults, "registry defaults", false, cfgs) }
}

// WithConfig registers a named configuration that policies start from when their Config names it.
// A named configuration cannot itself name another one.
func WithConfig(name string, cfgs ...PolicyConfig) Option {
	return func(b *registryBuilder) {
		b.addNamedLayer(b.r.configs, "config", "WithConfig: the configuration name is empty", name, cfgs)
	}
}

// WithInstance sets per-instance overrides for the instance id: they win over everything else.
func WithInstance(id string, cfgs ...PolicyConfig) Option {
	return func(b *registryBuilder) {
		b.addNamedLayer(b.r.instances, "instance", "WithInstance: the instance id is empty", id, cfgs)
	}
}

// addNamedLayer adds cfgs to the layer name of m (named configurations or instance overrides).
func (b *registryBuilder) addNamedLayer(m map[string]layer, kind, emptyMsg, name string, cfgs []PolicyConfig) {
	if name == "" {
		b.errs = append(b.errs, &ConfigError{Code: CodeInvalidSetting, Key: kind, Msg: emptyMsg})
		return
	}
	l := m[name]
	b.addLayer(&l, kind+" "+quote(name), kind == "config", cfgs)
	m[name] = l
}

// WithObserver registers an observer of the registry's events (limit changes, rejections).
func WithObserver(o Observer) Option {
	return func(b *registryBuilder) {
		if o == nil {
			b.errs = append(b.errs, &ConfigError{Code: CodeInvalidSetting, Key: "observer", Value: "nil", Msg: "WithObserver: the observer is nil"})
			return
		}
		b.r.observers = append(b.r.observers, o)
		b.r.observed = true
	}
}

// addLayer merges cfgs into l, checking each field; scope names the layer in messages, and named
// is true for named configurations, which cannot name another one.
func (b *registryBuilder) addLayer(l *layer, scope string, named bool, cfgs []PolicyConfig) {
	for _, c := range cfgs {
		switch c := c.(type) {
		case AdaptiveLimitConfig:
			if err := c.checkFields(scope); err != nil {
				b.errs = append(b.errs, err)
				continue
			}
			if c.Config != "" && named {
				b.errs = append(b.errs, &ConfigError{Code: CodeInvalidSetting, Instance: scopeID(scope), Policy: policyAdaptiveLimit, Key: "config", Value: c.Config,
					Msg: scope + ": adaptiveLimit.config = " + c.Config + " is invalid: a named configuration cannot name another"})
				continue
			}
			if l.adaptive == nil {
				l.adaptive = &AdaptiveLimitConfig{}
			}
			*l.adaptive = l.adaptive.merge(c)
		case *AdaptiveLimitConfig:
			if c == nil {
				b.errs = append(b.errs, nilConfigError(scope))
				continue
			}
			b.addLayer(l, scope, named, []PolicyConfig{*c})
		case nil:
			b.errs = append(b.errs, nilConfigError(scope))
		default:
			b.errs = append(b.errs, &ConfigError{Code: CodeInvalidSetting, Instance: scopeID(scope),
				Msg: fmt.Sprintf("%s: policy config %T is not supported", scope, c)})
		}
	}
}

func nilConfigError(scope string) error {
	return &ConfigError{Code: CodeInvalidSetting, Instance: scopeID(scope), Value: "nil", Msg: scope + ": a policy config is nil"}
}

// NewRegistry builds a registry from the options. Every invalid option is reported, joined, in
// one error whose ErrorCode is the first one's; no registry is returned then.
func NewRegistry(opts ...Option) (*Registry, error) {
	r := &Registry{
		clock:       systemClock{},
		systemClock: true,
		configs:     map[string]layer{},
		instances:   map[string]layer{},
		adaptive:    map[string]*adaptiveEntry{},
	}
	b := &registryBuilder{r: r}
	for _, o := range opts {
		if o == nil {
			b.errs = append(b.errs, &ConfigError{Code: CodeInvalidSetting, Msg: "NewRegistry: an option is nil"})
			continue
		}
		o(b)
	}
	// A named configuration named by defaults or an instance must exist.
	check := func(scope string, l layer) {
		if l.adaptive != nil && l.adaptive.Config != "" {
			if _, ok := r.configs[l.adaptive.Config]; !ok {
				b.errs = append(b.errs, unknownConfigError(scope, l.adaptive.Config))
			}
		}
	}
	check("registry defaults", r.defaults)
	for _, id := range sortedKeys(r.instances) {
		check("instance "+quote(id), r.instances[id])
	}
	if len(b.errs) > 0 {
		return nil, errors.Join(b.errs...)
	}
	return r, nil
}

func unknownConfigError(scope, name string) error {
	return &ConfigError{Code: CodeUnknownConfig, Instance: scopeID(scope), Policy: policyAdaptiveLimit, Key: "config", Value: name,
		Msg: fmt.Sprintf("%s: adaptiveLimit.config = %s is unknown: no WithConfig(%s, ...) was registered", scope, name, quote(name))}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Clock returns the registry's clock.
func (r *Registry) Clock() Clock { return r.clock }

// resolveAdaptiveLimit resolves the configuration of adaptive limit id given at a call site:
// built-in defaults < registry defaults < named configuration < call site < instance overrides.
func (r *Registry) resolveAdaptiveLimit(id string, site AdaptiveLimitConfig) (AdaptiveLimitConfig, error) {
	scope := "instance " + quote(id)
	if err := site.checkFields(scope); err != nil {
		return AdaptiveLimitConfig{}, err
	}
	var def, inst AdaptiveLimitConfig
	if r.defaults.adaptive != nil {
		def = *r.defaults.adaptive
	}
	if l, ok := r.instances[id]; ok && l.adaptive != nil {
		inst = *l.adaptive
	}
	name := firstNonEmpty(inst.Config, site.Config, def.Config)
	c := defaultAdaptiveLimit.merge(def)
	if name != "" {
		named, ok := r.configs[name]
		if !ok {
			return AdaptiveLimitConfig{}, unknownConfigError(scope, name)
		}
		if named.adaptive != nil {
			c = c.merge(*named.adaptive)
		}
	}
	c = c.merge(site).merge(inst)
	c.Config = name
	if err := c.validate(scope); err != nil {
		return AdaptiveLimitConfig{}, err
	}
	return c, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// adaptiveLimitFor returns the instance id with configuration cfg (resolved), creating it or
// sharing the existing one. It fails with R4C-REG-008 when id exists with another
// configuration. The caller holds r.mu.
func (r *Registry) adaptiveLimitLocked(id, owner string, cfg AdaptiveLimitConfig, create bool) (*AdaptiveLimitHandle, error) {
	if e, ok := r.adaptive[id]; ok {
		if d := e.h.cfg.diff(cfg); d != "" {
			return nil, conflictError(id, e.owner, owner, policyAdaptiveLimit, d)
		}
		return e.h, nil
	}
	if !create {
		return nil, nil
	}
	h := newAdaptiveLimit(r, id, cfg)
	r.adaptive[id] = &adaptiveEntry{h: h, owner: owner}
	return h, nil
}

func conflictError(id, first, second, policy, diff string) error {
	var who string
	if first != "" && second != "" && first != second {
		who = fmt.Sprintf("is shared by %s and %s with different %s settings", first, second, policy)
	} else {
		who = fmt.Sprintf("already exists with different %s settings", policy)
	}
	return &ConfigError{Code: CodeConflict, Instance: id, Policy: policy,
		Msg: fmt.Sprintf("instance %s %s: %s", quote(id), who, diff)}
}

// AdaptiveLimit returns the adaptive limit instance id. It exists once a pipeline or wrapper
// that uses it has been built; otherwise the error has code R4C-REG-009.
func (r *Registry) AdaptiveLimit(id string) (*AdaptiveLimitHandle, error) {
	r.mu.Lock()
	e, ok := r.adaptive[id]
	r.mu.Unlock()
	if !ok {
		return nil, unknownInstanceError(id, policyAdaptiveLimit)
	}
	return e.h, nil
}

func unknownInstanceError(id, policy string) error {
	return &ConfigError{Code: CodeUnknownInstance, Instance: id, Policy: policy,
		Msg: fmt.Sprintf("no %s instance %s in this registry: it exists once a pipeline or wrapper using it is built", policy, quote(id))}
}

// Snapshot is a reading of every instance of a registry.
type Snapshot struct {
	// AdaptiveLimits lists every adaptive limit, sorted by ID.
	AdaptiveLimits []AdaptiveLimitSnapshot
}

// Snapshot reads every instance. Metrics adapters call it when scraped.
func (r *Registry) Snapshot() Snapshot {
	r.mu.Lock()
	hs := make([]*AdaptiveLimitHandle, 0, len(r.adaptive))
	for _, id := range sortedKeys(r.adaptive) {
		hs = append(hs, r.adaptive[id].h)
	}
	r.mu.Unlock()
	s := Snapshot{AdaptiveLimits: make([]AdaptiveLimitSnapshot, len(hs))}
	for i, h := range hs {
		s.AdaptiveLimits[i] = h.Snapshot()
	}
	return s
}

func (r *Registry) publish(e Event) {
	for _, o := range r.observers {
		o.Observe(e)
	}
}
