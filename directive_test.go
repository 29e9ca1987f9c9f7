package r4c_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

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

func TestNewWrappedMethod(t *testing.T) {
	reg, _ := newRegistry(t, r4c.WithConfig("backend", r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD}))
	const id = "example.com/shop.OrderClient#Place(context.Context,string)"
	_, err := r4c.NewWrappedMethod[string](reg, id, "OrderClient#Place(string)",
		"//r4c:adaptivelimit maxLimit=50 initialLimit=5",     // type level
		"//r4c:adaptivelimit initialLimit=10 config=backend", // method level: overrides initialLimit
		"//r4c:timeout 2s")
	if err != nil {
		t.Fatal(err)
	}
	h := handle(t, reg, id)
	if c := h.Config(); c.MaxLimit != 50 || c.InitialLimit != 10 || c.Algorithm != r4c.AIMD {
		t.Fatalf("%+v", c)
	}
	if to, err := reg.Timeout(id); err != nil || to.Config().Timeout != 2*time.Second {
		t.Fatal(err)
	}
	// name= shares an instance between methods, which must then agree.
	if _, err := r4c.NewWrappedMethod[string](reg, "x#A()", "T#A()", "//r4c:adaptivelimit name=shared maxLimit=100"); err != nil {
		t.Fatal(err)
	}
	if h, err := reg.AdaptiveLimit("shared"); err != nil || h.Config().MaxLimit != 100 {
		t.Fatalf("the limit of name=shared: %v", err)
	}
	_, err = r4c.NewWrappedMethod[string](reg, "x#B()", "T#B()", "//r4c:adaptivelimit name=shared maxLimit=50")
	if r4c.ErrorCode(err) != "R4C-REG-008" || !strings.Contains(err.Error(), "is shared by T#A() and T#B() with different adaptiveLimit settings: maxLimit 100 vs 50") {
		t.Fatalf("%v", err)
	}
	if _, err := r4c.NewWrappedMethod[string](reg, "x#C()", "T#C()", "//r4c:adaptivelimit maxLimt=1"); r4c.ErrorCode(err) != "R4C-ATR-002" {
		t.Fatalf("%v", err)
	}
	// Error names parse by their syntax; whether they are registered is checked at construction.
	if _, err := directive.Parse("//r4c:adaptivelimit dropOn=billing.ErrNotYetRegistered"); err != nil {
		t.Fatal(err)
	}
	_, err = r4c.NewWrappedMethod[string](reg, "x#D()", "T#D()", "//r4c:adaptivelimit dropOn=billing.ErrNotYetRegistered")
	if r4c.ErrorCode(err) != "R4C-ATR-002" || !strings.Contains(err.Error(), "T#D(): //r4c:adaptivelimit dropOn=billing.ErrNotYetRegistered is invalid") {
		t.Fatalf("%v", err)
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
	if _, err := r4c.Of[neverWrapped](plainGreeter{}, reg); r4c.ErrorCode(err) != r4c.CodeNoWrapper {
		t.Fatalf("Of without a wrapper: %v", err)
	}
	r4c.RegisterWrapper(func(d greeter, reg *r4c.Registry) (greeter, error) {
		p, err := r4c.NewWrappedMethod[string](reg, "r4c_test.greeter#Greet(context.Context,string)", "greeter#Greet(string)", "//r4c:adaptivelimit")
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
