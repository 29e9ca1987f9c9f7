package r4c_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
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
	if _, err := r4c.NewPipeline[string](reg, "x", r4c.AdaptiveLimitConfig{InitialLimit: 30, MaxLimit: 10}); r4c.ErrorCode(err) != r4c.CodeOutOfOrder {
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
