package r4c

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// policySpec describes one policy's configuration type C: its names, its settings table and its
// built-in defaults. It is the single place from which merging layers, validation, conflict
// messages, the generated configuration reference (and the flat configuration keys) all come.
type policySpec[C any] struct {
	name     string // as in configuration keys: "adaptiveLimit"
	kind     string // as in metric labels and directives (//r4c:adaptivelimit): "adaptivelimit"
	main     string // the setting a directive's lone value sets: //r4c:timeout 2s
	goType   string // "r4c.AdaptiveLimitConfig", for the reference
	settings []setting[C]
	// defaults holds the built-in defaults: every setting set but those with a defaultDoc, whose
	// default depends on other settings (complete fills them in) or is "unset".
	defaults C
	named    func(*C) *string // the Config field: the named configuration to start from
	// complete fills in, once every layer is merged, the settings whose built-in default depends
	// on other settings (nil when there are none).
	complete func(c *C)
	// relate checks the relations between the settings of a resolved configuration (nil when
	// there are none).
	relate func(c *C, scope string, from func(key string) string) error
}

// setting describes one key of a policy's configuration.
type setting[C any] struct {
	key   string // as in configuration keys: "maxLimit"
	valid string // what is valid, in words
	doc   string // one sentence for the configuration reference
	// format returns the field as configuration text ("" when unset).
	format func(c *C) string
	isSet  func(c *C) bool
	copy   func(dst, src *C)
	// check validates a set value on its own; it returns the error code and false when invalid.
	check func(c *C) (code string, ok bool)
	// equal compares the field of two configurations; nil compares their formats.
	equal func(a, b *C) bool
	// parse sets the field from configuration text (external configuration). It returns the
	// error code and what was expected when the text does not parse; the value is then checked
	// like any other. A text meaning zero sets the field's zero sentinel where it has one.
	parse func(c *C, text string) (code, want string, ok bool)
	// example is a valid value other than the default, as configuration text (docs and tests).
	example string
	// defaultDoc describes the built-in default of a setting that defaults does not set, because
	// it depends on other settings or means "unset" ("0.2 (1.0 under vegas)"); "" for the others.
	defaultDoc string
}

func (s setting[C]) defaultIs(doc string) setting[C] {
	s.defaultDoc = doc
	return s
}

func (s setting[C]) eg(example string) setting[C] {
	s.example = example
	return s
}

func (s setting[C]) describe(doc string) setting[C] {
	s.doc = doc
	return s
}

// merge returns base with every setting that is set in over replacing base's.
func (p *policySpec[C]) merge(base, over C) C {
	for _, s := range p.settings {
		if s.isSet(&over) {
			s.copy(&base, &over)
		}
	}
	if n := *p.named(&over); n != "" {
		*p.named(&base) = n
	}
	return base
}

// resolved completes c, merged from every layer over the built-in defaults, with the defaults
// that depend on other settings.
func (p *policySpec[C]) resolved(c C) C {
	if p.complete != nil {
		p.complete(&c)
	}
	return c
}

// checkFields validates every setting set in c, on its own. scope names where c comes from
// (`instance "orders"`, `config "backend"`, `registry defaults`).
func (p *policySpec[C]) checkFields(c C, scope string) error {
	var errs []error
	for _, s := range p.settings {
		if !s.isSet(&c) {
			continue
		}
		if code, ok := s.check(&c); !ok {
			errs = append(errs, settingError(code, scope, p.name, s.key, s.format(&c), s.valid))
		}
	}
	return errors.Join(errs...)
}

// validate checks a resolved configuration: every setting, then the relations between them.
// from names where a setting's value came from, for messages ("the call site",
// "app.properties:3"); nil when nothing is known of it.
func (p *policySpec[C]) validate(c C, scope string, from func(key string) string) error {
	if err := p.checkFields(c, scope); err != nil {
		return err
	}
	if p.relate != nil {
		if from == nil {
			from = func(string) string { return "" }
		}
		return p.relate(&c, scope, from)
	}
	return nil
}

// setKeys returns the keys of the settings c sets (c is this policy's config).
func (p *policySpec[C]) setKeys(pc PolicyConfig) []string {
	c, ok := pc.(C)
	if !ok {
		return nil
	}
	var keys []string
	for _, s := range p.settings {
		if s.isSet(&c) {
			keys = append(keys, s.key)
		}
	}
	return keys
}

// sets reports whether c sets the setting key.
func (p *policySpec[C]) sets(c C, key string) bool {
	for _, s := range p.settings {
		if s.key == key {
			return s.isSet(&c)
		}
	}
	return false
}

// diff lists the settings on which two resolved configurations differ, as
// "maxLimit 100 vs 50"; "" when they are the same.
// text writes c as its configuration keys, as configuration.md documents them: "maxLimit=100
// window=1s ..." (settings not set are left out; sentinels such as NoWait read as what they
// mean, 0s).
func (p *policySpec[C]) text(c C) string {
	var b strings.Builder
	b.WriteString(p.name)
	b.WriteString("{")
	first := true
	for _, s := range p.settings {
		v := s.format(&c)
		if v == "" {
			continue
		}
		if !first {
			b.WriteString(" ")
		}
		first = false
		b.WriteString(s.key + "=" + v)
	}
	if n := *p.named(&c); n != "" {
		b.WriteString(" config=" + n)
	}
	b.WriteString("}")
	return b.String()
}

func (p *policySpec[C]) diff(a, b C) string {
	var parts []string
	for _, s := range p.settings {
		fa, fb := s.format(&a), s.format(&b)
		same := fa == fb
		if s.equal != nil {
			same = s.equal(&a, &b)
		}
		if !same {
			parts = append(parts, s.key+" "+fa+" vs "+fb)
		}
	}
	if na, nb := *p.named(&a), *p.named(&b); na != nb {
		parts = append(parts, fmt.Sprintf("config %q vs %q", na, nb))
	}
	return strings.Join(parts, ", ")
}

// The constructors of settings, by type. f returns the field of a config.

func intSetting[C any](key, valid string, f func(*C) *int, ok func(int) bool, code string) setting[C] {
	return setting[C]{
		parse: func(c *C, text string) (string, string, bool) {
			v, err := strconv.Atoi(text)
			*f(c) = v
			return codeInvalidValue, "an integer", err == nil
		},
		key: key, valid: valid,
		format: func(c *C) string {
			if *f(c) == 0 {
				return ""
			}
			return strconv.Itoa(*f(c))
		},
		isSet: func(c *C) bool { return *f(c) != 0 },
		copy:  func(d, s *C) { *f(d) = *f(s) },
		check: func(c *C) (string, bool) { return code, ok(*f(c)) },
	}
}

func floatSetting[C any](key, valid string, f func(*C) *float64, ok func(float64) bool) setting[C] {
	return setting[C]{
		parse: func(c *C, text string) (string, string, bool) {
			v, err := strconv.ParseFloat(text, 64)
			*f(c) = v
			return codeInvalidValue, "a number", err == nil
		},
		key: key, valid: valid,
		format: func(c *C) string {
			if *f(c) == 0 {
				return ""
			}
			return strconv.FormatFloat(*f(c), 'g', -1, 64)
		},
		isSet: func(c *C) bool { return *f(c) != 0 },
		copy:  func(d, s *C) { *f(d) = *f(s) },
		check: func(c *C) (string, bool) { v := *f(c); return codeInvalidSetting, ok(v) && !math.IsNaN(v) },
	}
}

func durationSetting[C any](key, valid string, f func(*C) *time.Duration, ok func(time.Duration) bool, code string) setting[C] {
	return setting[C]{
		parse: func(c *C, text string) (string, string, bool) {
			v, err := time.ParseDuration(text)
			*f(c) = v
			return codeBadDuration, "a duration in Go syntax, such as 500ms, 2s or 1m30s", err == nil
		},
		key: key, valid: valid,
		format: func(c *C) string {
			if *f(c) == 0 {
				return ""
			}
			return f(c).String()
		},
		isSet: func(c *C) bool { return *f(c) != 0 },
		copy:  func(d, s *C) { *f(d) = *f(s) },
		check: func(c *C) (string, bool) { return code, ok(*f(c)) },
	}
}

func errorsSetting[C any](key, valid string, f func(*C) *[]error) setting[C] {
	return setting[C]{
		parse: func(c *C, text string) (string, string, bool) {
			errs := []error{}
			for _, name := range strings.Split(text, ",") {
				if name = strings.TrimSpace(name); name == "" {
					continue
				}
				e, ok := lookupError(name)
				if !ok {
					return codeInvalidValue, "error names registered with r4c.RegisterError (" + name + " is not)", false
				}
				errs = append(errs, e)
			}
			*f(c) = errs
			return "", "", true
		},
		key: key, valid: valid,
		format: func(c *C) string { return formatErrors(*f(c)) },
		isSet:  func(c *C) bool { return *f(c) != nil },
		copy:   func(d, s *C) { *f(d) = append([]error{}, *f(s)...) },
		check: func(c *C) (string, bool) {
			for _, e := range *f(c) {
				if e == nil {
					return codeInvalidSetting, false
				}
			}
			return "", true
		},
		equal: func(a, b *C) bool { return sameErrors(*f(a), *f(b)) },
	}
}

// toggleSetting is the "enabled" setting of a policy.
func toggleSetting[C any](f func(*C) *Toggle, doc string) setting[C] {
	return boolSetting("enabled", f, doc)
}

// boolSetting is an on/off setting held in a Toggle, true or false in configuration text.
func boolSetting[C any](key string, f func(*C) *Toggle, doc string) setting[C] {
	return setting[C]{
		example: "false",
		parse: func(c *C, text string) (string, string, bool) {
			v, err := strconv.ParseBool(text)
			*f(c) = Off
			if v {
				*f(c) = On
			}
			return codeInvalidValue, "true or false", err == nil
		},
		key: key, valid: "true or false", doc: doc,
		format: func(c *C) string { return f(c).String() },
		isSet:  func(c *C) bool { return *f(c) != 0 },
		copy:   func(d, s *C) { *f(d) = *f(s) },
		check:  func(c *C) (string, bool) { return codeInvalidSetting, *f(c) == On || *f(c) == Off },
	}
}

var inf = math.Inf(1)

func atLeastOne(v int) bool { return v >= 1 }

func positive(d time.Duration) bool { return d > 0 }

func formatErrors(errs []error) string {
	if errs == nil {
		return ""
	}
	names := make([]string, len(errs))
	for i, e := range errs {
		names[i] = errorName(e)
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// errorName names an error in messages: the library's sentinels by their Go names, others by
// their message.
func errorName(e error) string {
	switch e {
	case nil:
		return "nil"
	case ErrCallTimeout:
		return "r4c.ErrCallTimeout"
	case ErrBulkheadFull:
		return "r4c.ErrBulkheadFull"
	case ErrLimitExceeded:
		return "r4c.ErrLimitExceeded"
	case ErrRateLimited:
		return "r4c.ErrRateLimited"
	case ErrCircuitOpen:
		return "r4c.ErrCircuitOpen"
	}
	return strconv.Quote(e.Error())
}

// sameErrors compares two error lists element by element: with == where the dynamic type is
// comparable, with reflect.DeepEqual where == would panic.
func sameErrors(a, b []error) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameError(a[i], b[i]) {
			return false
		}
	}
	return true
}

func sameError(a, b error) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb {
		return false
	}
	if ta == nil || ta.Comparable() {
		return a == b
	}
	return reflect.DeepEqual(a, b)
}

// matchesAny reports whether err matches any of errs with errors.Is.
func matchesAny(err error, errs []error) bool {
	for _, e := range errs {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func settingError(code, scope, policy, key, value, valid string) *ConfigError {
	return &ConfigError{Code: code, Instance: scopeID(scope), Policy: policy, Key: key, Value: value,
		Msg: fmt.Sprintf("%s%s.%s = %s is invalid: want %s", scopePrefix(scope), policy, key, value, valid)}
}

func scopePrefix(scope string) string {
	if scope == "" {
		return ""
	}
	return scope + ": "
}

// scopeID extracts the quoted id of a scope (`instance "orders"` -> orders).
func scopeID(scope string) string {
	if i := strings.IndexByte(scope, '"'); i >= 0 {
		if s, err := strconv.Unquote(scope[i:]); err == nil {
			return s
		}
	}
	return ""
}

func quote(s string) string { return strconv.Quote(s) }

// checkErrorList checks a list of errors given outside the settings tables (a fallback's On).
func checkErrorList(errs []error, scope, policy, key string) ([]error, error) {
	for _, e := range errs {
		if e == nil {
			return nil, settingError(codeInvalidSetting, scope, policy, key, formatErrors(errs), "a list of errors, matched with errors.Is; no nil entries")
		}
	}
	return errs, nil
}

// zeroAs returns s where a text meaning zero sets the field to sentinel: the settings for which
// zero is a meaningful value but also means "not set here" in Go code (NoQueue, NoWait, NoJitter).
func (s setting[C]) zeroAs(isZero func(*C) bool, sentinel func(*C)) setting[C] {
	parse := s.parse
	s.parse = func(c *C, text string) (string, string, bool) {
		code, want, ok := parse(c, text)
		if ok && isZero(c) {
			sentinel(c)
		}
		return code, want, ok
	}
	return s
}
