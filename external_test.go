package r4c

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// configSource sets one flat key through one of the external sources.
type configSource struct {
	name string
	opt  func(t *testing.T, key, value string) Option
}

var configSources = []configSource{
	{"map", func(t *testing.T, key, value string) Option { return WithProperties(map[string]string{key: value}) }},
	{"properties file", func(t *testing.T, key, value string) Option {
		path := filepath.Join(t.TempDir(), "r4c.properties")
		text := "# written by the test\n" + escapePropertiesKey(key) + " = " + value + "\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return WithPropertiesFile(path)
	}},
	{"JSON file", func(t *testing.T, key, value string) Option {
		path := filepath.Join(t.TempDir(), "r4c.json")
		if err := os.WriteFile(path, nestedJSON(t, key, value), 0o644); err != nil {
			t.Fatal(err)
		}
		return WithJSONFile(path)
	}},
	{"environment", func(t *testing.T, key, value string) Option {
		t.Setenv(envName(key), value)
		return WithEnvironment()
	}},
}

func escapePropertiesKey(k string) string {
	r := strings.NewReplacer(`\`, `\\`, " ", `\ `, ":", `\:`, "=", `\=`, "#", `\#`, "!", `\!`)
	return r.Replace(k)
}

// nestedJSON writes key (kind, name, policy, setting) as nested objects; the name stays whole.
func nestedJSON(t *testing.T, key, value string) []byte {
	fk, _, ok := parseFlatKey(key)
	if !ok {
		t.Fatalf("bad key %q", key)
	}
	inner := map[string]any{fk.policy.policyName(): map[string]any{fk.setting: value}}
	var doc map[string]any
	if fk.kind == "defaults" {
		doc = map[string]any{"defaults": inner}
	} else {
		doc = map[string]any{fk.kind: map[string]any{fk.name: inner}}
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func envName(key string) string {
	fk, _, _ := parseFlatKey(key)
	name := envPrefix + strings.ToUpper(fk.kind) + "_"
	if fk.name != "" {
		name += fk.name + "_"
	}
	return name + strings.ToUpper(fk.policy.policyName()) + "_" + strings.ToUpper(fk.setting)
}

// TestEveryKeyThroughEverySource sets every setting of every policy, at every level (defaults,
// a named configuration, an instance), through every source, and checks the resolved value.
func TestEveryKeyThroughEverySource(t *testing.T) {
	testEveryKey(t, &adaptiveLimitSpec)
	testEveryKey(t, &bulkheadSpec)
	testEveryKey(t, &timeoutSpec)
	testEveryKey(t, &rateLimiterSpec)
	testEveryKey(t, &retrySpec)
	testEveryKey(t, &circuitBreakerSpec)
	testEveryKey(t, &hedgeSpec)
}

func testEveryKey[C any](t *testing.T, spec *policySpec[C]) {
	for _, s := range spec.settings {
		if s.example == "" {
			t.Errorf("%s.%s has no example", spec.name, s.key)
			continue
		}
		var want C
		if _, _, ok := s.parse(&want, s.example); !ok {
			t.Fatalf("%s.%s: example %q does not parse", spec.name, s.key, s.example)
		}
		if s.format(&want) == s.format(&spec.defaults) {
			t.Errorf("%s.%s: example %q is the default: it proves nothing", spec.name, s.key, s.example)
		}
		for _, level := range []string{"defaults", "configs.backend", "instances.orders"} {
			key := level + "." + spec.name + "." + s.key
			for _, src := range configSources {
				t.Run(src.name+"/"+key, func(t *testing.T) {
					reg, err := NewRegistry(src.opt(t, key, s.example))
					if err != nil {
						t.Fatal(err)
					}
					var site C
					if level == "configs.backend" {
						*spec.named(&site) = "backend"
					}
					got, err := resolve(reg, spec, "orders", site)
					if err != nil {
						t.Fatal(err)
					}
					if g, w := s.format(&got), s.format(&want); g != w {
						t.Fatalf("resolved %s = %q, want %q", s.key, g, w)
					}
				})
			}
		}
	}
}

func TestPrecedenceAcrossLayersAndSources(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.properties")
	if err := os.WriteFile(file, []byte("defaults.bulkhead.maxConcurrent=2\ninstances.orders.bulkhead.maxWait=1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("R4C_DEFAULTS_BULKHEAD_MAXCONCURRENT", "3")
	reg, err := NewRegistry(
		WithDefaults(BulkheadConfig{MaxConcurrent: 1}),
		WithPropertiesFile(file), // later than WithDefaults: 2 wins over 1
		WithEnvironment(),        // later again: 3 wins
		WithProperties(map[string]string{
			"configs.big.bulkhead.maxConcurrent":                           "40",
			"instances.orders.bulkhead.maxWait":                            "2s", // later than the file: 2s wins over 1s
			"instances.payments.bulkhead.config":                           "big",
			"instances.payments.bulkhead.maxWait":                          "0",
			"defaults.bulkhead.maxWait":                                    "5s",
			"instances.ex.ample/v1.Svc#Do(ctx,int).bulkhead.maxConcurrent": "7",
		}),
		WithInstance("orders", BulkheadConfig{MaxConcurrent: 9}), // Go code and properties share the layers
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   string
		site BulkheadConfig
		max  int
		wait string
	}{
		{"other", BulkheadConfig{}, 3, "5s"},                               // defaults: env over file over Go
		{"orders", BulkheadConfig{MaxConcurrent: 4}, 9, "2s"},              // instance over call site
		{"payments", BulkheadConfig{}, 40, "0s"},                           // instance names config "big"; explicit 0 wait
		{"site", BulkheadConfig{Config: "big", MaxConcurrent: 6}, 6, "5s"}, // call site over named
		{"ex.ample/v1.Svc#Do(ctx,int)", BulkheadConfig{}, 7, "5s"},         // ids with dots, '/', '#', parens, commas
	} {
		got, err := resolve(reg, &bulkheadSpec, tc.id, tc.site)
		if err != nil {
			t.Fatal(err)
		}
		if got.MaxConcurrent != tc.max || bulkheadSpec.settings[1].format(&got) != tc.wait {
			t.Errorf("%s: maxConcurrent %d, maxWait %s; want %d, %s", tc.id, got.MaxConcurrent, bulkheadSpec.settings[1].format(&got), tc.max, tc.wait)
		}
	}
}

func TestExternalConfigurationErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	props := write("bad.properties", "# comment\ndefaults.adaptiveLimit.maxLimit=100\n\ndefaults.adaptiveLimit.maxLimt=100\n")
	jsonFile := write("bad.json", "{\n  \"defaults\": {\n    \"timeout\": {\n      \"timeout\": \"5x\"\n    }\n  }\n}\n")
	for _, tc := range []struct {
		name  string
		opt   func(t *testing.T) Option
		code  string
		parts []string
	}{
		{"unknown key in a file, with its line and the nearest key", func(*testing.T) Option { return WithPropertiesFile(props) },
			"R4C-CFG-001", []string{props + ":4:", `"defaults.adaptiveLimit.maxLimt"`, `did you mean "defaults.adaptiveLimit.maxLimit"`}},
		{"bad duration in JSON, with its line", func(*testing.T) Option { return WithJSONFile(jsonFile) },
			"R4C-ATR-001", []string{jsonFile + ":4:", "defaults.timeout.timeout = 5x", "Go syntax"}},
		{"unknown policy", func(*testing.T) Option {
			return WithProperties(map[string]string{"defaults.adaptivelimit.maxLimit": "1"})
		},
			"R4C-CFG-001", []string{"WithProperties", `did you mean "defaults.adaptiveLimit.maxLimit"`}},
		{"unknown kind", func(*testing.T) Option { return WithProperties(map[string]string{"default.bulkhead.maxWait": "1s"}) },
			"R4C-CFG-001", []string{`did you mean "defaults.bulkhead.maxWait"`}},
		{"instance without a setting", func(*testing.T) Option { return WithProperties(map[string]string{"instances.orders.bulkhead": "1"}) },
			"R4C-CFG-001", nil},
		{"not a number", func(*testing.T) Option {
			return WithProperties(map[string]string{"defaults.bulkhead.maxConcurrent": "ten"})
		},
			"R4C-CFG-002", []string{"defaults.bulkhead.maxConcurrent = ten", "an integer"}},
		{"out of range", func(*testing.T) Option {
			return WithProperties(map[string]string{"configs.b.adaptiveLimit.backoffRatio": "1.5"})
		},
			"R4C-CFG-002", []string{"configs.b.adaptiveLimit.backoffRatio = 1.5", "in (0, 1)"}},
		{"limit below one", func(*testing.T) Option {
			return WithProperties(map[string]string{"defaults.adaptiveLimit.maxLimit": "0"})
		},
			"R4C-ATR-003", []string{"maxLimit = 0", "at least 1"}},
		{"window out of range", func(*testing.T) Option {
			return WithProperties(map[string]string{"defaults.adaptiveLimit.window": "2h"})
		},
			"R4C-ATR-009", []string{"window = 2h", "from 1ms to 1h"}},
		{"unknown algorithm", func(*testing.T) Option {
			return WithProperties(map[string]string{"defaults.adaptiveLimit.algorithm": "bbr"})
		},
			"R4C-CFG-002", []string{"algorithm", "bbr", "gradient2, aimd"}},
		{"vegas alpha of zero", func(*testing.T) Option {
			return WithProperties(map[string]string{"defaults.adaptiveLimit.alpha": "0"})
		},
			"R4C-CFG-002", []string{"defaults.adaptiveLimit.alpha = 0", "at least 1"}},
		{"vegas beta not an integer", func(*testing.T) Option {
			return WithProperties(map[string]string{"instances.orders.adaptiveLimit.beta": "six"})
		},
			"R4C-CFG-002", []string{"instances.orders.adaptiveLimit.beta = six", "an integer"}},
		{"vegas probe multiplier below one", func(*testing.T) Option {
			return WithProperties(map[string]string{"configs.b.adaptiveLimit.probeMultiplier": "-1"})
		},
			"R4C-CFG-002", []string{"configs.b.adaptiveLimit.probeMultiplier = -1", "at least 1"}},
		{"unknown error name", func(*testing.T) Option {
			return WithProperties(map[string]string{"defaults.retry.abortOn": "billing.ErrNope"})
		},
			"R4C-CFG-002", []string{"billing.ErrNope is not", "RegisterError"}},
		{"named config naming another", func(*testing.T) Option { return WithProperties(map[string]string{"configs.a.retry.config": "b"}) },
			"R4C-CFG-002", []string{"cannot name another"}},
		{"unknown named config", func(*testing.T) Option { return WithProperties(map[string]string{"instances.x.retry.config": "nope"}) },
			"R4C-REG-004", []string{`instance "x"`, "nope"}},
		{"environment variable", func(t *testing.T) Option {
			t.Setenv("R4C_INSTANCES_orders_TIMEOUT_TIMEOUT", "soon")
			return WithEnvironment()
		}, "R4C-ATR-001", []string{"environment variable R4C_INSTANCES_orders_TIMEOUT_TIMEOUT", "instances.orders.timeout.timeout = soon"}},
		{"unknown environment variable", func(t *testing.T) Option {
			t.Setenv("R4C_DEFAULTS_BULKHEAD_MAXCONCURENT", "1")
			return WithEnvironment()
		}, "R4C-CFG-001", []string{"environment variable R4C_DEFAULTS_BULKHEAD_MAXCONCURENT", `"defaults.bulkhead.maxConcurrent"`}},
		{"missing file", func(*testing.T) Option { return WithPropertiesFile(filepath.Join(dir, "nope.properties")) },
			"R4C-CFG-002", []string{"nope.properties"}},
		{"malformed JSON", func(*testing.T) Option { return WithJSONFile(write("broken.json", "{\"defaults\": {")) },
			"R4C-CFG-002", []string{"broken.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, err := NewRegistry(tc.opt(t))
			if reg != nil || ErrorCode(err) != tc.code {
				t.Fatalf("code %q (%v), want %s", ErrorCode(err), err, tc.code)
			}
			for _, p := range tc.parts {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("%q lacks %q", err.Error(), p)
				}
			}
		})
	}
}

// errBilling is registered by TestRegisterError: registrations are process-wide, so it is one
// value for every run of the test (-count).
var errBilling = &ConfigError{Msg: "billing overloaded"}

func TestRegisterError(t *testing.T) {
	if err := RegisterError("billing.ErrOverloaded", errBilling); err != nil {
		t.Fatal(err)
	}
	if err := RegisterError("billing.ErrOverloaded", errBilling); err != nil {
		t.Fatalf("registering the same error twice: %v", err)
	}
	for _, bad := range []string{"", "a,b", "a b"} {
		if err := RegisterError(bad, errBilling); ErrorCode(err) != codeInvalidSetting {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if err := RegisterError("r4c.ErrCallTimeout", errBilling); err == nil {
		t.Fatal("a name registered for another error was taken")
	}
	reg, err := NewRegistry(WithProperties(map[string]string{"defaults.adaptiveLimit.dropOn": " billing.ErrOverloaded , r4c.ErrCallTimeout "}))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := resolve(reg, &adaptiveLimitSpec, "x", AdaptiveLimitConfig{})
	if len(got.DropOn) != 2 || got.DropOn[0] != error(errBilling) || got.DropOn[1] != ErrCallTimeout {
		t.Fatalf("%v", got.DropOn)
	}
	// An empty list is a set, empty list: no failure is a drop.
	reg, _ = NewRegistry(WithProperties(map[string]string{"defaults.adaptiveLimit.dropOn": ""}))
	if got, _ := resolve(reg, &adaptiveLimitSpec, "x", AdaptiveLimitConfig{}); got.DropOn == nil || len(got.DropOn) != 0 {
		t.Fatalf("%#v", got.DropOn)
	}
}

// TestNearestKeyKeepsTheNameAndIgnoresCase checks the suggestion for a misspelt key: the closest
// valid key whatever the case, with the key's own name kept as written, also when that name is
// long enough that comparing it whole would exceed the edit distance's budget.
func TestNearestKeyKeepsTheNameAndIgnoresCase(t *testing.T) {
	long := strings.Repeat("Svc", 20000)
	for _, c := range []struct{ key, want string }{
		{"Defaults.AdaptiveLimit.MaxLimt", "defaults.adaptiveLimit.maxLimit"},
		{"instances.MyApp.BULKHED.maxconcurrent", "instances.MyApp.bulkhead.maxConcurrent"},
		{"configs.backend.retry.wiat", "configs.backend.retry.wait"},
		{"instances." + long + ".Bulkhed.maxWait", "instances." + long + ".bulkhead.maxWait"},
	} {
		if got := nearestKey(c.key); got != c.want {
			t.Errorf("nearestKey(%.60q) = %.60q, want %.60q", c.key, got, c.want)
		}
	}
}

func FuzzParseFlatKey(f *testing.F) {
	for _, k := range []string{"defaults.adaptiveLimit.maxLimit", "configs.backend.retry.wait", "instances.a.b.c#D(e,f).hedge.delay",
		"instances..bulkhead.maxWait", "defaults", ".", "instances.x.y", "defaults.x.adaptiveLimit.maxLimit"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		fk, nearest, ok := parseFlatKey(key)
		if !ok {
			if _, _, ok := parseFlatKey(nearest); !ok && !strings.Contains(nearest, "<name>") {
				t.Fatalf("the suggestion %q for %q is not a valid key", nearest, key)
			}
			return
		}
		rebuilt := fk.kind
		if fk.name != "" {
			rebuilt += "." + fk.name
		}
		rebuilt += "." + fk.policy.policyName() + "." + fk.setting
		if rebuilt != key {
			t.Fatalf("%q parsed to %+v, which rebuilds as %q", key, fk, rebuilt)
		}
	})
}
