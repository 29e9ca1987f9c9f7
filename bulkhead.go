package r4c

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// BulkheadConfig configures a bulkhead: a fixed limit on calls running at once. A zero field
// means "not set here" (see AdaptiveLimitConfig).
type BulkheadConfig struct {
	// MaxConcurrent is how many calls may run at once (default 25).
	MaxConcurrent int
	// MaxWait is how long a call waits for a slot when all are taken (default 0: reject at
	// once). Use NoWait to set 0 over a layer that sets a wait.
	MaxWait time.Duration
	// Enabled turns the bulkhead Off (every call passes) or back On.
	Enabled Toggle
	// Config names a configuration registered with WithConfig to start from.
	Config string
}

// NoWait is the value of a MaxWait field for "do not wait": the zero value means "not set here".
const NoWait time.Duration = -1

const policyBulkhead = "bulkhead"

// policyName returns "bulkhead".
func (BulkheadConfig) policyName() string { return policyBulkhead }

func (c BulkheadConfig) addTo(l layer, scope string, named bool) error {
	return addToLayer(&bulkheadSpec, c, l, scope, named)
}

func (c BulkheadConfig) namedConfig() string { return c.Config }

var bulkheadSpec = policySpec[BulkheadConfig]{
	main:     "maxConcurrent",
	name:     policyBulkhead,
	kind:     KindBulkhead,
	goType:   "r4c.BulkheadConfig",
	defaults: BulkheadConfig{MaxConcurrent: 25, MaxWait: NoWait, Enabled: On},
	named:    func(c *BulkheadConfig) *string { return &c.Config },
	settings: []setting[BulkheadConfig]{
		intSetting("maxConcurrent", "at least 1",
			func(c *BulkheadConfig) *int { return &c.MaxConcurrent }, atLeastOne, codeLimitBelowOne).eg("10").
			describe("How many calls may run at once."),
		waitSetting("maxWait",
			func(c *BulkheadConfig) *time.Duration { return &c.MaxWait }).eg("250ms").
			describe("How long a call waits for a slot when all are taken; 0 rejects at once."),
		toggleSetting(func(c *BulkheadConfig) *Toggle { return &c.Enabled },
			"false disables the bulkhead: every call passes."),
	},
}

// waitSetting is a duration that may be 0 (written NoWait in Go code, "0" in text) or positive.
func waitSetting[C any](key string, f func(*C) *time.Duration) setting[C] {
	s := durationSetting(key, "0 (NoWait in Go code) or a positive duration", f,
		func(d time.Duration) bool { return d >= 0 || d == NoWait }, codeInvalidSetting)
	format := s.format
	s.format = func(c *C) string {
		if *f(c) == NoWait {
			return "0s"
		}
		return format(c)
	}
	return s.zeroAs(func(c *C) bool { return *f(c) == 0 }, func(c *C) { *f(c) = NoWait })
}

// effectiveWait maps NoWait to 0.
func effectiveWait(d time.Duration) time.Duration { return max(d, 0) }

// BulkheadHandle is one bulkhead instance of a registry. Get it with Registry.Bulkhead; it is
// safe for concurrent use.
//
// Without MaxWait, taking and returning a slot are single atomic operations and allocate
// nothing. With MaxWait, a mutex guards the count and a FIFO queue of waiters; a waiter
// allocates its channel and a timer only when it has to wait.
type BulkheadHandle struct {
	inFlight atomic.Int64
	rejected atomic.Int64

	id        string
	cfg       BulkheadConfig
	enabled   bool
	max       int64
	maxWait   time.Duration
	clock     Clock
	rejection *BulkheadFullError
	reg       *Registry

	mu      sync.Mutex // with MaxWait: guards inFlight changes and waiters
	waiters list.List  // of *bulkheadWaiter, in arrival order
}

func newBulkhead(reg *Registry, id string) func(BulkheadConfig) *BulkheadHandle {
	return func(cfg BulkheadConfig) *BulkheadHandle {
		return &BulkheadHandle{
			id: id, cfg: cfg, enabled: cfg.Enabled != Off,
			max: int64(cfg.MaxConcurrent), maxWait: effectiveWait(cfg.MaxWait),
			clock: reg.clock, reg: reg,
			rejection: &BulkheadFullError{instanceError{id: id, sentinel: ErrBulkheadFull,
				msg: fmt.Sprintf("r4c: bulkhead %q full: every slot is taken", id)}},
		}
	}
}

// bulkheadWaiter is a call waiting for a slot: a synchronous one waits on ready, which is
// closed when it is handed a slot; an asynchronous one is handed its slot by a call of grant,
// in the goroutine that freed it.
type bulkheadWaiter struct {
	ready  chan struct{}
	grant  func()
	elem   *list.Element
	queued bool // in waiters; false once handed a slot or removed (guarded by mu)
}

// tryAcquire takes a slot if one is free at once (and nobody waits for one). Without MaxWait a
// call that finds none is rejected: tryAcquire then returns the rejection.
func (b *BulkheadHandle) tryAcquire() (bool, error) {
	if b.maxWait == 0 {
		// Lock-free: check, then an optimistic add undone when over (as the adaptive limit).
		if b.inFlight.Load() >= b.max {
			return false, b.reject()
		}
		if b.inFlight.Add(1) > b.max {
			b.inFlight.Add(-1)
			return false, b.reject()
		}
		return true, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inFlight.Load() < b.max && b.waiters.Len() == 0 {
		b.inFlight.Add(1)
		return true, nil
	}
	return false, nil
}

// enqueue adds w to the waiters, unless a slot is free now: then it takes the slot and
// reports true.
func (b *BulkheadHandle) enqueue(w *bulkheadWaiter) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inFlight.Load() < b.max && b.waiters.Len() == 0 {
		b.inFlight.Add(1)
		return true
	}
	w.elem, w.queued = b.waiters.PushBack(w), true
	return false
}

// dequeue removes w from the waiters. It reports false when w was handed a slot first: the
// slot is then w's, to release.
func (b *BulkheadHandle) dequeue(w *bulkheadWaiter) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !w.queued {
		return false
	}
	b.waiters.Remove(w.elem)
	w.queued = false
	return true
}

// acquire takes a slot, waiting up to MaxWait, or returns the rejection or ctx's error.
func (b *BulkheadHandle) acquire(ctx context.Context) error {
	if ok, err := b.tryAcquire(); ok || err != nil {
		return err
	}
	w := &bulkheadWaiter{ready: make(chan struct{})}
	if b.enqueue(w) {
		return nil
	}
	timer := b.clock.NewTimer(b.maxWait)
	defer timer.Stop()
	var err error
	select {
	case <-w.ready:
		return nil
	case <-timer.C():
		err = b.rejection
	case <-ctx.Done():
		err = ctx.Err()
	}
	if !b.dequeue(w) {
		return nil // handed a slot while giving up: keep it, the call can run
	}
	if err == b.rejection {
		return b.reject()
	}
	return err
}

func (b *BulkheadHandle) reject() error {
	b.rejected.Add(1)
	if b.reg.observed {
		b.reg.publish(Event{Type: EventRejected, Kind: KindBulkhead, Instance: b.id})
	}
	return b.rejection
}

// release returns a slot, handing it to the first waiter if there is one.
func (b *BulkheadHandle) release() {
	if b.maxWait == 0 {
		b.inFlight.Add(-1)
		return
	}
	b.mu.Lock()
	front := b.waiters.Front()
	if front == nil {
		b.inFlight.Add(-1)
		b.mu.Unlock()
		return
	}
	// The slot passes on: inFlight is unchanged.
	w := b.waiters.Remove(front).(*bulkheadWaiter)
	w.queued = false
	b.mu.Unlock()
	if w.grant != nil {
		w.grant()
	} else {
		close(w.ready)
	}
}

// InFlight returns how many calls hold a slot now.
func (b *BulkheadHandle) InFlight() int { return int(b.inFlight.Load()) }

// Config returns the instance's resolved configuration.
func (b *BulkheadHandle) Config() BulkheadConfig { return b.cfg }

// BulkheadSnapshot is a reading of a bulkhead's state.
type BulkheadSnapshot struct {
	ID            string
	Enabled       bool
	MaxConcurrent int
	MaxWait       time.Duration
	InFlight      int
	Waiting       int   // calls waiting for a slot
	Rejected      int64 // calls rejected since the instance was created
}

// Snapshot returns the bulkhead's state.
func (b *BulkheadHandle) Snapshot() BulkheadSnapshot {
	b.mu.Lock()
	waiting := b.waiters.Len()
	b.mu.Unlock()
	return BulkheadSnapshot{ID: b.id, Enabled: b.enabled, MaxConcurrent: int(b.max), MaxWait: b.maxWait,
		InFlight: int(b.inFlight.Load()), Waiting: waiting, Rejected: b.rejected.Load()}
}

func (b *BulkheadHandle) snapshotAny() any { return b.Snapshot() }

// bulkheadStage applies a bulkhead: take a slot (waiting up to MaxWait), run the rest, return
// the slot even if the rest panics.
func bulkheadStage[T any](b *BulkheadHandle) stage[T] {
	return func(next call[T]) call[T] {
		return func(ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
			if err := b.acquire(ctx); err != nil {
				var zero T
				return zero, err
			}
			defer b.release()
			return next(ctx, fn)
		}
	}
}

// Bulkhead returns the bulkhead instance id, or an error with code R4C-REG-009.
func (r *Registry) Bulkhead(id string) (*BulkheadHandle, error) {
	return lookup[*BulkheadHandle](r, policyBulkhead, id)
}

// String writes the configuration as its keys and values, as docs/configuration.md documents
// them ("bulkhead{...}"); settings not set are left out.
func (c BulkheadConfig) String() string { return bulkheadSpec.text(c) }
