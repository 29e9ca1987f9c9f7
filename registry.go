package r4c

import (
	"errors"
	"fmt"
	"log"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry holds the policy instances of an application, the configuration they resolve from
// (built-in defaults < WithDefaults < the named configuration < the call site < WithInstance),
// the clock they measure with and the observers of their events. Instances are created when a
// pipeline is built (or a generated wrapper constructed) and shared by id. A Registry is safe for
// concurrent use; the limits are per registry.
type Registry struct {
	clock          Clock
	systemClock    bool
	instanceKeys   []instanceKey     // instance-level external keys, for Check
	sources        map[string]string // where each setting of each layer came from, for messages
	observers      []func(Event)
	observed       bool
	observerPanics atomic.Int64

	// Configuration layers, fixed at construction: partial configs by policy name.
	defaults  layer
	configs   map[string]layer // named configurations
	instances map[string]layer // per-instance overrides

	mu   sync.Mutex
	live map[string]map[string]*instance // policy name -> id -> instance
}

// layer is one level of configuration: at most one (partial) config per policy name.
type layer map[string]PolicyConfig

// instance is a policy instance of the registry.
type instance struct {
	handle any        // *AdaptiveLimitHandle, *BulkheadHandle, ...
	cfg    any        // its resolved configuration
	owner  string     // who created it, for R4C-REG-008 messages
	snap   func() any // reads its snapshot
}

// addToLayer merges c, checked field by field, into l. named is true for named configurations,
// which cannot name another one.
func addToLayer[C any](spec *policySpec[C], c C, l layer, scope string, named bool) error {
	if err := spec.checkFields(c, scope); err != nil {
		return err
	}
	if n := *spec.named(&c); n != "" && named {
		return &ConfigError{Code: codeInvalidSetting, Instance: scopeID(scope), Policy: spec.name, Key: "config", Value: n,
			Msg: fmt.Sprintf("%s: %s.config = %s is invalid: a named configuration cannot name another", scope, spec.name, n)}
	}
	prev, _ := l[spec.name].(C)
	l[spec.name] = any(spec.merge(prev, c)).(PolicyConfig)
	return nil
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
			b.errs = append(b.errs, &ConfigError{Code: codeInvalidSetting, Key: "clock", Value: "nil", Msg: "WithClock: the clock is nil"})
			return
		}
		b.r.clock = c
		_, b.r.systemClock = c.(systemClock)
	}
}

// WithDefaults sets registry-wide defaults for the policies given; repeated, later values win
// setting by setting.
func WithDefaults(cfgs ...PolicyConfig) Option {
	return func(b *registryBuilder) { b.addLayer(b.r.defaults, defaultsScope, "WithDefaults", false, cfgs) }
}

// defaultsScope names the registry's defaults layer in messages.
const defaultsScope = "registry defaults"

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
		b.errs = append(b.errs, &ConfigError{Code: codeInvalidSetting, Key: kind, Msg: emptyMsg})
		return
	}
	l := m[name]
	if l == nil {
		l = layer{}
		m[name] = l
	}
	source := "WithInstance(" + quote(name) + ")"
	if kind == "config" {
		source = "WithConfig(" + quote(name) + ")"
	}
	b.addLayer(l, kind+" "+quote(name), source, kind == "config", cfgs)
}

// WithObserver registers fn as an observer of the registry's events (limit changes,
// rejections, timeouts, retries, hedges, circuit breaker transitions; see Event for when and
// where it is called, and what it costs). A nil fn is an error of NewRegistry. Observers run synchronously; a panic in one is recovered and never reaches the
// policy (its state stays whole): the first is logged, all are counted in
// Snapshot().ObserverPanics.
func WithObserver(fn func(Event)) Option {
	return func(b *registryBuilder) {
		if fn == nil {
			b.errs = append(b.errs, &ConfigError{Code: codeInvalidSetting, Key: "observer", Value: "nil", Msg: "WithObserver: the observer is nil"})
			return
		}
		b.r.observers = append(b.r.observers, fn)
		b.r.observed = true
	}
}

// addLayer merges cfgs into l, checking each one.
func (b *registryBuilder) addLayer(l layer, scope, source string, named bool, cfgs []PolicyConfig) {
	for _, c := range cfgs {
		if isNil(c) {
			b.errs = append(b.errs, nilConfigError(scope))
			continue
		}
		if _, ok := c.(fallbackConfig); ok {
			b.errs = append(b.errs, &ConfigError{Code: codeBadFallback, Instance: scopeID(scope), Policy: "fallback",
				Msg: scope + ": a fallback is a function of one pipeline: give it to NewPipeline, not to the registry"})
			continue
		}
		if err := c.addTo(l, scope, named); err != nil {
			b.errs = append(b.errs, err)
			continue
		}
		for _, sp := range allSpecs {
			if sp.policyName() == c.policyName() {
				for _, k := range sp.setKeys(c) {
					b.r.setSource(scope, c.policyName(), k, source)
				}
			}
		}
	}
}

// setSource records where the value of a setting of a layer (scope) last came from.
func (r *Registry) setSource(scope, policy, key, source string) {
	if r.sources == nil {
		r.sources = map[string]string{}
	}
	r.sources[scope+"\x00"+policy+"\x00"+key] = source
}

// source returns where the value of a setting of a layer came from ("" when unknown).
func (r *Registry) source(scope, policy, key string) string {
	return r.sources[scope+"\x00"+policy+"\x00"+key]
}

// isNil reports whether c is nil or a nil pointer to a config.
func isNil(c any) bool {
	if c == nil {
		return true
	}
	switch v := reflect.ValueOf(c); v.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Slice, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}

func nilConfigError(scope string) error {
	return &ConfigError{Code: codeInvalidSetting, Instance: scopeID(scope), Value: "nil", Msg: scope + ": a policy config is nil"}
}

// NewRegistry builds a registry from the options. Every invalid option is reported, joined, in
// one error whose ErrorCode is the first one's; no registry is returned then.
func NewRegistry(opts ...Option) (*Registry, error) {
	r := &Registry{
		clock:       systemClock{},
		systemClock: true,
		defaults:    layer{},
		configs:     map[string]layer{},
		instances:   map[string]layer{},
		live:        map[string]map[string]*instance{},
	}
	b := &registryBuilder{r: r}
	for _, o := range opts {
		if isNil(o) {
			b.errs = append(b.errs, &ConfigError{Code: codeInvalidSetting, Msg: "NewRegistry: an option is nil"})
			continue
		}
		o(b)
	}
	// A named configuration named by defaults or an instance must exist.
	check := func(scope string, l layer) {
		for _, policy := range sortedKeys(l) {
			if name := l[policy].namedConfig(); name != "" {
				if _, ok := r.configs[name]; !ok {
					b.errs = append(b.errs, unknownConfigError(scope, policy, name))
				}
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

func unknownConfigError(scope, policy, name string) error {
	return &ConfigError{Code: codeUnknownConfig, Instance: scopeID(scope), Policy: policy, Key: "config", Value: name,
		Msg: fmt.Sprintf("%s: %s.config = %s is unknown: no WithConfig(%s, ...) was registered", scope, policy, name, quote(name))}
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
func (r *Registry) Clock() Clock {
	if r == nil {
		return SystemClock() // a nil registry has no clock of its own: the default
	}
	return r.clock
}

// resolve resolves the configuration of policy instance id given site, the config of the call
// site: built-in defaults < registry defaults < named configuration < call site < instance
// overrides. The named configuration is the one the instance overrides name, else the call
// site, else the registry defaults.
func resolve[C any](r *Registry, spec *policySpec[C], id string, site C) (C, error) {
	var zero C
	scope := "instance " + quote(id)
	if err := spec.checkFields(site, scope); err != nil {
		return zero, err
	}
	def, _ := r.defaults[spec.name].(C)
	inst, _ := r.instances[id][spec.name].(C)
	name := firstNonEmpty(*spec.named(&inst), *spec.named(&site), *spec.named(&def))
	c := spec.merge(spec.defaults, def)
	if name != "" {
		named, ok := r.configs[name]
		if !ok {
			return zero, unknownConfigError(scope, spec.name, name)
		}
		if nc, ok := named[spec.name].(C); ok {
			c = spec.merge(c, nc)
		}
	}
	c = spec.resolved(spec.merge(spec.merge(c, site), inst))
	*spec.named(&c) = name
	from := func(key string) string {
		switch {
		case spec.sets(inst, key):
			return r.source(scope, spec.name, key)
		case spec.sets(site, key):
			return "the call site"
		case name != "" && spec.sets(namedOf(r, spec, name), key):
			return r.source("config "+quote(name), spec.name, key)
		case spec.sets(def, key):
			return r.source(defaultsScope, spec.name, key)
		}
		return "built-in default"
	}
	if err := spec.validate(c, scope, from); err != nil {
		return zero, err
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

// claim is one policy instance a pipeline or wrapper is about to use: check, then create or
// share. Both run under r.mu, every check before any create, so nothing is half-registered.
type claim struct {
	check  func() error
	create func()
}

// claimInstance prepares the claim of instance id of spec's policy with resolved configuration
// cfg; *h receives the handle, made by mk when the instance is new.
func claimInstance[C any, H any](r *Registry, spec *policySpec[C], id, owner string, cfg C, h *H, mk func(C) H, snap func(H) any) claim {
	return claim{
		check: func() error {
			if e, ok := r.live[spec.name][id]; ok {
				if d := spec.diff(e.cfg.(C), cfg); d != "" {
					return conflictError(id, e.owner, owner, spec.name, d)
				}
			}
			return nil
		},
		create: func() {
			if e, ok := r.live[spec.name][id]; ok {
				*h = e.handle.(H)
				return
			}
			*h = mk(cfg)
			m := r.live[spec.name]
			if m == nil {
				m = map[string]*instance{}
				r.live[spec.name] = m
			}
			hv := *h
			m[id] = &instance{handle: hv, cfg: cfg, owner: owner, snap: func() any { return snap(hv) }}
		},
	}
}

// register runs claims: all checks, then all creates, under the registry's lock.
func (r *Registry) register(claims []claim) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range claims {
		if err := c.check(); err != nil {
			return err
		}
	}
	for _, c := range claims {
		c.create()
	}
	return nil
}

func conflictError(id, first, second, policy, diff string) error {
	var who string
	if first != "" && second != "" && first != second {
		who = fmt.Sprintf("is shared by %s and %s with different %s settings", first, second, policy)
	} else {
		who = fmt.Sprintf("already exists with different %s settings", policy)
	}
	return &ConfigError{Code: codeConflict, Instance: id, Policy: policy,
		Msg: fmt.Sprintf("instance %s %s: %s", quote(id), who, diff)}
}

// lookup returns the handle of instance id of a policy, or R4C-REG-009.
func lookup[H any](r *Registry, policy, id string) (H, error) {
	if r == nil {
		var zero H
		return zero, errNilRegistry
	}
	r.mu.Lock()
	e, ok := r.live[policy][id]
	r.mu.Unlock()
	if !ok {
		var zero H
		return zero, &ConfigError{Code: codeUnknownInstance, Instance: id, Policy: policy,
			Msg: fmt.Sprintf("no %s instance %s in this registry: it exists once a pipeline or wrapper using it is built", policy, quote(id))}
	}
	return e.handle.(H), nil
}

// snapshots reads the snapshots of every instance of a policy, sorted by id.
func snapshots[S any](r *Registry, policy string) []S {
	r.mu.Lock()
	m := r.live[policy]
	snaps := make([]func() any, 0, len(m))
	for _, id := range sortedKeys(m) {
		snaps = append(snaps, m[id].snap)
	}
	r.mu.Unlock()
	out := make([]S, len(snaps))
	for i, s := range snaps {
		out[i] = s().(S)
	}
	return out
}

// Build creates the instances of the policies cfgs describe under id, or joins those that exist,
// as NewPipeline does (same resolution, same sharing, R4C-REG-008 when an existing instance was
// resolved differently), but without a pipeline: afterwards reg.AdaptiveLimit(id),
// reg.CircuitBreaker(id) and the others return them. Use it where calls do not go through a
// pipeline: an adaptive limit used with permits (Acquire) in a middleware, or an instance an
// integration reads, or one a dashboard shows before the first call. A Fallback needs a pipeline
// (it is typed by the pipeline's result): Build refuses it with R4C-REG-011.
func (r *Registry) Build(id string, cfgs ...PolicyConfig) error {
	if r == nil {
		return &ConfigError{Code: codeNilRegistry, Instance: id, Msg: fmt.Sprintf("Build(%s): the registry is nil: make one with NewRegistry", quote(id))}
	}
	if id == "" {
		return &ConfigError{Code: codeInvalidSetting, Key: "id", Msg: "Build: the instance id is empty"}
	}
	_, err := r.resolvePolicies(id, pipelineOwner(id), cfgs, func(fallbackConfig) error {
		return &ConfigError{Code: codeBadFallback, Instance: id, Policy: "fallback",
			Msg: fmt.Sprintf("Build(%s): a fallback needs a pipeline (it returns the pipeline's result type): use NewPipeline", quote(id))}
	})
	return err
}

// AdaptiveLimit returns the adaptive limit instance id. It exists once a pipeline or wrapper
// that uses it has been built; otherwise the error has code R4C-REG-009.
func (r *Registry) AdaptiveLimit(id string) (*AdaptiveLimitHandle, error) {
	return lookup[*AdaptiveLimitHandle](r, policyAdaptiveLimit, id)
}

// Snapshot is a reading of every instance of a registry, each list sorted by ID.
type Snapshot struct {
	AdaptiveLimits  []AdaptiveLimitSnapshot
	Bulkheads       []BulkheadSnapshot
	Timeouts        []TimeoutSnapshot
	RateLimiters    []RateLimiterSnapshot
	Retries         []RetrySnapshot
	CircuitBreakers []CircuitBreakerSnapshot
	Hedges          []HedgeSnapshot
	// ObserverPanics counts the panics of observers, recovered (see WithObserver).
	ObserverPanics int64
}

// Snapshot reads every instance. Metrics adapters call it when scraped.
func (r *Registry) Snapshot() Snapshot {
	if r == nil {
		return Snapshot{} // nothing to read
	}
	return Snapshot{
		AdaptiveLimits:  snapshots[AdaptiveLimitSnapshot](r, policyAdaptiveLimit),
		Bulkheads:       snapshots[BulkheadSnapshot](r, policyBulkhead),
		Timeouts:        snapshots[TimeoutSnapshot](r, policyTimeout),
		RateLimiters:    snapshots[RateLimiterSnapshot](r, policyRateLimiter),
		Retries:         snapshots[RetrySnapshot](r, policyRetry),
		CircuitBreakers: snapshots[CircuitBreakerSnapshot](r, policyCircuitBreaker),
		Hedges:          snapshots[HedgeSnapshot](r, policyHedge),
		ObserverPanics:  r.observerPanics.Load(),
	}
}

func (r *Registry) publish(e Event) {
	for _, o := range r.observers {
		r.observe(o, e)
	}
}

// observe hands e to o. A panic in an observer never reaches the policy that published the event
// (whose state must stay whole): it is recovered, counted (Snapshot.ObserverPanics), and the
// first one of the registry is logged.
func (r *Registry) observe(o func(Event), e Event) {
	defer func() {
		if p := recover(); p != nil {
			if r.observerPanics.Add(1) == 1 {
				log.Printf("r4c: an observer panicked on %v of %s %q: %v (recovered; later panics are counted in Snapshot().ObserverPanics, not logged)",
					e.Type, e.Kind, e.Instance, p)
			}
		}
	}()
	o(e)
}

// instanceKey is an instance-level key of external configuration, and where it came from.
type instanceKey struct {
	id, policy, key, where string
}

// Check reports the instance-level keys of external configuration that matched nothing: an id
// with no instance (a typo, or a pipeline never built), or a policy that instance does not have
// (external configuration tunes a pipeline's policies; it never adds one). Call it once the
// application has built its pipelines and wrappers. It returns nil, or one error with code
// R4C-CFG-003 that lists every such key with its source (file and line, or variable) and, for an
// unknown id, the nearest existing one.
func (r *Registry) Check() error {
	if r == nil {
		return errNilRegistry
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := map[string][]string{} // instance id -> its policies
	for policy, m := range r.live {
		for id := range m {
			ids[id] = append(ids[id], policy)
		}
	}
	var problems []string
	for _, k := range r.instanceKeys {
		if _, ok := r.live[k.policy][k.id]; ok {
			continue
		}
		if have, ok := ids[k.id]; ok {
			sort.Strings(have)
			problems = append(problems, fmt.Sprintf("%s: %s: instance %s has no %s (it has %s): external configuration does not add policies",
				k.where, k.key, quote(k.id), k.policy, strings.Join(have, ", ")))
			continue
		}
		msg := fmt.Sprintf("%s: %s: no instance %s", k.where, k.key, quote(k.id))
		if near := nearest(k.id, sortedKeys(ids)); near != "" {
			msg += fmt.Sprintf(": did you mean %s?", quote(near))
		}
		problems = append(problems, msg)
	}
	if len(problems) == 0 {
		return nil
	}
	return &ConfigError{Code: codeUnmatchedKey,
		Msg: fmt.Sprintf("%d external key(s) matched nothing: %s", len(problems), strings.Join(problems, "; "))}
}

// namedOf returns the named configuration name's config of spec's policy (empty if none).
func namedOf[C any](r *Registry, spec *policySpec[C], name string) C {
	c, _ := r.configs[name][spec.name].(C)
	return c
}
