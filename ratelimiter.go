package r4c

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// RateLimiterConfig configures a rate limiter: at most Limit calls start per Period. A zero
// field means "not set here" (see AdaptiveLimitConfig).
type RateLimiterConfig struct {
	// Limit is how many calls may start per period (default 50).
	Limit int
	// Period is the length of a period (default 1s); permits refresh at each period's start.
	Period time.Duration
	// MaxWait is how long a call waits for a permit (default 0: reject at once). Use NoWait to
	// set 0 over a layer that sets a wait.
	MaxWait time.Duration
	// Enabled turns the rate limiter Off or back On.
	Enabled Toggle
	// Config names a configuration registered with WithConfig to start from.
	Config string
}

const policyRateLimiter = "rateLimiter"

// PolicyName returns "rateLimiter".
func (RateLimiterConfig) PolicyName() string { return policyRateLimiter }

func (c RateLimiterConfig) addTo(l layer, scope string, named bool) error {
	return addToLayer(&rateLimiterSpec, c, l, scope, named)
}

func (c RateLimiterConfig) namedConfig() string { return c.Config }

var rateLimiterSpec = policySpec[RateLimiterConfig]{
	name:     policyRateLimiter,
	kind:     KindRateLimiter,
	goType:   "r4c.RateLimiterConfig",
	defaults: RateLimiterConfig{Limit: 50, Period: time.Second, MaxWait: NoWait, Enabled: On},
	named:    func(c *RateLimiterConfig) *string { return &c.Config },
	settings: []setting[RateLimiterConfig]{
		intSetting("limit", "at least 1",
			func(c *RateLimiterConfig) *int { return &c.Limit }, atLeastOne, CodeLimitBelowOne).
			describe("How many calls may start per period."),
		durationSetting("period", "a positive duration",
			func(c *RateLimiterConfig) *time.Duration { return &c.Period }, positive, CodeInvalidSetting).
			describe("The length of a period; permits refresh at each period's start."),
		waitSetting("maxWait", func(c *RateLimiterConfig) *time.Duration { return &c.MaxWait }).
			describe("How long a call waits for a permit; 0 rejects at once."),
		toggleSetting(func(c *RateLimiterConfig) *Toggle { return &c.Enabled }, "false disables the rate limiter."),
	},
}

// RateLimiterHandle is one rate limiter instance of a registry. Get it with
// Registry.RateLimiter; it is safe for concurrent use.
type RateLimiterHandle struct {
	rejected atomic.Int64

	id        string
	cfg       RateLimiterConfig
	enabled   bool
	maxWait   time.Duration
	clock     Clock
	rejection *RateLimitedError
	reg       *Registry
}

func newRateLimiter(reg *Registry, id string) func(RateLimiterConfig) *RateLimiterHandle {
	return func(cfg RateLimiterConfig) *RateLimiterHandle {
		return &RateLimiterHandle{id: id, cfg: cfg, enabled: cfg.Enabled != Off, maxWait: effectiveWait(cfg.MaxWait),
			clock: reg.clock, reg: reg,
			rejection: &RateLimitedError{instanceError{id: id, sentinel: ErrRateLimited,
				msg: fmt.Sprintf("r4c: rate limiter %q has no permit: %d calls per %v", id, cfg.Limit, cfg.Period)}}}
	}
}

// acquire takes a permit, waiting up to MaxWait, or returns the rejection or ctx's error.
func (h *RateLimiterHandle) acquire(ctx context.Context) error {
	return nil // TODO: implemented separately
}

// ID returns the instance id.
func (h *RateLimiterHandle) ID() string { return h.id }

// Config returns the instance's resolved configuration.
func (h *RateLimiterHandle) Config() RateLimiterConfig { return h.cfg }

// RateLimiterSnapshot is a reading of a rate limiter's state.
type RateLimiterSnapshot struct {
	ID       string
	Enabled  bool
	Limit    int
	Period   time.Duration
	Rejected int64 // calls rejected since the instance was created
}

// Snapshot returns the rate limiter's state.
func (h *RateLimiterHandle) Snapshot() RateLimiterSnapshot {
	return RateLimiterSnapshot{ID: h.id, Enabled: h.enabled, Limit: h.cfg.Limit, Period: h.cfg.Period, Rejected: h.rejected.Load()}
}

func (h *RateLimiterHandle) snapshotAny() any { return h.Snapshot() }

// RateLimiter returns the rate limiter instance id, or an error with code R4C-REG-009.
func (r *Registry) RateLimiter(id string) (*RateLimiterHandle, error) {
	return lookup[*RateLimiterHandle](r, policyRateLimiter, id)
}

// rateLimiterStage takes a permit before the rest of the pipeline runs. A permit is spent when
// taken: calls that inner policies reject have used theirs.
func rateLimiterStage[T any](h *RateLimiterHandle) stage[T] {
	return func(next call[T]) call[T] {
		return func(ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
			if err := h.acquire(ctx); err != nil {
				var zero T
				return zero, err
			}
			return next(ctx, fn)
		}
	}
}
