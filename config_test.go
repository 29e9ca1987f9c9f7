package r4c_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/directive"
	"github.com/resilience4cata/r4c/r4ctest"
)

// A default that conflicts with a set value yields to it: MaxLimit 10 alone is valid, with an
// initial limit of 10; a MinLimit above 20 raises it. Limits set out of order stay an error.
func TestTheDefaultInitialLimitYieldsToTheLimitsSet(t *testing.T) {
	for _, c := range []struct {
		cfg  r4c.AdaptiveLimitConfig
		want int
	}{
		{r4c.AdaptiveLimitConfig{MaxLimit: 10}, 10},
		{r4c.AdaptiveLimitConfig{MinLimit: 30, MaxLimit: 100}, 30},
		{r4c.AdaptiveLimitConfig{}, 20},
	} {
		reg, _ := newRegistry(t)
		if _, err := r4c.NewPipeline[string](reg, "x", c.cfg); err != nil {
			t.Fatalf("%+v: %v", c.cfg, err)
		}
		if got := handle(t, reg, "x").Limit(); got != c.want {
			t.Fatalf("%v: initial limit %d, want %d", c.cfg, got, c.want)
		}
	}
	reg, _ := newRegistry(t)
	if _, err := r4c.NewPipeline[string](reg, "x", r4c.AdaptiveLimitConfig{InitialLimit: 30, MaxLimit: 10}); r4c.ErrorCode(err) != "R4C-ATR-009" {
		t.Fatalf("explicit limits out of order: %v", err)
	}
	if _, err := r4c.NewRegistry(r4c.WithProperties(map[string]string{"defaults.adaptiveLimit.maxLimit": "5"})); err != nil {
		t.Fatalf("maxLimit=5 from text: %v", err)
	}
}

// A zero wait between attempts is expressible: Wait NoWait retries at once, with no timer.
func TestRetryWithNoWaitRetriesAtOnce(t *testing.T) {
	reg, clock := newRegistry(t)
	p := newPipeline[string](t, reg, "r", r4c.RetryConfig{MaxAttempts: 3, Wait: r4c.NoWait})
	attempts := 0
	_, err := p.Execute(context.Background(), func(context.Context) (string, error) { attempts++; return "", errOverloaded })
	if attempts != 3 || err == nil || clock.Pending() != 0 {
		t.Fatalf("%d attempts, %v, %d timers; want 3 at once", attempts, err, clock.Pending())
	}
	if _, err := r4c.NewRegistry(r4c.WithProperties(map[string]string{"defaults.retry.wait": "0s"})); err != nil {
		t.Fatalf("wait=0s from text: %v", err)
	}
}

// Configurations print as configuration.md documents them: keys and values, sentinels read as
// what they mean.
func TestConfigsPrintAsDocumented(t *testing.T) {
	reg, _ := newRegistry(t)
	newPipeline[string](t, reg, "p", r4c.RetryConfig{}, r4c.BulkheadConfig{MaxConcurrent: 5})
	r, _ := reg.Retry("p")
	b, _ := reg.Bulkhead("p")
	for got, want := range map[string]string{
		r.Config().String(): "retry{maxAttempts=3 wait=500ms multiplier=1 maxWait=0s jitter=0 ",
		b.Config().String(): "bulkhead{maxConcurrent=5 maxWait=0s enabled=true}",
		r4c.TimeoutConfig{Timeout: 2 * time.Second}.String(): "timeout{timeout=2s}",
	} {
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s, want it to start with %s", got, want)
		}
	}
}

// Check lists every instance-level external key that matched nothing, from every source, with
// where it came from: an id with no instance (with the nearest id), a policy the instance does
// not have. Keys that matched, and ids with special characters, are not reported.
func TestCheckReportsInstanceKeysThatMatchedNothing(t *testing.T) {
	dir := t.TempDir()
	props := filepath.Join(dir, "app.properties")
	if err := os.WriteFile(props, []byte("instances.serch.adaptiveLimit.maxLimit=50\ninstances.search.adaptiveLimit.maxLimit=60\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	jsonFile := filepath.Join(dir, "r4c.json")
	if err := os.WriteFile(jsonFile, []byte(`{"instances": {"search": {"bulkhead": {"maxConcurrent": 5}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	special := "shop.OrderClient#Place(context.Context,string)"
	t.Setenv(r4c.EnvName("instances."+special+".retry.maxAttempts"), "4")
	t.Setenv(r4c.EnvName("instances.orders__v2.timeout.timeout"), "3s")
	reg, err := r4c.NewRegistry(r4c.WithClock(r4ctest.NewManualClock()), r4c.WithPropertiesFile(props), r4c.WithJSONFile(jsonFile), r4c.WithEnvironment())
	if err != nil {
		t.Fatal(err)
	}
	newPipeline[string](t, reg, "search", r4c.AdaptiveLimitConfig{})
	newPipeline[string](t, reg, special, r4c.RetryConfig{})
	if h, _ := reg.Retry(special); h == nil || h.Config().MaxAttempts != 4 {
		t.Fatal("the environment variable of an id with special characters did not apply")
	}
	err = reg.Check()
	if r4c.ErrorCode(err) != "R4C-CFG-003" {
		t.Fatalf("%v, want R4C-CFG-003", err)
	}
	msg := err.Error()
	for _, want := range []string{
		props + `:1: instances.serch.adaptiveLimit.maxLimit: no instance "serch": did you mean "search"?`,
		jsonFile + `:1: instances.search.bulkhead.maxConcurrent: instance "search" has no bulkhead (it has adaptiveLimit)`,
		`environment variable R4C_INSTANCES_orders__5F__5Fv2_TIMEOUT_TIMEOUT: instances.orders__v2.timeout.timeout: no instance "orders__v2"`,
		"3 external key(s)",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("Check: %s\nlacks %s", msg, want)
		}
	}
	if strings.Contains(msg, "instances.search.adaptiveLimit") || strings.Contains(msg, "OrderClient") {
		t.Errorf("Check reports keys that matched: %s", msg)
	}
	newPipeline[string](t, reg, "orders__v2", r4c.TimeoutConfig{})
	reg2, _ := r4c.NewRegistry()
	if err := reg2.Check(); err != nil {
		t.Fatalf("a registry without external keys: %v", err)
	}
}

// EnvName and WithEnvironment agree for every id: the escaped variable maps back to its key.
func TestEnvNameRoundTrips(t *testing.T) {
	for _, id := range []string{"orders", "a_b", "a__b", "_x_", "example.com/shop.OrderClient#Place(context.Context,string)", "ü-ñ", "__2E"} {
		key := "instances." + id + ".bulkhead.maxConcurrent"
		name := r4c.EnvName(key)
		for _, c := range name {
			if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
				t.Fatalf("%q: %q is not a portable variable name", id, name)
			}
		}
		t.Setenv(name, "7")
		reg, err := r4c.NewRegistry(r4c.WithEnvironment())
		if err != nil {
			t.Fatalf("%q (%s): %v", id, name, err)
		}
		newPipeline[string](t, reg, id, r4c.BulkheadConfig{})
		if b, _ := reg.Bulkhead(id); b.Config().MaxConcurrent != 7 {
			t.Fatalf("%q: %s did not set it", id, name)
		}
		os.Unsetenv(name)
	}
}

// The Inventory example of docs/codegen.md, verbatim: a method-level maxLimit=10 under a
// type-level limit with the default initial limit is valid.
func TestTheInventoryExampleOfTheCodegenDocsIsValid(t *testing.T) {
	reg, _ := newRegistry(t)
	if _, err := directive.Parse("//r4c:adaptivelimit maxLimit=10"); err != nil {
		t.Fatal(err)
	}
	// What r4cgen writes for Reserve: the type's limit with the method's maxLimit, and the timeout.
	if got := literal(goConfig(t, "//r4c:adaptivelimit maxLimit=50 window=250ms", "//r4c:adaptivelimit maxLimit=10")); got != "r4c.AdaptiveLimitConfig{MaxLimit: 10, Window: 250 * time.Millisecond}" {
		t.Fatal(got)
	}
	p, err := r4c.NewPipeline[int](reg, "shop.Inventory#Reserve(context.Context,string,int)",
		r4c.AdaptiveLimitConfig{MaxLimit: 10, Window: 250 * time.Millisecond}, r4c.TimeoutConfig{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := reg.AdaptiveLimit(p.ID()); l.Config().MaxLimit != 10 || l.Config().InitialLimit != 10 || l.Config().Window != 250*time.Millisecond {
		t.Fatalf("%v", l.Config())
	}
}
