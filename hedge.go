package r4c

import (
	"context"
	"sync/atomic"
	"time"
)

// HedgeConfig configures a hedge: when an attempt is slow, extra attempts are launched and the
// first success wins. A zero field means "not set here" (see AdaptiveLimitConfig).
type HedgeConfig struct {
	// Delay is how long an attempt runs before the next one is launched (default 100ms).
	Delay time.Duration
	// MaxHedges is how many extra attempts may be launched (default 1).
	MaxHedges int
	// Enabled turns the hedge Off (one attempt) or back On.
	Enabled Toggle
	// Config names a configuration registered with WithConfig to start from.
	Config string
}

const policyHedge = "hedge"

// PolicyName returns "hedge".
func (HedgeConfig) PolicyName() string { return policyHedge }

func (c HedgeConfig) addTo(l layer, scope string, named bool) error {
	return addToLayer(&hedgeSpec, c, l, scope, named)
}

func (c HedgeConfig) namedConfig() string { return c.Config }

var hedgeSpec = policySpec[HedgeConfig]{
	name:     policyHedge,
	kind:     KindHedge,
	goType:   "r4c.HedgeConfig",
	defaults: HedgeConfig{Delay: 100 * time.Millisecond, MaxHedges: 1, Enabled: On},
	named:    func(c *HedgeConfig) *string { return &c.Config },
	settings: []setting[HedgeConfig]{
		durationSetting("delay", "a positive duration",
			func(c *HedgeConfig) *time.Duration { return &c.Delay }, positive, CodeInvalidSetting).
			describe("How long an attempt runs before the next one is launched."),
		intSetting("maxHedges", "at least 1",
			func(c *HedgeConfig) *int { return &c.MaxHedges }, atLeastOne, CodeInvalidSetting).
			describe("How many extra attempts may be launched."),
		toggleSetting(func(c *HedgeConfig) *Toggle { return &c.Enabled }, "false disables the hedge: one attempt."),
	},
}

// HedgeHandle is one hedge instance of a registry. Get it with Registry.Hedge.
type HedgeHandle struct {
	calls, hedges, hedgeWins atomic.Int64

	id      string
	cfg     HedgeConfig
	enabled bool
	clock   Clock
	reg     *Registry
}

func newHedge(reg *Registry, id string) func(HedgeConfig) *HedgeHandle {
	return func(cfg HedgeConfig) *HedgeHandle {
		return &HedgeHandle{id: id, cfg: cfg, enabled: cfg.Enabled != Off, clock: reg.clock, reg: reg}
	}
}

// ID returns the instance id.
func (h *HedgeHandle) ID() string { return h.id }

// Config returns the instance's resolved configuration.
func (h *HedgeHandle) Config() HedgeConfig { return h.cfg }

// HedgeSnapshot is a reading of a hedge's counters.
type HedgeSnapshot struct {
	ID        string
	Enabled   bool
	Delay     time.Duration
	MaxHedges int
	Calls     int64 // calls that went through the hedge
	Hedges    int64 // extra attempts launched
	HedgeWins int64 // calls won by an extra attempt
}

// Snapshot returns the hedge's counters.
func (h *HedgeHandle) Snapshot() HedgeSnapshot {
	return HedgeSnapshot{ID: h.id, Enabled: h.enabled, Delay: h.cfg.Delay, MaxHedges: h.cfg.MaxHedges,
		Calls: h.calls.Load(), Hedges: h.hedges.Load(), HedgeWins: h.hedgeWins.Load()}
}

func (h *HedgeHandle) snapshotAny() any { return h.Snapshot() }

// Hedge returns the hedge instance id, or an error with code R4C-REG-009.
func (r *Registry) Hedge(id string) (*HedgeHandle, error) {
	return lookup[*HedgeHandle](r, policyHedge, id)
}

// hedgeStage: TODO, implemented separately. For now one attempt.
func hedgeStage[T any](h *HedgeHandle) stage[T] {
	return func(next call[T]) call[T] {
		return func(ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
			h.calls.Add(1)
			return next(ctx, fn)
		}
	}
}
