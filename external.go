package r4c

import (
	"context"
	"errors"
	"fmt"
	"github.com/resilience4cata/r4c/internal/directive"
	"io/fs"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// External configuration: flat keys such as
//
//	defaults.adaptiveLimit.maxLimit=100
//	configs.backend.adaptiveLimit.algorithm=aimd
//	instances.orders.adaptiveLimit.rttTolerance=2
//
// read from a map (WithProperties), a .properties file (WithPropertiesFile), a JSON file
// (WithJSONFile) or the environment (WithEnvironment). Each key lands in the same layers as
// WithDefaults, WithConfig and WithInstance, in option order: when several options set one
// setting, the later one wins. docs/configuration.md lists every key.

// specAny is a policySpec of any config type, as external configuration sees it.
type specAny interface {
	policyName() string
	word() string    // the directive's policy: "adaptivelimit"
	mainKey() string // the setting of a directive's lone value
	keys() []string  // the setting keys, then "config"
	// apply parses text into setting key of the layer's config for this policy.
	apply(l layer, key, text string, named bool) (code, want string, ok bool)
	// setKeys returns the keys of the settings a config of this policy sets.
	setKeys(c PolicyConfig) []string
	// goConfig writes directive attributes as the policy's Go config literal.
	goConfig(attrs []directive.Attr) (directive.Config, error)
}

func (p *policySpec[C]) policyName() string { return p.name }
func (p *policySpec[C]) word() string       { return p.kind }
func (p *policySpec[C]) mainKey() string    { return p.main }

func (p *policySpec[C]) keys() []string {
	keys := make([]string, 0, len(p.settings)+1)
	for _, s := range p.settings {
		keys = append(keys, s.key)
	}
	return append(keys, "config")
}

func (p *policySpec[C]) apply(l layer, key, text string, named bool) (string, string, bool) {
	var c C
	text = strings.TrimSpace(text)
	if key == "config" {
		if named {
			return codeInvalidValue, "nothing: a named configuration cannot name another", false
		}
		if text == "" {
			return codeInvalidValue, "the name of a configuration", false
		}
		*p.named(&c) = text
	} else {
		s := p.setting(key)
		if code, want, ok := s.parse(&c, text); !ok {
			return code, want, false
		}
		if code, ok := s.check(&c); !ok {
			if code == codeInvalidSetting {
				code = codeInvalidValue // REG-001 is for Go code; external values are CFG-002
			}
			return code, s.valid, false
		}
	}
	prev, _ := l[p.name].(C)
	l[p.name] = any(p.merge(prev, c)).(PolicyConfig)
	return "", "", true
}

func (p *policySpec[C]) setting(key string) *setting[C] {
	for i := range p.settings {
		if p.settings[i].key == key {
			return &p.settings[i]
		}
	}
	return nil
}

// allSpecs lists every policy that has configuration keys, in documentation order.
var allSpecs = []specAny{&adaptiveLimitSpec, &bulkheadSpec, &timeoutSpec, &rateLimiterSpec, &retrySpec, &circuitBreakerSpec, &hedgeSpec}

func specNamed(name string) specAny {
	for _, s := range allSpecs {
		if s.policyName() == name {
			return s
		}
	}
	return nil
}

// The errors that error lists (dropOn, retryOn, abortOn, recordOn, ignoreOn) can name.
var (
	namedErrorsMu sync.RWMutex
	namedErrors   = map[string]error{
		"r4c.ErrLimitExceeded":     ErrLimitExceeded,
		"r4c.ErrBulkheadFull":      ErrBulkheadFull,
		"r4c.ErrCallTimeout":       ErrCallTimeout,
		"r4c.ErrRateLimited":       ErrRateLimited,
		"r4c.ErrCircuitOpen":       ErrCircuitOpen,
		"context.Canceled":         context.Canceled,
		"context.DeadlineExceeded": context.DeadlineExceeded,
		"os.ErrDeadlineExceeded":   os.ErrDeadlineExceeded,
		"net.ErrClosed":            net.ErrClosed,
		"fs.ErrNotExist":           fs.ErrNotExist,
	}
)

// RegisterError names err so that external configuration can list it, e.g.
//
//	r4c.RegisterError("billing.ErrOverloaded", billing.ErrOverloaded)
//	// configs.billing.adaptiveLimit.dropOn=r4c.ErrCallTimeout,billing.ErrOverloaded
//
// The library's sentinels (r4c.ErrCallTimeout, ...) and a few standard errors
// (context.Canceled, context.DeadlineExceeded, os.ErrDeadlineExceeded, net.ErrClosed,
// fs.ErrNotExist) are registered already. Register before building the registries that use the
// names, typically in an init function. It fails when the name is empty, has a comma or
// whitespace, or names another error already; it is safe for concurrent use.
func RegisterError(name string, err error) error {
	if name == "" || strings.ContainsAny(name, ", \t\r\n") || err == nil {
		return &ConfigError{Code: codeInvalidSetting, Key: "error", Value: name,
			Msg: fmt.Sprintf("RegisterError(%q): want a non-empty name without commas or spaces, and a non-nil error", name)}
	}
	namedErrorsMu.Lock()
	defer namedErrorsMu.Unlock()
	if prev, ok := namedErrors[name]; ok && !sameError(prev, err) {
		return &ConfigError{Code: codeInvalidSetting, Key: "error", Value: name,
			Msg: fmt.Sprintf("RegisterError(%q): the name is registered already, for another error", name)}
	}
	namedErrors[name] = err
	return nil
}

func lookupError(name string) (error, bool) {
	namedErrorsMu.RLock()
	defer namedErrorsMu.RUnlock()
	e, ok := namedErrors[name]
	return e, ok
}

// flatKey is a parsed configuration key: <kind>[.<name>].<policy>.<setting>.
type flatKey struct {
	kind    string // "defaults", "configs" or "instances"
	name    string // the named configuration or instance id ("" for defaults); may hold dots
	policy  specAny
	setting string
	sub     string // adaptiveLimit.partitions.<sub>: the partition the key sets a share of
}

// partitionsKey is the head of the keys of one partition's share:
// adaptiveLimit.partitions.<name>=0.3.
const partitionsKey = policyAdaptiveLimit + ".partitions."

// parseFlatKey parses a key. The name in the middle may contain dots, slashes, '#',
// parentheses and commas (generated instance ids do), so the policy and the setting are taken
// from the right. On failure it returns the nearest valid key, for the message.
func parseFlatKey(key string) (flatKey, string, bool) {
	// One partition's share: the key of the partitions setting, with the partition's name.
	if i := strings.LastIndex(key, "."+partitionsKey); i >= 0 {
		if sub := key[i+len(partitionsKey)+1:]; sub != "" && !strings.ContainsAny(sub, ".:,") {
			fk, near, ok := parseFlatKey(key[:i+len(partitionsKey)])
			fk.sub = sub
			return fk, near, ok
		}
	}
	kind, rest, _ := strings.Cut(key, ".")
	var fk flatKey
	switch kind {
	case "defaults", "configs", "instances":
		fk.kind = kind
	default:
		return fk, nearestKey(key), false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return fk, nearestKey(key), false
	}
	fk.setting = rest[i+1:]
	rest = rest[:i]
	j := strings.LastIndexByte(rest, '.')
	policy := rest[j+1:]
	if j >= 0 {
		fk.name = rest[:j]
	}
	if (kind == "defaults") != (j < 0) || (kind != "defaults" && fk.name == "") {
		return fk, nearestKey(key), false
	}
	if fk.policy = specNamed(policy); fk.policy == nil {
		return fk, nearestKey(key), false
	}
	for _, k := range fk.policy.keys() {
		if k == fk.setting {
			return fk, "", true
		}
	}
	return fk, nearestKey(key), false
}

// nearestKey returns the valid key closest to key (edit distance), keeping key's name part
// when it has one, so that the suggestion reads "did you mean ...".
func nearestKey(key string) string {
	kind, rest, _ := strings.Cut(key, ".")
	name := ""
	if kind != "defaults" {
		// Keep whatever stands between the kind and the last two segments as the name.
		if i := strings.LastIndexByte(rest, '.'); i > 0 {
			if j := strings.LastIndexByte(rest[:i], '.'); j > 0 {
				name = rest[:j] + "."
			}
		}
		if name == "" {
			name = "<name>."
		}
	}
	// The key and each prefix are lowered once, and each candidate is spelled into one reused
	// buffer: a key may be thousands of bytes (its name part, which every candidate repeats),
	// and lowering it again for each of the hundreds of candidates cost tens of megabytes.
	lkey := strings.ToLower(key)
	best, bestD := "", -1
	var buf []byte
	for _, k := range []string{"defaults", "configs", "instances"} {
		prefix := k + "."
		if k != "defaults" {
			prefix += name
		}
		lprefix := strings.ToLower(prefix)
		for _, s := range allSpecs {
			for _, setting := range s.keys() {
				buf = append(append(append(append(buf[:0], lprefix...), s.policyName()...), '.'), setting...)
				lowerASCII(buf[len(lprefix):])
				if d := editDistance(lkey, buf); bestD < 0 || d < bestD {
					best, bestD = prefix+s.policyName()+"."+setting, d
				}
			}
		}
	}
	return best
}

// lowerASCII lowers the ASCII letters of b in place (policy and setting names are ASCII).
func lowerASCII(b []byte) {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
}

// maxEditWork bounds the work of one editDistance (the product of the lengths it compares), so
// that a hostile key (an id of thousands of bytes from a file or the environment) costs time in
// proportion to its length, not its square.
const maxEditWork = 1 << 16

// editDistance is the Levenshtein distance between a and b. A prefix and a suffix they share
// do not change it and are dropped first (a candidate key repeats the key's own instance id);
// what remains is compared only when small enough (maxEditWork), else the distance is taken
// as the longer length, the most it can be.
func editDistance[A, B ~string | ~[]byte](a A, b B) int {
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	if (len(a)+1)*(len(b)+1) > maxEditWork {
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// source names where a property comes from, for messages: "app.properties:12",
// "WithProperties", "environment variable R4C_DEFAULTS_BULKHEAD_MAXCONCURRENT".
type source func(p property) string

// applyProperties applies props, in order, to the builder's layers.
func (b *registryBuilder) applyProperties(props []property, where source) {
	for _, p := range props {
		b.applyProperty(p.key, p.value, where(p))
	}
}

func (b *registryBuilder) applyProperty(key, value, where string) {
	fk, nearest, ok := parseFlatKey(key)
	if !ok {
		b.errs = append(b.errs, &ConfigError{Code: codeUnknownKey, Key: key,
			Msg: fmt.Sprintf("%s: unknown key %q: did you mean %q?", where, key, nearest)})
		return
	}
	var l layer
	scope := defaultsScope
	switch fk.kind {
	case "defaults":
		l = b.r.defaults
	case "configs":
		l = b.layerOf(b.r.configs, fk.name)
		scope = "config " + quote(fk.name)
	case "instances":
		scope = "instance " + quote(fk.name)
		l = b.layerOf(b.r.instances, fk.name)
		b.r.instanceKeys = append(b.r.instanceKeys, instanceKey{id: fk.name, policy: fk.policy.policyName(), key: key, where: where})
	}
	text := value
	if fk.sub != "" {
		text = partitionEntry(l, fk.sub, value) // the layer's partitions, this one added
	}
	if code, want, ok := fk.policy.apply(l, fk.setting, text, fk.kind == "configs"); !ok {
		b.errs = append(b.errs, &ConfigError{Code: code, Instance: fk.name, Policy: fk.policy.policyName(), Key: key, Value: value,
			Msg: fmt.Sprintf("%s: %s = %s is invalid: want %s", where, key, value, want)})
		return
	}
	b.r.setSource(scope, fk.policy.policyName(), fk.setting, where)
}

func (b *registryBuilder) layerOf(m map[string]layer, name string) layer {
	l := m[name]
	if l == nil {
		l = layer{}
		m[name] = l
	}
	return l
}

// WithProperties applies flat configuration keys (docs/configuration.md), e.g.
// "defaults.adaptiveLimit.maxLimit": "100". Keys apply in sorted order; bad keys and values fail
// NewRegistry with R4C-CFG-001 (unknown key, with the nearest valid one), R4C-CFG-002 (invalid
// value), R4C-ATR-001 (bad duration), R4C-ATR-003 (a limit below 1) or R4C-ATR-009 (window out
// of range). Like every option, a later one wins over an earlier one for the same setting.
func WithProperties(props map[string]string) Option {
	return func(b *registryBuilder) {
		keys := sortedKeys(props)
		list := make([]property, len(keys))
		for i, k := range keys {
			list[i] = property{key: k, value: props[k]}
		}
		b.applyProperties(list, func(p property) string { return "WithProperties" })
	}
}

// WithPropertiesFile applies the flat keys of a .properties file (the java.util.Properties
// syntax: '#' and '!' comments, '=' or ':' or whitespace between key and value, backslash
// escapes and line continuations). Later lines win over earlier ones. Errors name the file and
// line.
func WithPropertiesFile(path string) Option {
	return func(b *registryBuilder) {
		data, err := os.ReadFile(path)
		if err != nil {
			b.errs = append(b.errs, fileError(path, err))
			return
		}
		props, err := parseProperties(path, data)
		if err != nil {
			b.errs = append(b.errs, &ConfigError{Code: codeInvalidValue, Msg: err.Error()})
			return
		}
		b.applyProperties(props, func(p property) string { return fmt.Sprintf("%s:%d", path, p.line) })
	}
}

// WithJSONFile applies the keys of a JSON file whose nested objects flatten to the flat keys:
// {"defaults": {"adaptiveLimit": {"maxLimit": 100}}}. Error lists may be arrays of names.
// Errors name the file and line.
func WithJSONFile(path string) Option {
	return func(b *registryBuilder) {
		data, err := os.ReadFile(path)
		if err != nil {
			b.errs = append(b.errs, fileError(path, err))
			return
		}
		props, err := flattenJSON(path, data)
		if err != nil {
			b.errs = append(b.errs, &ConfigError{Code: codeInvalidValue, Msg: err.Error()})
			return
		}
		b.applyProperties(props, func(p property) string { return fmt.Sprintf("%s:%d", path, p.line) })
	}
}

func fileError(path string, err error) error {
	return &ConfigError{Code: codeInvalidValue, Value: path, Msg: fmt.Sprintf("cannot read configuration file %s: %v", path, errors.Unwrap(err))}
}

// envPrefix starts the names of the environment variables WithEnvironment reads: R4C_.
const envPrefix = "R4C_"

// WithEnvironment applies the environment variables named R4C_ + a flat key with '_' for
// '.', the kind, policy and setting in any case, the name in the middle verbatim:
//
//	R4C_DEFAULTS_ADAPTIVELIMIT_MAXLIMIT=100         defaults.adaptiveLimit.maxLimit=100
//	R4C_CONFIGS_backend_ADAPTIVELIMIT_ALGORITHM=aimd configs.backend.adaptiveLimit.algorithm=aimd
//	R4C_INSTANCES_orders_BULKHEAD_MAXCONCURRENT=5    instances.orders.bulkhead.maxConcurrent=5
//
// A name may itself contain '_' (the kind is the first part, the policy and setting the last
// two). The variables are read when NewRegistry runs, in sorted order; errors name the variable.
func WithEnvironment() Option {
	return func(b *registryBuilder) {
		env := os.Environ()
		sort.Strings(env)
		for _, kv := range env {
			name, value, _ := strings.Cut(kv, "=")
			if !strings.HasPrefix(name, envPrefix) {
				continue
			}
			b.applyProperty(envKey(strings.TrimPrefix(name, envPrefix)), value, "environment variable "+name)
		}
	}
}

// envKey maps the rest of an environment variable name to a flat key, matching the kind, the
// policy and the setting without regard to case, and decoding the escapes of the name
// (envUnescape). A name it cannot map is returned with '_'
// turned into '.', for the unknown-key message.
func envKey(rest string) string {
	parts := strings.Split(rest, "_")
	if len(parts) < 3 {
		return strings.ReplaceAll(rest, "_", ".")
	}
	kind := strings.ToLower(parts[0])
	policy, setting := parts[len(parts)-2], parts[len(parts)-1]
	name := envUnescape(strings.Join(parts[1:len(parts)-2], "_"))
	for _, s := range allSpecs {
		if strings.EqualFold(s.policyName(), policy) {
			policy = s.policyName()
			for _, k := range s.keys() {
				if strings.EqualFold(k, setting) {
					setting = k
				}
			}
		}
	}
	key := kind
	if name != "" {
		key += "." + name
	}
	return key + "." + policy + "." + setting
}

// envUnescape decodes the escapes of an instance id in an environment variable name, which may
// hold only letters, digits and '_' where generated ids hold '.', '/', '#', '(', ',' and more:
// "__" and two hexadecimal digits stand for that byte ("__2E" is '.', "__23" is '#', "__5F"
// is '_'). Anything else is kept as it is.
func envUnescape(s string) string {
	if !strings.Contains(s, "__") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i+3 < len(s) && s[i] == '_' && s[i+1] == '_' {
			if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// EnvName returns the name of the environment variable that sets key, a flat key such as
// "instances.shop.OrderClient#Place.retry.maxAttempts", for WithEnvironment: the bytes of the
// instance id that a variable name cannot hold are escaped, and so is every '_' next to
// another ("R4C_INSTANCES_shop__2EOrderClient__23Place_RETRY_MAXATTEMPTS"). It returns "" for
// a key that is not valid.
func EnvName(key string) string {
	fk, _, ok := parseFlatKey(key)
	if !ok {
		return ""
	}
	var b strings.Builder
	b.WriteString(envPrefix + strings.ToUpper(fk.kind))
	if fk.name != "" {
		b.WriteString("_")
		for i := 0; i < len(fk.name); i++ {
			c := fk.name[i]
			lone := c == '_' && (i == 0 || fk.name[i-1] != '_') && (i+1 == len(fk.name) || fk.name[i+1] != '_')
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || lone {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "__%02X", c)
			}
		}
	}
	b.WriteString("_" + strings.ToUpper(fk.policy.policyName()) + "_" + strings.ToUpper(fk.setting))
	return b.String()
}
