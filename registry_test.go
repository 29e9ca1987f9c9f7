package r4c_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
)

func TestResolutionOrder(t *testing.T) {
	reg, _ := newRegistry(t,
		r4c.WithDefaults(r4c.AdaptiveLimitConfig{MaxLimit: 100, InitialLimit: 10, Smoothing: 0.3, Window: 2 * time.Second}),
		r4c.WithConfig("backend", r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, BackoffRatio: 0.8, MinWindowSamples: 20, MaxLimit: 90, InitialLimit: 9}),
		r4c.WithInstance("orders", r4c.AdaptiveLimitConfig{RTTTolerance: 2, MaxLimit: 70}),
	)
	newPipeline[string](t, reg, "orders", r4c.AdaptiveLimitConfig{Config: "backend", InitialLimit: 5, MaxLimit: 80})
	got := handle(t, reg, "orders").Config()
	want := r4c.AdaptiveLimitConfig{
		Algorithm:        r4c.AIMD,        // named config
		InitialLimit:     5,               // call site over named config and defaults
		MinLimit:         1,               // built-in
		MaxLimit:         70,              // instance over everything
		Window:           2 * time.Second, // registry defaults
		MinWindowSamples: 20,              // named config
		Smoothing:        0.3,             // registry defaults
		RTTTolerance:     2,               // instance
		LongWindow:       600,             // built-in
		QueueSize:        4,               // built-in
		BackoffRatio:     0.8,             // named config
		ProbeMultiplier:  30,              // built-in
		DropOn:           []error{r4c.ErrCallTimeout, r4c.ErrBulkheadFull},
		DropGuard:        r4c.On, // built-in
		MaxWait:          r4c.NoWait,
		Enabled:          r4c.On,
		Config:           "backend",
	}
	if !equalConfig(got, want) {
		t.Fatalf("resolved\n%+v\nwant\n%+v", got, want)
	}

	// Without a call-site value, the named configuration wins over registry defaults.
	newPipeline[string](t, reg, "other", r4c.AdaptiveLimitConfig{Config: "backend"})
	if c := handle(t, reg, "other").Config(); c.MaxLimit != 90 || c.InitialLimit != 9 || c.Smoothing != 0.3 {
		t.Fatalf("%+v", c)
	}
	// Without a named configuration, registry defaults win over built-in defaults.
	newPipeline[string](t, reg, "plain", r4c.AdaptiveLimitConfig{})
	if c := handle(t, reg, "plain").Config(); c.MaxLimit != 100 || c.Algorithm != r4c.Gradient2 || c.Config != "" {
		t.Fatalf("%+v", c)
	}
}

func equalConfig(a, b r4c.AdaptiveLimitConfig) bool {
	if len(a.DropOn) != len(b.DropOn) {
		return false
	}
	for i := range a.DropOn {
		if a.DropOn[i] != b.DropOn[i] {
			return false
		}
	}
	a.DropOn, b.DropOn = nil, nil
	return reflect.DeepEqual(a, b)
}

func TestDefaultsCanNameAConfigAndInstancesCanReEnable(t *testing.T) {
	reg, _ := newRegistry(t,
		r4c.WithConfig("off", r4c.AdaptiveLimitConfig{Enabled: r4c.Off}),
		r4c.WithDefaults(r4c.AdaptiveLimitConfig{Config: "off"}),
		r4c.WithInstance("on", r4c.AdaptiveLimitConfig{Enabled: r4c.On}),
	)
	newPipeline[string](t, reg, "off", r4c.AdaptiveLimitConfig{})
	newPipeline[string](t, reg, "on", r4c.AdaptiveLimitConfig{})
	if handle(t, reg, "off").Snapshot().Enabled || !handle(t, reg, "on").Snapshot().Enabled {
		t.Fatal("enabled did not resolve through defaults > named config > instance")
	}
}

func TestEmptyDropOnMeansNoDrops(t *testing.T) {
	reg, clock := newRegistry(t)
	cfg := aimd
	cfg.DropOn = []error{}
	p := newPipeline[string](t, reg, "x", cfg)
	_, _ = p.Execute(t.Context(), taking(clock, time.Second, r4c.ErrCallTimeout))
	mustExecute(t, p, taking(clock, time.Second, nil))
	if h := handle(t, reg, "x"); h.Limit() != 4 {
		t.Fatalf("limit %d: a timeout counted as a drop with DropOn empty", h.Limit())
	}
}

func TestSharingByID(t *testing.T) {
	reg, _ := newRegistry(t)
	newPipeline[string](t, reg, "orders", r4c.AdaptiveLimitConfig{MaxLimit: 100})
	newPipeline[int](t, reg, "orders", r4c.AdaptiveLimitConfig{MaxLimit: 100})
	if len(reg.Snapshot().AdaptiveLimits) != 1 {
		t.Fatal("two pipelines with one id and one configuration did not share the instance")
	}
	_, err := r4c.NewPipeline[string](reg, "orders", r4c.AdaptiveLimitConfig{MaxLimit: 50})
	if r4c.ErrorCode(err) != "R4C-REG-008" {
		t.Fatalf("%v", err)
	}
	msg := err.Error()
	for _, part := range []string{"R4C-REG-008: ", `instance "orders"`, "adaptiveLimit", "maxLimit 100 vs 50"} {
		if !strings.Contains(msg, part) {
			t.Errorf("message %q lacks %q", msg, part)
		}
	}
	var ce *r4c.ConfigError
	if !errors.As(err, &ce) || ce.Instance != "orders" || ce.Policy != "adaptiveLimit" {
		t.Fatalf("%#v", ce)
	}
	_, err = r4c.NewPipeline[string](reg, "orders", r4c.AdaptiveLimitConfig{MaxLimit: 100, DropOn: []error{errOverloaded}})
	if r4c.ErrorCode(err) != "R4C-REG-008" || !strings.Contains(err.Error(), `dropOn [r4c.ErrCallTimeout, r4c.ErrBulkheadFull] vs ["overloaded"]`) {
		t.Fatalf("%v", err)
	}
}

func TestConcurrentPipelinesShareOneInstance(t *testing.T) {
	reg, _ := newRegistry(t)
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r4c.NewPipeline[string](reg, "shared", r4c.AdaptiveLimitConfig{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := len(reg.Snapshot().AdaptiveLimits); n != 1 {
		t.Fatalf("%d instances", n)
	}
}

func TestConfigurationErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []r4c.Option
		id    string
		cfgs  []r4c.PolicyConfig
		code  string
		parts []string
	}{
		{name: "smoothing in defaults", opts: []r4c.Option{r4c.WithDefaults(r4c.AdaptiveLimitConfig{Smoothing: 1.5})},
			code: "R4C-REG-001", parts: []string{"registry defaults", "adaptiveLimit.smoothing = 1.5", "(0, 1]"}},
		{name: "backoff in a named config", opts: []r4c.Option{r4c.WithConfig("backend", r4c.AdaptiveLimitConfig{BackoffRatio: 1})},
			code: "R4C-REG-001", parts: []string{`config "backend"`, "backoffRatio = 1", "(0, 1)"}},
		{name: "tolerance for an instance", opts: []r4c.Option{r4c.WithInstance("orders", r4c.AdaptiveLimitConfig{RTTTolerance: 0.5})},
			code: "R4C-REG-001", parts: []string{`instance "orders"`, "rttTolerance = 0.5", "at least 1"}},
		{name: "limit below one at the call site", id: "search", cfgs: []r4c.PolicyConfig{r4c.AdaptiveLimitConfig{MaxLimit: -5}},
			code: "R4C-ATR-003", parts: []string{`instance "search"`, "maxLimit = -5", "at least 1"}},
		{name: "limits out of order", id: "search", cfgs: []r4c.PolicyConfig{r4c.AdaptiveLimitConfig{InitialLimit: 50, MaxLimit: 10}},
			code: "R4C-ATR-009", parts: []string{`instance "search"`, "minLimit 1 (built-in default), initialLimit 50 (the call site), maxLimit 10 (the call site)"}},
		{name: "min above max across layers", opts: []r4c.Option{r4c.WithDefaults(r4c.AdaptiveLimitConfig{MinLimit: 30})}, id: "search",
			cfgs: []r4c.PolicyConfig{r4c.AdaptiveLimitConfig{MaxLimit: 25}}, code: "R4C-ATR-009", parts: []string{"minLimit 30"}},
		{name: "window too long", id: "search", cfgs: []r4c.PolicyConfig{r4c.AdaptiveLimitConfig{Window: 2 * time.Hour}},
			code: "R4C-ATR-009", parts: []string{"window = 2h0m0s", "from 1ms to 1h"}},
		{name: "window too short", id: "search", cfgs: []r4c.PolicyConfig{r4c.AdaptiveLimitConfig{Window: time.Microsecond}},
			code: "R4C-ATR-009", parts: []string{"window = 1µs"}},
		{name: "unknown algorithm", id: "search", cfgs: []r4c.PolicyConfig{r4c.AdaptiveLimitConfig{Algorithm: 9}},
			code: "R4C-REG-001", parts: []string{"algorithm = LimitAlgorithm(9)", "gradient2, aimd"}},
		{name: "negative queue", id: "search", cfgs: []r4c.PolicyConfig{r4c.AdaptiveLimitConfig{QueueSize: -2}},
			code: "R4C-REG-001", parts: []string{"queueSize = -2"}},
		{name: "nil in DropOn", id: "search", cfgs: []r4c.PolicyConfig{r4c.AdaptiveLimitConfig{DropOn: []error{nil}}},
			code: "R4C-REG-001", parts: []string{"dropOn = [nil]"}},
		{name: "unknown config at the call site", id: "search", cfgs: []r4c.PolicyConfig{r4c.AdaptiveLimitConfig{Config: "nope"}},
			code: "R4C-REG-004", parts: []string{`instance "search"`, "config = nope"}},
		{name: "unknown config in defaults", opts: []r4c.Option{r4c.WithDefaults(r4c.AdaptiveLimitConfig{Config: "nope"})},
			code: "R4C-REG-004", parts: []string{"registry defaults", "nope"}},
		{name: "a named config naming another", opts: []r4c.Option{r4c.WithConfig("a", r4c.AdaptiveLimitConfig{Config: "b"})},
			code: "R4C-REG-001", parts: []string{`config "a"`, "cannot name another"}},
		{name: "nil clock", opts: []r4c.Option{r4c.WithClock(nil)}, code: "R4C-REG-001", parts: []string{"clock is nil"}},
		{name: "nil option", opts: []r4c.Option{nil}, code: "R4C-REG-001"},
		{name: "nil observer", opts: []r4c.Option{r4c.WithObserver(nil)}, code: "R4C-REG-001"},
		{name: "nil config", opts: []r4c.Option{r4c.WithDefaults(nil)}, code: "R4C-REG-001", parts: []string{"nil"}},
		{name: "nil config pointer", id: "search", cfgs: []r4c.PolicyConfig{(*r4c.AdaptiveLimitConfig)(nil)}, code: "R4C-REG-001"},
		{name: "policy twice", id: "search", cfgs: []r4c.PolicyConfig{r4c.AdaptiveLimitConfig{}, &r4c.AdaptiveLimitConfig{}},
			code: "R4C-REG-013", parts: []string{"given twice"}},
		{name: "empty id", id: "", cfgs: []r4c.PolicyConfig{r4c.AdaptiveLimitConfig{}}, code: "R4C-REG-001", parts: []string{"id is empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, err := r4c.NewRegistry(tc.opts...)
			if err == nil && tc.cfgs != nil {
				_, err = r4c.NewPipeline[string](reg, tc.id, tc.cfgs...)
				if tc.id != "" {
					if _, err2 := reg.AdaptiveLimit(tc.id); r4c.ErrorCode(err2) != "R4C-REG-009" {
						t.Errorf("a failed pipeline left an instance behind: %v", err2)
					}
				}
			} else if err == nil {
				t.Fatal("no error")
			} else if reg != nil {
				t.Fatal("a registry returned with an error")
			}
			if got := r4c.ErrorCode(err); got != tc.code {
				t.Fatalf("code %q, want %s: %v", got, tc.code, err)
			}
			if !strings.HasPrefix(err.Error(), tc.code+": ") {
				t.Errorf("message %q does not start with its code", err.Error())
			}
			for _, part := range tc.parts {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("message %q lacks %q", err.Error(), part)
				}
			}
		})
	}
}

func TestEveryInvalidOptionIsReported(t *testing.T) {
	_, err := r4c.NewRegistry(
		r4c.WithDefaults(r4c.AdaptiveLimitConfig{Smoothing: 2}),
		r4c.WithInstance("a", r4c.AdaptiveLimitConfig{MinLimit: -1, BackoffRatio: 3}),
	)
	for _, part := range []string{"smoothing = 2", "minLimit = -1", "backoffRatio = 3"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("%v lacks %q", err, part)
		}
	}
}

func TestUnknownInstanceAndNilRegistry(t *testing.T) {
	reg, _ := newRegistry(t)
	_, err := reg.AdaptiveLimit("nope")
	if r4c.ErrorCode(err) != "R4C-REG-009" || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("%v", err)
	}
	if _, err := r4c.NewPipeline[string](nil, "x"); r4c.ErrorCode(err) != "R4C-REG-010" {
		t.Fatalf("%v", err)
	}
	if r4c.ErrorCode(nil) != "" || r4c.ErrorCode(errors.New("plain")) != "" {
		t.Fatal("ErrorCode of a non-config error")
	}
}

func TestSnapshotListsEveryInstanceSorted(t *testing.T) {
	reg, _ := newRegistry(t)
	for _, id := range []string{"b", "c", "a"} {
		newPipeline[string](t, reg, id, r4c.AdaptiveLimitConfig{})
	}
	var ids []string
	for _, s := range reg.Snapshot().AdaptiveLimits {
		ids = append(ids, s.ID)
		if s.Limit != 20 || s.MinLimit != 1 || s.MaxLimit != 200 || s.Algorithm != r4c.Gradient2 || !s.Enabled {
			t.Fatalf("%+v", s)
		}
	}
	if strings.Join(ids, ",") != "a,b,c" {
		t.Fatalf("%v", ids)
	}
}

func TestObserversSeeOnlyRareEvents(t *testing.T) {
	var mu sync.Mutex
	var events []r4c.Event
	reg, clock := newRegistry(t, r4c.WithObserver(func(e r4c.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}))
	cfg := aimd
	cfg.InitialLimit = 1
	cfg.MinLimit = 1
	cfg.DropOn = []error{errOverloaded}
	p := newPipeline[string](t, reg, "obs", cfg)
	h := handle(t, reg, "obs")

	mustExecute(t, p, taking(clock, 100*time.Millisecond, nil)) // admitted, window not over
	if len(events) != 0 {
		t.Fatalf("an admitted call published %v", events)
	}
	held := acquire(t, h)
	if _, err := p.Execute(t.Context(), taking(clock, 0, nil)); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	held.Success() // window: max in flight 1 of 1, grows to 2
	_, _ = p.Execute(t.Context(), taking(clock, time.Second, errOverloaded))
	// 2 -> int(2*0.5) = 1
	want := []r4c.Event{
		{Type: r4c.EventRejected, Kind: "adaptivelimit", Instance: "obs", Limit: 1},
		{Type: r4c.EventLimitChanged, Kind: "adaptivelimit", Instance: "obs", OldLimit: 1, Limit: 2},
		{Type: r4c.EventLimitChanged, Kind: "adaptivelimit", Instance: "obs", OldLimit: 2, Limit: 1},
	}
	if len(events) != len(want) {
		t.Fatalf("events %+v, want %+v", events, want)
	}
	for i := range want {
		if events[i] != want[i] {
			t.Fatalf("event %d: %+v, want %+v", i, events[i], want[i])
		}
	}
	// A window that keeps the limit publishes nothing: one call in flight of 1 with AIMD at
	// its minimum and a drop keeps 1.
	_, _ = p.Execute(t.Context(), taking(clock, time.Second, errOverloaded))
	if len(events) != len(want) || h.Snapshot().Windows != 3 {
		t.Fatalf("a window that kept the limit published: %+v", events[len(want):])
	}
	if r4c.EventRejected.String() != "rejected" || r4c.EventLimitChanged.String() != "limit_changed" {
		t.Fatal("event type names")
	}
}

func TestEveryCodeIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []string{"R4C-ATR-001", "R4C-ATR-002", "R4C-ATR-003", "R4C-ATR-009",
		"R4C-REG-001", "R4C-REG-004", "R4C-REG-008", "R4C-REG-009", "R4C-REG-010",
		"R4C-REG-011", "R4C-REG-012", "R4C-REG-013",
		"R4C-CFG-001", "R4C-CFG-002", "R4C-CFG-003", "R4C-CALL-001"} {
		if !strings.Contains(string(doc), "## "+code+":") {
			t.Errorf("docs/errors.md has no section for %s", code)
		}
	}
}

// Limits out of order are checked when all layers meet, at pipeline construction, whatever
// source each value came from, and the message names the source of each; nothing is registered
// then.
func TestLimitsOutOfOrderAcrossSources(t *testing.T) {
	props := filepath.Join(t.TempDir(), "app.properties")
	if err := os.WriteFile(props, []byte("# limits\ninstances.orders.adaptiveLimit.minLimit=12\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reg, err := r4c.NewRegistry(
		r4c.WithProperties(map[string]string{"instances.orders.adaptiveLimit.maxLimit": "10"}),
		r4c.WithDefaults(r4c.AdaptiveLimitConfig{InitialLimit: 15}),
		r4c.WithPropertiesFile(props),
	)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r4c.NewPipeline[string](reg, "orders", r4c.AdaptiveLimitConfig{})
	if r4c.ErrorCode(err) != "R4C-ATR-009" || !strings.Contains(err.Error(),
		"have minLimit 12 ("+props+":2), initialLimit 15 (WithDefaults), maxLimit 10 (WithProperties)") {
		t.Fatalf("%v", err)
	}
	_, err = r4c.NewPipeline[string](reg, "other", r4c.AdaptiveLimitConfig{MinLimit: 30, MaxLimit: 40})
	if r4c.ErrorCode(err) != "R4C-ATR-009" || !strings.Contains(err.Error(), "initialLimit 15 (WithDefaults)") {
		t.Fatalf("%v", err)
	}
	if _, err := reg.AdaptiveLimit("orders"); r4c.ErrorCode(err) != "R4C-REG-009" {
		t.Fatalf("a failed pipeline registered its instance: %v", err)
	}
}
