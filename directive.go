package r4c

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"

	"github.com/resilience4cata/r4c/internal/directive"
)

// Directives are the comments from which r4cgen writes resilient wrappers (docs/codegen.md):
//
//	//r4c:adaptivelimit name=orders initialLimit=10 maxLimit=100 window=500ms
//	//r4c:timeout 2s
//
// This file checks them against the settings (the grammar's types are in internal/directive,
// whose Parse this file provides), for the generator (which reports problems at their position)
// and writes them as Go config literals (goconfig.go) for the generated code, so that
// a directive means the same thing at generate time and at run time.

// directivePolicies maps a directive's policy word to its settings, and names its main setting:
// the one a lone value sets (//r4c:timeout 2s is //r4c:timeout timeout=2s).
var directivePolicies = func() []directivePolicy {
	var ps []directivePolicy
	for _, s := range allSpecs {
		ps = append(ps, directivePolicy{s.word(), s.mainKey(), s})
	}
	return append(ps, directivePolicy{"fallback", "method", nil}) // a function, not a config
}()

// directivePolicy is a directive's policy word, the setting of its lone value and its settings
// (nil for the fallback).
type directivePolicy struct {
	word, main string
	spec       specAny
}

// directiveErr is a problem in a directive, at a byte offset of its text (directive.Positioned).
// It unwraps to its *ConfigError (ErrorCode works).
type directiveErr struct {
	*ConfigError
	offset int
}

// Unwrap returns the ConfigError.
func (e *directiveErr) Unwrap() error { return e.ConfigError }

// DirectiveOffset returns the byte offset of the problem in the directive's text.
func (e *directiveErr) DirectiveOffset() int { return e.offset }

func init() { directive.Parse = parseDirective }

func directiveError(code string, offset int, format string, args ...any) *directiveErr {
	return &directiveErr{ConfigError: &ConfigError{Code: code, Msg: fmt.Sprintf(format, args...)}, offset: offset}
}

// parseDirective parses one directive comment (directive.Parse). Every problem is reported,
// joined, each a *directiveErr: R4C-ATR-002 for an unknown policy or attribute (with the nearest valid one)
// or a malformed value, R4C-ATR-001 for a bad duration, R4C-ATR-003 for a limit below 1,
// R4C-ATR-009 for limits (or alpha and beta) out of order among the attributes given or a window
// out of range.
func parseDirective(text string) (directive.Directive, error) {
	var d directive.Directive
	if !strings.HasPrefix(text, directive.Prefix) {
		return d, directiveError(codeBadAttribute, 0, "a directive starts with %s", directive.Prefix)
	}
	body := text[len(directive.Prefix):]
	fields := fieldsWithOffsets(body, len(directive.Prefix))
	if len(fields) == 0 {
		return d, directiveError(codeBadAttribute, len(directive.Prefix), "the directive names no policy: want one of %s", directiveWords())
	}
	d.Policy = fields[0].text
	var main string
	var spec specAny
	found := false
	for _, p := range directivePolicies {
		if p.word == d.Policy {
			main, spec, found = p.main, p.spec, true
		}
	}
	if !found {
		return d, directiveError(codeBadAttribute, fields[0].offset, "unknown directive //r4c:%s: did you mean //r4c:%s?", d.Policy, nearest(d.Policy, directiveWordList()))
	}
	var errs []error
	seen := map[string]bool{}
	scratch := layer{}
	for i, f := range fields[1:] {
		key, value, hasEq := strings.Cut(f.text, "=")
		valueOff := f.offset + len(key) + 1 // where the value starts in the line
		if !hasEq {
			if i > 0 {
				errs = append(errs, directiveError(codeBadAttribute, f.offset, "//r4c:%s: %q is not key=value (only the first attribute may be a lone value, for %s)", d.Policy, f.text, main))
				continue
			}
			key, value, valueOff = main, f.text, f.offset // a lone value: no "key=" before it
		}
		if key == "" || value == "" && key != "retryOn" && key != "abortOn" && key != "recordOn" && key != "ignoreOn" && key != "dropOn" && key != "on" {
			errs = append(errs, directiveError(codeBadAttribute, f.offset, "//r4c:%s: malformed attribute %q: want key=value", d.Policy, f.text))
			continue
		}
		if seen[key] {
			errs = append(errs, directiveError(codeBadAttribute, f.offset, "//r4c:%s: attribute %s is given twice", d.Policy, key))
			continue
		}
		seen[key] = true
		switch {
		case key == "name":
			d.Name = value
			continue
		case spec == nil: // fallback: method= and on=
			if key != "method" && key != "on" {
				errs = append(errs, directiveError(codeBadAttribute, f.offset, "unknown attribute %s for //r4c:fallback: did you mean %s?", key, nearest(key, []string{"method", "on"})))
				continue
			}
			if key == "method" && !isIdentifier(value) {
				errs = append(errs, directiveError(codeBadAttribute, f.offset, "//r4c:fallback: method=%s is not a method name", value))
				continue
			}
			if key == "on" {
				if bad := badErrorName(value); bad != "" {
					errs = append(errs, directiveError(codeBadAttribute, valueOff, "//r4c:fallback: on=%s: %q is not an error name such as pkg.ErrName", value, bad))
					continue
				}
			}
		default:
			if !contains(spec.keys(), key) {
				errs = append(errs, directiveError(codeBadAttribute, f.offset, "unknown attribute %s for //r4c:%s: did you mean %s?", key, d.Policy, nearest(key, spec.keys())))
				continue
			}
			if isErrorList(key) {
				// Only the names' syntax here: the generator resolves them to Go variables.
				if bad := badErrorName(value); bad != "" {
					errs = append(errs, directiveError(codeBadAttribute, valueOff, "//r4c:%s: %s=%s: %q is not an error name such as pkg.ErrName", d.Policy, key, value, bad))
					continue
				}
			} else if code, want, ok := spec.apply(scratch, key, value, false); !ok {
				if code == codeInvalidValue {
					code = codeBadAttribute
				}
				errs = append(errs, directiveError(code, valueOff, "//r4c:%s: %s=%s is invalid: want %s", d.Policy, key, value, want))
				continue
			}
		}
		d.Attrs = append(d.Attrs, directive.Attr{Key: key, Value: value, Offset: f.offset})
	}
	if d.Policy == "adaptivelimit" && len(errs) == 0 {
		if err := limitsInOrder(d); err != nil {
			errs = append(errs, err)
		}
	}
	return d, errors.Join(errs...)
}

// limitsInOrder checks minLimit <= initialLimit <= maxLimit, and alpha <= beta, among the
// settings a directive gives.
func limitsInOrder(d directive.Directive) error {
	vals := map[string]int{}
	for _, a := range d.Attrs {
		switch a.Key {
		case "minLimit", "initialLimit", "maxLimit", "alpha", "beta":
			var v int
			fmt.Sscan(a.Value, &v)
			vals[a.Key] = v
		}
	}
	for _, chain := range []struct {
		what  string
		order []string
	}{
		{"limits", []string{"minLimit", "initialLimit", "maxLimit"}},
		{"alpha and beta", []string{"alpha", "beta"}},
	} {
		order := chain.order
		for i := range order {
			for j := i + 1; j < len(order); j++ {
				a, okA := vals[order[i]]
				b, okB := vals[order[j]]
				if okA && okB && a > b {
					off := 0
					for _, at := range d.Attrs {
						if at.Key == order[i] {
							off = at.Offset
						}
					}
					return directiveError(codeOutOfOrder, off, "//r4c:adaptivelimit: %s out of order: %s=%d is above %s=%d", chain.what, order[i], a, order[j], b)
				}
			}
		}
	}
	return nil
}

func isErrorList(key string) bool {
	switch key {
	case "dropOn", "retryOn", "abortOn", "recordOn", "ignoreOn":
		return true
	}
	return false
}

// badErrorName returns the first name of a comma-separated list that is not a (qualified)
// identifier, or "" when every name is well formed.
func badErrorName(list string) string {
	for _, name := range strings.Split(list, ",") {
		if name == "" {
			continue
		}
		for _, part := range strings.Split(name, ".") {
			if !isIdentifier(part) {
				return name
			}
		}
	}
	return ""
}

type field struct {
	text   string
	offset int
}

func fieldsWithOffsets(s string, base int) []field {
	var out []field
	start := -1
	for i, r := range s {
		if unicode.IsSpace(r) {
			if start >= 0 {
				out = append(out, field{s[start:i], base + start})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, field{s[start:], base + start})
	}
	return out
}

func directiveWordList() []string {
	words := make([]string, len(directivePolicies))
	for i, p := range directivePolicies {
		words[i] = p.word
	}
	return words
}

func directiveWords() string { return strings.Join(directiveWordList(), ", ") }

func nearest(s string, candidates []string) string {
	best, bestD := "", -1
	ls := strings.ToLower(s) // once: s may be long, the candidates are short
	for _, c := range candidates {
		if d := editDistance(ls, strings.ToLower(c)); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func isIdentifier(s string) bool {
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}

// wrappers holds the constructors that generated files register, by the wrapped type.
var wrappers sync.Map // reflect.Type -> func(T, *Registry) (T, error)

// RegisterWrapper registers the constructor of the generated wrapper of T, for Of. Generated
// files call it from an init function.
func RegisterWrapper[T any](ctor func(delegate T, reg *Registry) (T, error)) {
	wrappers.Store(reflect.TypeFor[T](), ctor)
}

// Of returns delegate wrapped by its generated wrapper, which applies the policies its
// directives declare, with instances in reg. T is the interface (or the type, or pointer type,
// whose methods the wrapper exposes) named in the go:generate line. It fails with R4C-REG-012
// when no wrapper was generated for T, or with the wrapper's own construction error.
func Of[T any](delegate T, reg *Registry) (T, error) {
	ctor, ok := wrappers.Load(reflect.TypeFor[T]())
	if !ok {
		var zero T
		return zero, &ConfigError{Code: codeNoWrapper, Msg: fmt.Sprintf("r4c.Of: no generated wrapper for %v: run go generate with r4cgen -type for it", reflect.TypeFor[T]())}
	}
	return ctor.(func(T, *Registry) (T, error))(delegate, reg)
}
