package r4c_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/directive"
)

func TestParseDirective(t *testing.T) {
	d, err := directive.Parse("//r4c:adaptivelimit name=orders initialLimit=10 maxLimit=100 window=500ms")
	if err != nil {
		t.Fatal(err)
	}
	if d.Policy != "adaptivelimit" || d.Name != "orders" || len(d.Attrs) != 3 || d.Attrs[0].Key != "initialLimit" || d.Attrs[0].Offset != 32 {
		t.Fatalf("%+v", d)
	}
	d, err = directive.Parse("//r4c:timeout 2s")
	if err != nil || len(d.Attrs) != 1 || d.Attrs[0].Key != "timeout" || d.Attrs[0].Value != "2s" {
		t.Fatalf("%+v %v", d, err)
	}
	checkDirectiveErrors(t, []directiveErrorCase{
		{"//r4c:adaptivelimit window=5x", "R4C-ATR-001", 27, "window=5x"},
		{"//r4c:adaptivelimit maxLimt=5", "R4C-ATR-002", 20, "did you mean maxLimit"},
		{"//r4c:adaptivlimit", "R4C-ATR-002", 6, "did you mean //r4c:adaptivelimit"},
		{"//r4c:adaptivelimit maxLimit=0", "R4C-ATR-003", 29, "at least 1"},
		{"//r4c:adaptivelimit initialLimit=300 maxLimit=100", "R4C-ATR-009", 20, "initialLimit=300 is above maxLimit=100"},
		{"//r4c:adaptivelimit window=2h", "R4C-ATR-009", 27, "from 1ms to 1h"},
		{"//r4c:retry 3 2s", "R4C-ATR-002", 14, "not key=value"},
		{"//r4c:bulkhead maxConcurrent=x", "R4C-ATR-002", 29, "an integer"},
		{"//r4c:bulkhead maxConcurrent=1 maxConcurrent=2", "R4C-ATR-002", 31, "given twice"},
		{"//r4c:fallback method=1x", "R4C-ATR-002", 15, "not a method name"},
		{"//r4c:adaptivelimit dropOn=billing.Err-Nope", "R4C-ATR-002", 27, "not an error name"},
	})
	// Every problem of a directive at once.
	_, err = directive.Parse("//r4c:adaptivelimit window=5x maxLimit=0 nope=1")
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 3 {
		t.Fatalf("%d problems reported: %v", n, err)
	}
}

// goConfig parses directives and writes their merged attributes as the Go literal of their
// policy's config, as r4cgen does.
func goConfig(t *testing.T, texts ...string) directive.Config {
	t.Helper()
	var attrs []directive.Attr
	policy := ""
	for _, text := range texts {
		d, err := directive.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		policy = d.Policy
		attrs = append(attrs, d.Attrs...)
	}
	c, err := directive.GoConfig(policy, attrs)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// literal writes a Config as Go source, error lists by their names as written.
func literal(c directive.Config) string {
	var fields []string
	for _, f := range c.Fields {
		expr := f.Expr
		if expr == "" {
			expr = "[]error{" + strings.Join(f.Errors, ", ") + "}"
		}
		fields = append(fields, f.Name+": "+expr)
	}
	return c.Type + "{" + strings.Join(fields, ", ") + "}"
}

// A method's directives become its config literal: the type's then the method's attributes, the
// later winning, each field written as Go writes it (durations in their unit, sentinels and
// enumerations by name, error lists by their names for the generator to resolve).
func TestDirectivesBecomeConfigLiterals(t *testing.T) {
	for _, c := range []struct {
		texts []string
		want  string
	}{
		{[]string{"//r4c:adaptivelimit maxLimit=50 initialLimit=5", "//r4c:adaptivelimit initialLimit=10 config=backend"},
			`r4c.AdaptiveLimitConfig{InitialLimit: 10, MaxLimit: 50, Config: "backend"}`},
		{[]string{"//r4c:adaptivelimit algorithm=aimd window=500ms dropOn=net.ErrClosed,r4c.ErrCallTimeout dropGuard=false queueSize=0"},
			"r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, Window: 500 * time.Millisecond, QueueSize: r4c.NoQueue, DropOn: []error{net.ErrClosed, r4c.ErrCallTimeout}, DropGuard: r4c.Off}"},
		{[]string{"//r4c:timeout 2s"}, "r4c.TimeoutConfig{Timeout: 2 * time.Second}"},
		{[]string{"//r4c:retry 3 wait=0 maxWait=1m30s jitter=0"}, "r4c.RetryConfig{MaxAttempts: 3, Wait: r4c.NoWait, MaxWait: 90 * time.Second, Jitter: r4c.NoJitter}"},
		{[]string{"//r4c:circuitbreaker 25 waitInOpen=1h"}, "r4c.CircuitBreakerConfig{FailureRateThreshold: 25, WaitInOpen: time.Hour}"},
		{[]string{"//r4c:adaptivelimit algorithm=vegas alpha=3 beta=6"}, "r4c.AdaptiveLimitConfig{Algorithm: r4c.Vegas, Alpha: 3, Beta: 6}"},
	} {
		if got := literal(goConfig(t, c.texts...)); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.texts, got, c.want)
		}
	}
}

// Shared gives one policy of a pipeline an instance id of its own: pipelines of other ids share
// it, and must then agree. The message names both: a generated method as a reader knows it
// (OrderClient#Place(string)), any other pipeline by its id.
func TestSharedGivesAPolicyItsOwnInstance(t *testing.T) {
	reg, _ := newRegistry(t)
	const place, cancel = "example.com/shop.OrderClient#Place(context.Context,string)", "example.com/shop.OrderClient#Cancel(context.Context,string)"
	if _, err := r4c.NewPipeline[string](reg, place, r4c.Shared("orders", r4c.AdaptiveLimitConfig{MaxLimit: 100}), r4c.TimeoutConfig{}); err != nil {
		t.Fatal(err)
	}
	if h, err := reg.AdaptiveLimit("orders"); err != nil || h.Config().MaxLimit != 100 {
		t.Fatalf("the limit shared as %q: %v", "orders", err)
	}
	if _, err := reg.Timeout(place); err != nil {
		t.Fatalf("the timeout keeps the pipeline's id: %v", err)
	}
	if _, err := r4c.NewPipeline[string](reg, "search", r4c.Shared("orders", r4c.AdaptiveLimitConfig{MaxLimit: 100})); err != nil {
		t.Fatalf("a second pipeline sharing it: %v", err)
	}
	_, err := r4c.NewPipeline[string](reg, cancel, r4c.Shared("orders", r4c.AdaptiveLimitConfig{MaxLimit: 50}))
	if r4c.ErrorCode(err) != "R4C-REG-008" || err.Error() != `R4C-REG-008: instance "orders" is shared by OrderClient#Place(string) and OrderClient#Cancel(string) with different adaptiveLimit settings: maxLimit 100 vs 50` {
		t.Fatalf("%v", err)
	}
	_, err = r4c.NewPipeline[string](reg, "other", r4c.Shared("orders", r4c.AdaptiveLimitConfig{MaxLimit: 50}))
	if !strings.Contains(err.Error(), `is shared by OrderClient#Place(string) and pipeline "other"`) {
		t.Fatalf("%v", err)
	}
	if _, err := r4c.NewRegistry(r4c.WithDefaults(r4c.Shared("x", r4c.BulkheadConfig{}))); r4c.ErrorCode(err) != "R4C-REG-001" {
		t.Fatalf("Shared in the registry's defaults: %v", err)
	}
	if _, err := r4c.NewPipeline[string](reg, "T#D()", r4c.Shared("", r4c.BulkheadConfig{})); r4c.ErrorCode(err) != "R4C-REG-001" {
		t.Fatalf("Shared without an id: %v", err)
	}
}

type greeter interface {
	Greet(ctx context.Context, name string) (string, error)
}

// neverWrapped has no registered wrapper (registrations are process-wide: greeter's stays).
type neverWrapped interface {
	Greet(ctx context.Context, name string) (string, error)
}

type plainGreeter struct{}

func (plainGreeter) Greet(_ context.Context, name string) (string, error) {
	return "hello " + name, nil
}

type wrappedGreeter struct {
	d greeter
	p *r4c.Pipeline[string]
}

func (w wrappedGreeter) Greet(ctx context.Context, name string) (string, error) {
	return w.p.Execute(ctx, func(ctx context.Context) (string, error) { return w.d.Greet(ctx, name) })
}

func TestOfFindsTheRegisteredWrapper(t *testing.T) {
	reg, _ := newRegistry(t)
	if _, err := r4c.Of[neverWrapped](plainGreeter{}, reg); r4c.ErrorCode(err) != "R4C-REG-012" {
		t.Fatalf("Of without a wrapper: %v", err)
	}
	r4c.RegisterWrapper(func(d greeter, reg *r4c.Registry) (greeter, error) {
		p, err := r4c.NewPipeline[string](reg, "r4c_test.greeter#Greet(context.Context,string)", r4c.AdaptiveLimitConfig{})
		return wrappedGreeter{d: d, p: p}, err
	})
	g, err := r4c.Of[greeter](plainGreeter{}, reg)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := g.Greet(context.Background(), "go"); s != "hello go" || err != nil {
		t.Fatal(s, err)
	}
	if _, err := reg.AdaptiveLimit("r4c_test.greeter#Greet(context.Context,string)"); err != nil {
		t.Fatal(err)
	}
}

// directiveErrorCase is a directive that does not parse, and what its error must say.
type directiveErrorCase struct {
	text   string
	code   string // the stable code, also through r4c.ErrorCode
	offset int    // where the problem starts
	part   string // a part of the message
}

// checkDirectiveErrors parses each directive and checks its error: a directive.Positioned with
// the code, at the offset, with the part in its message.
func checkDirectiveErrors(t *testing.T, cases []directiveErrorCase) {
	t.Helper()
	for _, tc := range cases {
		_, err := directive.Parse(tc.text)
		var de directive.Positioned
		if !errors.As(err, &de) || r4c.ErrorCode(de) != tc.code || de.DirectiveOffset() != tc.offset || !strings.Contains(err.Error(), tc.part) || r4c.ErrorCode(err) != tc.code {
			offset := -1
			if de != nil {
				offset = de.DirectiveOffset()
			}
			t.Errorf("%s: %v (offset %d), want %s at %d with %q", tc.text, err, offset, tc.code, tc.offset, tc.part)
		}
	}
}

// FuzzParseDirective: whatever the text, ParseDirective does not panic, every problem is a
// coded directive.Positioned at an offset inside the text, and every attribute it accepts starts at
// its offset.
func FuzzParseDirective(f *testing.F) {
	for _, s := range []string{"//r4c:adaptivelimit name=orders initialLimit=10 maxLimit=100 window=500ms",
		"//r4c:timeout 2s", "//r4c:retry 0", "//r4c:retry 3 2s", "//r4c:fallback method=Cached on=io.EOF",
		"//r4c:circuitbreaker slidingWindowSize=99999999999", "//r4c:adaptivelimit dropOn=", "//r4c:", "//r4c:hedge delay=1ms maxHedges=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		d, err := directive.Parse(text)
		if err != nil {
			errs := []error{err}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			}
			for _, e := range errs {
				var de directive.Positioned
				if !errors.As(e, &de) || r4c.ErrorCode(e) == "" || de.DirectiveOffset() < 0 || de.DirectiveOffset() > len(text) {
					t.Fatalf("%q: problem %v (%T) is not a coded directive.Positioned inside the text", text, e, e)
				}
			}
			return
		}
		for _, a := range d.Attrs {
			if a.Offset < 0 || a.Offset >= len(text) || !strings.HasPrefix(text[a.Offset:], a.Key) && !strings.HasPrefix(text[a.Offset:], a.Value) {
				t.Fatalf("%q: attribute %+v is not at its offset", text, a)
			}
		}
	})
}
