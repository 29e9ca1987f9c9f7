package r4c

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/resilience4cata/r4c/internal/directive"
)

func init() { directive.GoConfig = goConfig }

// goConfig writes the attributes of a policy's directives as its Go config literal
// (directive.GoConfig), so that generated code reads like code written by hand.
func goConfig(policy string, attrs []directive.Attr) (directive.Config, error) {
	for _, p := range directivePolicies {
		if p.word == policy && p.spec != nil {
			return p.spec.goConfig(attrs)
		}
	}
	return directive.Config{}, fmt.Errorf("no config for //r4c:%s", policy)
}

func (p *policySpec[C]) goConfig(attrs []directive.Attr) (directive.Config, error) {
	var c C
	last := map[string]string{}
	for _, a := range attrs {
		last[a.Key] = a.Value
	}
	out := directive.Config{Type: p.goType}
	typ := reflect.TypeOf(c)
	for _, s := range p.settings {
		text, ok := last[s.key]
		if !ok {
			continue
		}
		f, ok := typ.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, s.key) })
		if !ok {
			return out, fmt.Errorf("%s: no field for %s", p.goType, s.key)
		}
		if f.Type == reflect.TypeFor[[]error]() {
			var names []string
			for _, n := range strings.Split(text, ",") {
				if n = strings.TrimSpace(n); n != "" {
					names = append(names, n)
				}
			}
			out.Fields = append(out.Fields, directive.Field{Name: f.Name, Errors: names})
			continue
		}
		if _, want, ok := s.parse(&c, strings.TrimSpace(text)); !ok {
			return out, fmt.Errorf("%s=%s: want %s", s.key, text, want)
		}
		expr, err := goExpr(reflect.ValueOf(&c).Elem().FieldByIndex(f.Index))
		if err != nil {
			return out, fmt.Errorf("%s: %w", s.key, err)
		}
		out.Fields = append(out.Fields, directive.Field{Name: f.Name, Expr: expr})
	}
	if n, ok := last["config"]; ok {
		out.Fields = append(out.Fields, directive.Field{Name: "Config", Expr: strconv.Quote(n)})
	}
	return out, nil
}

// goExpr writes a setting's value as Go source, sentinels and enumerations by their names.
func goExpr(v reflect.Value) (string, error) {
	switch x := v.Interface().(type) {
	case time.Duration:
		if x == NoWait {
			return "r4c.NoWait", nil
		}
		return durationExpr(x), nil
	case LimitAlgorithm:
		if x.valid() {
			return "r4c." + algorithms[x].goName, nil
		}
	case Toggle:
		if x == Off {
			return "r4c.Off", nil
		}
		return "r4c.On", nil
	case int:
		if x == NoQueue {
			return "r4c.NoQueue", nil
		}
		return strconv.Itoa(x), nil
	case float64:
		if x == NoJitter {
			return "r4c.NoJitter", nil
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		return s, nil
	case map[string]float64: // Partitions, sorted by name
		var pairs []string
		for _, pair := range strings.Split(formatPartitions(x), ",") {
			name, share, _ := strings.Cut(pair, ":")
			pairs = append(pairs, strconv.Quote(name)+": "+share)
		}
		return "map[string]float64{" + strings.Join(pairs, ", ") + "}", nil
	}
	return "", fmt.Errorf("no Go expression for a %v", v.Type())
}

// durationExpr writes d in its largest whole unit: 500 * time.Millisecond, time.Second.
func durationExpr(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "time.Hour"}, {time.Minute, "time.Minute"}, {time.Second, "time.Second"},
		{time.Millisecond, "time.Millisecond"}, {time.Microsecond, "time.Microsecond"}} {
		if d%u.d == 0 {
			if n := d / u.d; n != 1 {
				return strconv.FormatInt(int64(n), 10) + " * " + u.name
			}
			return u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + " * time.Nanosecond"
}
