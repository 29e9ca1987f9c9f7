package r4c

import (
	"context"
	"fmt"
	"math"
	"sync"
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

// policyName returns "rateLimiter".
func (RateLimiterConfig) policyName() string { return policyRateLimiter }

func (c RateLimiterConfig) addTo(l layer, scope string, named bool) error {
	return addToLayer(&rateLimiterSpec, c, l, scope, named)
}

func (c RateLimiterConfig) namedConfig() string { return c.Config }

var rateLimiterSpec = policySpec[RateLimiterConfig]{
	main:     "limit",
	name:     policyRateLimiter,
	kind:     KindRateLimiter,
	goType:   "r4c.RateLimiterConfig",
	defaults: RateLimiterConfig{Limit: 50, Period: time.Second, MaxWait: NoWait, Enabled: On},
	named:    func(c *RateLimiterConfig) *string { return &c.Config },
	settings: []setting[RateLimiterConfig]{
		intSetting("limit", "at least 1",
			func(c *RateLimiterConfig) *int { return &c.Limit }, atLeastOne, codeLimitBelowOne).eg("100").
			describe("How many calls may start per period."),
		durationSetting("period", "a positive duration",
			func(c *RateLimiterConfig) *time.Duration { return &c.Period }, positive, codeInvalidSetting).eg("500ms").
			describe("The length of a period; permits refresh at each period's start."),
		waitSetting("maxWait", func(c *RateLimiterConfig) *time.Duration { return &c.MaxWait }).eg("50ms").
			describe("How long a call waits for a permit; 0 rejects at once."),
		toggleSetting(func(c *RateLimiterConfig) *Toggle { return &c.Enabled }, "false disables the rate limiter."),
	},
}

// RateLimiterHandle is one rate limiter instance of a registry. Get it with
// Registry.RateLimiter; it is safe for concurrent use.
//
// It follows resilience4j's AtomicRateLimiter on the registry's clock: time is cut into periods
// of Period from the instance's creation, and each period grants Limit permits; permits left
// unused expire with their period. A call takes one permit. With MaxWait, a call that finds the
// period spent reserves a permit of the earliest future period that still has one, if that
// period starts within MaxWait, and waits for it on a timer; reservations are served in the
// order of their periods. A mutex guards the state; a call that does not wait allocates nothing.
type RateLimiterHandle struct {
	rejected atomic.Int64

	id        string
	cfg       RateLimiterConfig
	enabled   bool
	limit     int
	period    int64 // nanoseconds
	maxWait   time.Duration
	clock     Clock
	start     int64 // h.clock.Nanotime() at creation: period 0 starts there
	rejection *RateLimitedError
	reg       *Registry

	mu       sync.Mutex
	cycle    int64 // the period whose permits used counts: (now-start)/period when last seen
	used     int   // permits taken in period cycle, reservations included (<= limit)
	ahead    []int // ahead[i]: permits reserved in period cycle+1+i (each <= limit)
	reserved int   // the sum of ahead
	waiting  int   // calls waiting for a reserved permit
}

func newRateLimiter(reg *Registry, id string) func(RateLimiterConfig) *RateLimiterHandle {
	return func(cfg RateLimiterConfig) *RateLimiterHandle {
		h := &RateLimiterHandle{id: id, cfg: cfg, enabled: cfg.Enabled != Off, maxWait: effectiveWait(cfg.MaxWait),
			limit: cfg.Limit, period: int64(cfg.Period), clock: reg.clock, start: reg.clock.Nanotime(), reg: reg,
			rejection: &RateLimitedError{instanceError: instanceError{id: id, sentinel: ErrRateLimited,
				msg: fmt.Sprintf("r4c: rate limiter %q has no permit: %d calls per %v", id, cfg.Limit, cfg.Period)}}}
		h.rejection.h = h
		return h
	}
}

// advanceLocked brings the state to the period the clock is in and returns the nanoseconds
// elapsed since the start. Entering a later period frees its permits: the reservations made
// for it become its used permits, and nothing left over from earlier periods carries on.
func (h *RateLimiterHandle) advanceLocked(now int64) int64 {
	elapsed := now - h.start
	cycle := elapsed / h.period
	if k := cycle - h.cycle; k > 0 {
		h.cycle = cycle
		if k <= int64(len(h.ahead)) {
			h.used = h.ahead[k-1]
			for _, n := range h.ahead[:k] {
				h.reserved -= n
			}
			h.ahead = h.ahead[:copy(h.ahead, h.ahead[k:])]
		} else {
			h.used = 0
			h.ahead = h.ahead[:0]
			h.reserved = 0
		}
	}
	return elapsed
}

// acquire takes a permit, waiting up to MaxWait, or returns the rejection or ctx's error.
func (h *RateLimiterHandle) acquire(ctx context.Context) error {
	wait, cycle, err := h.reserve(ctx)
	if err != nil || wait == 0 {
		return err
	}
	err = sleep(ctx, h.clock, wait)
	h.endWait(cycle, err == nil)
	return err
}

// reserve takes a permit of the current period (wait 0), or reserves one of the period cycle,
// which starts after wait: the caller waits for it, then calls endWait. It returns the
// rejection when no period within MaxWait has a permit left, or ctx's error instead of
// waiting when ctx is done.
func (h *RateLimiterHandle) reserve(ctx context.Context) (wait time.Duration, cycle int64, err error) {
	if !h.enabled {
		return 0, 0, nil
	}
	// Read the clock before taking the lock: a read under it would make the calls take turns
	// for 25ns each. A reading a little older than another goroutine's only means this call
	// sees the period that goroutine already moved to (k <= 0 in advanceLocked).
	now := h.clock.Nanotime()
	h.mu.Lock()
	elapsed := h.advanceLocked(now)
	if h.used < h.limit {
		h.used++
		h.mu.Unlock()
		return 0, 0, nil
	}
	if h.maxWait == 0 {
		h.mu.Unlock()
		return 0, 0, h.reject()
	}
	// The earliest future period with a permit left: the first not full (a cancelled
	// reservation leaves a hole), else the one after the last reserved.
	i := 0
	for i < len(h.ahead) && h.ahead[i] >= h.limit {
		i++
	}
	cycle = h.cycle + 1 + int64(i)
	wait = time.Duration(math.MaxInt64) // a period that starts beyond the end of time
	if cycle <= math.MaxInt64/h.period {
		wait = time.Duration(cycle*h.period - elapsed)
	}
	if wait > h.maxWait {
		h.mu.Unlock()
		return 0, 0, h.reject()
	}
	if err := ctx.Err(); err != nil {
		h.mu.Unlock()
		return 0, 0, err
	}
	if i == len(h.ahead) {
		h.ahead = append(h.ahead, 0)
	}
	h.ahead[i]++
	h.reserved++
	h.waiting++
	h.mu.Unlock()
	return wait, cycle, nil
}

// endWait ends the wait for a permit reserved in period cycle: got reports that the wait ran
// its course (the permit is the caller's); otherwise the caller gave up and the permit goes
// back.
func (h *RateLimiterHandle) endWait(cycle int64, got bool) {
	h.mu.Lock()
	h.waiting--
	if !got {
		h.giveBackLocked(cycle)
	}
	h.mu.Unlock()
}

// giveBackLocked returns a permit reserved in period cycle by a call that stopped waiting. If
// that period has begun, the permit is free again in it; if it has ended, the permit expired.
func (h *RateLimiterHandle) giveBackLocked(cycle int64) {
	h.advanceLocked(h.clock.Nanotime())
	switch d := cycle - h.cycle; {
	case d == 0:
		h.used--
	case d > 0:
		h.ahead[d-1]--
		h.reserved--
	}
}

func (h *RateLimiterHandle) reject() error {
	h.rejected.Add(1)
	if h.reg.observed {
		h.reg.publish(Event{Type: EventRejected, Kind: KindRateLimiter, Instance: h.id})
	}
	return h.rejection
}

// nextPermit returns how long from now until the first period with a permit not yet taken or
// reserved: 0 if the current period has one.
func (h *RateLimiterHandle) nextPermit() time.Duration {
	if !h.enabled {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	elapsed := h.advanceLocked(h.clock.Nanotime())
	if h.used < h.limit {
		return 0
	}
	next := h.cycle + 1
	for _, n := range h.ahead {
		if n < h.limit {
			break
		}
		next++
	}
	return time.Duration(next*h.period - elapsed)
}

// Config returns the instance's resolved configuration.
func (h *RateLimiterHandle) Config() RateLimiterConfig { return h.cfg }

// RateLimiterSnapshot is a reading of a rate limiter's state.
type RateLimiterSnapshot struct {
	ID      string
	Enabled bool
	Limit   int
	Period  time.Duration
	MaxWait time.Duration
	// AvailablePermits is how many permits the current period has left, less the permits
	// reserved in later periods: negative while calls wait for reserved permits (as in
	// resilience4j). A disabled rate limiter reports Limit.
	AvailablePermits int
	Waiting          int   // calls waiting for a reserved permit
	Rejected         int64 // calls rejected since the instance was created
}

// Snapshot returns the rate limiter's state.
func (h *RateLimiterHandle) Snapshot() RateLimiterSnapshot {
	h.mu.Lock()
	h.advanceLocked(h.clock.Nanotime())
	available, waiting := h.limit-h.used-h.reserved, h.waiting
	h.mu.Unlock()
	return RateLimiterSnapshot{ID: h.id, Enabled: h.enabled, Limit: h.limit, Period: h.cfg.Period, MaxWait: h.maxWait,
		AvailablePermits: available, Waiting: waiting, Rejected: h.rejected.Load()}
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

// String writes the configuration as its keys and values, as docs/configuration.md documents
// them ("rateLimiter{...}"); settings not set are left out.
func (c RateLimiterConfig) String() string { return rateLimiterSpec.text(c) }
