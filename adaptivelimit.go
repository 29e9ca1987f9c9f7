package r4c

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// AdaptiveLimitHandle is one adaptive limit instance of a registry: a concurrency limit that
// finds its own value. Pipelines and generated wrappers that share an id share it.
// Get it with Registry.AdaptiveLimit; it is safe for concurrent use.
//
// The per-call path is lock-free and allocation-free: taking a slot is an atomic add on the
// in-flight count, and recording a sample one atomic add on a word that packs the window's
// latency sum and sample count (so a sample is never split across two windows, never lost and
// never counted twice). The goroutine whose call ends a window recomputes the limit under a lock.
type AdaptiveLimitHandle struct {
	// Written by every call. Kept together: on the machines we measured, one shared cache line
	// bouncing between cores costs less than two.
	inFlight    atomic.Int64
	window      atomic.Uint64 // the current window's samples: latencySum<<countBits | count
	maxInFlight atomic.Int64  // the largest in-flight count admitted in the current window

	_ [64]byte // keep the fields read by every call off the line the calls write

	limit     atomic.Int64
	windowEnd atomic.Int64 // Nanotime at or after which the current window is over

	_ [64]byte

	// Written only by rejections: on its own line, so that a flood of rejections does not
	// bounce the line admitted calls write (a rejection at -cpu 2 measured 7.4 ns here against
	// 5.0 on the shared line).
	rejected atomic.Int64

	// Fixed at construction. What admission and rejection read comes first, on rejected's line.
	enabled bool
	queued  bool // the limit has partitions or a MaxWait, and admits through acquireQueued
	system  bool // the clock is the system clock: read it directly, no interface call
	// rejection is returned on every rejection; allocated once.
	rejection   *LimitExceededError
	reg         *Registry
	clock       Clock
	id          string
	cfg         AdaptiveLimitConfig // resolved: every field set
	dropOn      []error
	windowNanos int64
	minSamples  int64
	lockedAbove int64 // latencies of at least this many ns are recorded under mu (see recordLocked)

	// Calls waiting for a slot (MaxWait): a queue per priority, lowest first, guarded by wmu.
	maxWait      time.Duration
	maxWaiting   int
	waiting      atomic.Int64 // calls in the queues; zero without MaxWait
	waitTimeouts atomic.Int64
	wmu          sync.Mutex
	queues       [priorityLevels]list.List

	// Partitions (sorted by name; nil without): pmu serializes their admissions.
	parts []partition
	pmu   sync.Mutex

	mu sync.Mutex
	// Guarded by mu.
	alg AdaptiveAlgorithm
	// guard is alg when it is Gradient2 with DropGuard on, else nil: windows with a significant
	// share of drops go to guard.overloaded instead of Update (see dropGuarded).
	guard   *gradient2Limit
	guarded int64 // windows that went to guard.overloaded
	// sizer is alg when it chooses the length of its next window (Knee, while it climbs), else
	// nil: every window is then windowNanos long.
	sizer         windowSizer
	watchDrops    bool  // the sizer asked at the window's start to be asked at each drop (see windowSizer); under mu
	readEvery     int64 // the sizer asked at the window's start to read it every this many ns before its end (see windowSizer); 0: never
	fullEnd       int64 // Nanotime at which the current window ends; windowEnd is earlier while the sizer reads it before (see readEvery)
	spillSum      int64 // samples moved out of the packed word, still in the current window
	spillCount    int64
	spillDrop     bool
	spillDrops    int64
	windowStart   int64 // Nanotime at which the current window started
	rejectedStart int64 // rejected when the current window started
	windows       int64
	windowLatency time.Duration
	windowSamples int64
	limitChanges  int64
	samples       int64 // samples of the completed windows
	drops         int64 // drops of the completed windows
}

// The packed window word: the low countBits bits count samples, the high bits sum their
// latencies in nanoseconds. A sampler that sees either field past half its range moves the word
// into spillSum/spillCount under mu (a "spill"), so neither field can overflow: between the
// crossing and the spill, only calls that still hold a slot can add, at most MaxLimit of them,
// each adding less than lockedAbove = (half the sum range) / MaxLimit.
const (
	countBits  = 20
	countMask  = 1<<countBits - 1
	countSpill = 1 << (countBits - 1)
	sumSpill   = 1 << 63 // the top bit of the word: the sum field past half its 44-bit range
	// maxPackedLimit is the largest MaxLimit for which the count field cannot overflow; above
	// it every sample is recorded under the lock.
	maxPackedLimit = 1 << (countBits - 2)
)

// newAdaptiveLimit returns the constructor of adaptive limit id in reg.
func newAdaptiveLimit(reg *Registry, id string) func(AdaptiveLimitConfig) *AdaptiveLimitHandle {
	return func(cfg AdaptiveLimitConfig) *AdaptiveLimitHandle { return makeAdaptiveLimit(reg, id, cfg) }
}

func makeAdaptiveLimit(reg *Registry, id string, cfg AdaptiveLimitConfig) *AdaptiveLimitHandle {
	l := &AdaptiveLimitHandle{
		id:          id,
		cfg:         cfg,
		enabled:     cfg.Enabled != Off,
		clock:       reg.clock,
		system:      reg.systemClock,
		rejection:   newLimitExceededError(id),
		dropOn:      cfg.DropOn,
		windowNanos: int64(cfg.Window),
		minSamples:  int64(cfg.MinWindowSamples),
		reg:         reg,
		maxWait:     effectiveWait(cfg.MaxWait),
		maxWaiting:  cfg.MaxWaiting,
		parts:       newPartitions(cfg.Partitions),
		queued:      len(cfg.Partitions) > 0 || effectiveWait(cfg.MaxWait) > 0,
		alg:         cfg.newAlgorithm(),
	}
	if g, ok := l.alg.(*gradient2Limit); ok && cfg.DropGuard != Off {
		l.guard = g
	}
	l.sizer, _ = l.alg.(windowSizer)
	if l.sizer != nil {
		l.readEvery = int64(l.sizer.readsEvery())
	}
	if cfg.MaxLimit <= maxPackedLimit {
		l.lockedAbove = (1 << 43) / int64(cfg.MaxLimit)
	}
	l.limit.Store(int64(cfg.InitialLimit))
	if l.enabled {
		l.windowStart = l.nanotime()
		l.setEnd(l.windowStart+l.windowNanos, l.windowStart)
	}
	return l
}

func (l *AdaptiveLimitHandle) nanotime() int64 {
	if l.system {
		return int64(time.Since(processStart))
	}
	return l.clock.Nanotime()
}

// acquire takes a slot and returns the start time of the call, or the instance's preallocated
// rejection. A rejection reads no clock and allocates nothing.
func (l *AdaptiveLimitHandle) acquire() (int64, error) {
	if !l.enabled {
		return 0, nil
	}
	if l.queued {
		return l.acquireQueued() // partitions, or calls that may be waiting: kept out of this path
	}
	// Check before adding, so that a full limit rejects without writing the shared counter.
	limit := l.limit.Load()
	if l.inFlight.Load() >= limit {
		return 0, l.reject()
	}
	// Optimistic add, undone when over: under contention this beats a CAS loop (docs/performance.md).
	n := l.inFlight.Add(1)
	if n > limit {
		l.inFlight.Add(-1)
		return 0, l.reject()
	}
	if n > l.maxInFlight.Load() {
		l.raiseMaxInFlight(n)
	}
	return l.nanotime(), nil
}

// acquireQueued is acquire for a limit with partitions or a MaxWait: a call without a partition
// takes what no guarantee reserves, and no call takes a free slot ahead of the calls waiting
// for one.
func (l *AdaptiveLimitHandle) acquireQueued() (int64, error) {
	if l.parts != nil {
		return l.acquirePart(0)
	}
	if l.waiting.Load() == 0 && l.takeSlot() {
		return l.nanotime(), nil
	}
	return 0, l.reject()
}

func (l *AdaptiveLimitHandle) reject() error {
	l.rejected.Add(1)
	if l.reg.observed {
		l.reg.publish(Event{Type: EventRejected, Kind: KindAdaptiveLimit, Instance: l.id, Limit: int(l.limit.Load())})
	}
	return l.rejection
}

func (l *AdaptiveLimitHandle) raiseMaxInFlight(n int64) {
	for {
		m := l.maxInFlight.Load()
		if n <= m || l.maxInFlight.CompareAndSwap(m, n) {
			return
		}
	}
}

// outcome is how an admitted call ended, for the window.
type outcome uint8

const (
	outcomeSample outcome = iota // returned without error: a sample
	outcomeDrop                  // failed with an error in DropOn: a sample marked as a drop
	outcomeFree                  // any other failure, a cancellation or a panic: no sample
)

// classify maps a call's result to its outcome: nil is a sample; a failure after the caller's
// own context is done is a cancellation; a failure in DropOn is a drop; any other says nothing
// about load.
func (l *AdaptiveLimitHandle) classify(ctx context.Context, err error) outcome {
	if err == nil {
		return outcomeSample
	}
	if ctx != nil && ctx.Err() != nil || isIgnored(err) {
		return outcomeFree
	}
	if isDropped(err) {
		return outcomeDrop
	}
	for _, d := range l.dropOn {
		if errors.Is(err, d) {
			return outcomeDrop
		}
	}
	return outcomeFree
}

// release ends an admitted call started at start.
func (l *AdaptiveLimitHandle) release(s limitSlot, o outcome) {
	if !l.enabled {
		return
	}
	if o == outcomeFree {
		l.freeSlot(s.part)
		return
	}
	now := l.nanotime()
	lat := now - s.start
	if lat < 0 {
		lat = 0
	}
	// Record while still holding the slot: the overflow argument above counts on it.
	if o == outcomeDrop || lat >= l.lockedAbove {
		l.recordLocked(now, lat, o == outcomeDrop)
	} else if v := l.window.Add(uint64(lat)<<countBits | 1); v >= sumSpill || v&countMask >= countSpill {
		l.mu.Lock()
		l.spillLocked()
		l.mu.Unlock()
	}
	if s.part > 0 {
		l.parts[s.part-1].inFlight.Add(-1)
	}
	l.inFlight.Add(-1)
	if now >= l.windowEnd.Load() {
		l.endWindow(now)
	}
	// Hand the slot on after the window's end, so that a lowered limit applies to the waiters.
	if l.maxWait > 0 && l.waiting.Load() > 0 {
		l.admitWaiters()
	}
}

// recordLocked records a drop, or a latency too long for the packed word, under the lock.
// Drops are rare (they signal overload) and long calls are long: the lock costs them nothing
// that matters, and it keeps "this window saw a drop" exact.
// An algorithm that sizes its windows may end the window at a drop (see windowSizer.endsEarly):
// the caller then ends it, as at the window's end. Not before the window holds MinWindowSamples:
// a window ended with fewer would be extended by a whole Window instead.
func (l *AdaptiveLimitHandle) recordLocked(now, lat int64, drop bool) {
	l.mu.Lock()
	l.spillSum += lat
	l.spillCount++
	if drop {
		l.spillDrop = true
		l.spillDrops++
		if l.watchDrops {
			if n := l.spillCount + int64(l.window.Load()&countMask); n >= l.minSamples && l.sizer.endsEarly(int(n), int(l.spillDrops)) {
				l.setEnd(min(l.fullEnd, now), now)
			}
		}
	}
	l.mu.Unlock()
}

// setEnd sets the end of the current window at end, under mu, at now. Where the sizer reads the
// window before its end (readEvery), the window first ends readEvery after now, or at end if
// that is sooner: a reading (see endWindow).
func (l *AdaptiveLimitHandle) setEnd(end, now int64) {
	l.fullEnd = end
	if l.readEvery > 0 {
		end = min(end, now+l.readEvery)
	}
	l.windowEnd.Store(end)
}

func (l *AdaptiveLimitHandle) spillLocked() {
	v := l.window.Swap(0)
	l.spillSum += int64(v >> countBits)
	l.spillCount += int64(v & countMask)
}

// endWindow ends the current window if it is over and holds enough samples, or extends it by
// one Window if it has too few. A goroutine that finds another one already doing it moves on.
func (l *AdaptiveLimitHandle) endWindow(now int64) {
	if !l.mu.TryLock() {
		return
	}
	end := l.windowEnd.Load()
	if now < end {
		l.mu.Unlock()
		return
	}
	l.spillLocked()
	if now < l.fullEnd {
		// A reading before the window's end, which the sizer asked for (see windowSizer): the
		// window ends here if it says so, and goes on to the next reading otherwise.
		if l.spillCount < max(1, l.minSamples) || !l.sizer.endsAt(l.summaryLocked(now, l.rejected.Load())) {
			l.setEnd(l.fullEnd, now)
			l.mu.Unlock()
			return
		}
	} else if l.spillCount < l.minSamples {
		// Too few samples: extend by one Window; they count when it ends.
		l.setEnd(l.fullEnd+l.windowNanos, now)
		l.mu.Unlock()
		return
	}
	count := l.spillCount
	rejected := l.rejected.Load()
	summary := l.summaryLocked(now, rejected)
	old := l.limit.Load()
	var limit int64
	if l.guard != nil && dropGuarded(count, l.spillDrops) {
		limit = int64(l.guard.overloaded(summary))
		l.guarded++
	} else {
		limit = int64(l.alg.Update(summary))
	}
	l.limit.Store(limit)
	l.maxInFlight.Store(l.inFlight.Load())
	l.samples += count
	l.drops += l.spillDrops
	l.spillSum, l.spillCount, l.spillDrop, l.spillDrops = 0, 0, false, 0
	l.windowStart, l.rejectedStart = now, rejected
	next := l.windowNanos
	if l.sizer != nil {
		if d := int64(l.sizer.nextWindow()); d > 0 && d < next {
			next = d
		}
		l.watchDrops = l.sizer.watchesDrops()
		l.readEvery = int64(l.sizer.readsEvery())
	}
	l.setEnd(now+next, now)
	l.windows++
	l.windowLatency = summary.AvgLatency
	l.windowSamples = count
	if limit != old {
		l.limitChanges++
	}
	l.mu.Unlock()
	if limit > old && l.waiting.Load() > 0 {
		l.admitWaiters() // the new slots go to the calls waiting for one
	}
	if limit != old && l.reg.observed {
		l.reg.publish(Event{Type: EventLimitChanged, Kind: KindAdaptiveLimit, Instance: l.id, OldLimit: int(old), Limit: int(limit)})
	}
}

// summaryLocked returns the current window's summary at now, rejected being the count of
// rejections so far; under mu, with the window's samples spilled (see spillLocked) and at least
// one of them.
func (l *AdaptiveLimitHandle) summaryLocked(now, rejected int64) WindowSummary {
	avg := l.spillSum / l.spillCount
	if avg < 1 {
		avg = 1 // a manual clock can measure 0ns, and Gradient2 divides by the latency
	}
	return WindowSummary{AvgLatency: time.Duration(avg), MaxInFlight: int(l.maxInFlight.Load()), Dropped: l.spillDrop,
		Samples: int(l.spillCount), Drops: int(l.spillDrops), Rejected: int(rejected - l.rejectedStart),
		Duration: time.Duration(now - l.windowStart), End: l.clock.Now()}
}

// dropGuardShare sets the drop guard's threshold: a window is overloaded for Gradient2 when
// more than one sample in dropGuardShare is a drop (see dropGuarded).
const dropGuardShare = 10

// dropGuarded reports whether a window of samples samples, drops of them drops, is overloaded
// for Gradient2's drop guard (AdaptiveLimitConfig.DropGuard): more than one sample in ten is a
// drop. The threshold sits above the drops a tail latency alone produces (a timeout at the
// 95th percentile of latency times out 5% of calls at no load), with room for the binomial
// noise of a window of a few hundred samples, and below the share at which Gradient2's
// long-term latency starts learning timeouts. In the quality bench's simulator, a lower one
// (one in twenty) held the limit at 0.3 times the knee under lognormal latencies whose timeout
// cuts 5.4% of calls even without load; a higher one (one in five) let the limit drift to
// where a fifth of the calls time out. A single drop in a window of the default minimum of ten
// samples is not enough. See docs/adaptive-limit.md, "the drop guard".
func dropGuarded(samples, drops int64) bool {
	return drops*dropGuardShare > samples
}

// The adaptive limit as a pipeline gate: a slot and the start time of the call.
func (l *AdaptiveLimitHandle) admit(ctx context.Context) (limitSlot, error) {
	if l.queued {
		return l.acquireIn(ctx)
	}
	start, err := l.acquire() // directly: a call that can neither wait nor be partitioned pays no extra call
	return limitSlot{start: start}, err
}
func (l *AdaptiveLimitHandle) settle(ctx context.Context, s limitSlot, err error) {
	l.release(s, l.classify(ctx, err))
}
func (l *AdaptiveLimitHandle) abandon(s limitSlot) { l.release(s, outcomeFree) }

// limitSlot is what an admitted call holds of the limit: the start of its latency sample, and
// its partition (0: none; partition i is i+1).
type limitSlot struct {
	start int64
	part  int32
}

// acquirePart takes a slot for a call of partition part (0: none; partition i is i+1) of a limit with partitions,
// without waiting, or rejects it.
func (l *AdaptiveLimitHandle) acquirePart(part int32) (int64, error) {
	if !(l.maxWait > 0 && l.waiting.Load() > 0) && l.takePartitioned(part) {
		return l.nanotime(), nil
	}
	l.partitionRejected(part)
	return 0, l.reject()
}

// acquireIn takes a slot for a call with ctx: in ctx's partition, waiting if the limit has a
// MaxWait.
func (l *AdaptiveLimitHandle) acquireIn(ctx context.Context) (limitSlot, error) {
	if l.maxWait > 0 {
		return l.acquireWait(ctx)
	}
	if !l.enabled {
		return limitSlot{}, nil
	}
	part := l.partitionOf(ctx)
	start, err := l.acquirePart(part)
	return limitSlot{start: start, part: part}, err
}

// Limit returns how many calls may run at once now.
func (l *AdaptiveLimitHandle) Limit() int { return int(l.limit.Load()) }

// InFlight returns how many admitted calls are running now. A call being rejected may be
// counted for an instant (the limit adds a call before it compares, which is cheaper under
// contention than a compare-and-swap loop), so a reading can exceed the limit by the calls being
// rejected at that moment; it can also exceed a limit that a window just lowered.
func (l *AdaptiveLimitHandle) InFlight() int { return int(l.inFlight.Load()) }

// Config returns the instance's resolved configuration: every field set.
func (l *AdaptiveLimitHandle) Config() AdaptiveLimitConfig {
	c := l.cfg
	c.DropOn = append([]error(nil), c.DropOn...)
	return c
}

// AdaptiveLimitSnapshot is a consistent reading of an adaptive limit's state.
type AdaptiveLimitSnapshot struct {
	ID        string
	Algorithm LimitAlgorithm
	Enabled   bool
	Limit     int
	InFlight  int
	MinLimit  int
	MaxLimit  int
	// Windows counts completed windows, i.e. recomputations of the limit.
	Windows int64
	// WindowLatency is the average latency of the last completed window (0 before the first).
	WindowLatency time.Duration
	// WindowSamples is the number of samples of the last completed window.
	WindowSamples int64
	// Rejected counts calls rejected because every slot was taken.
	Rejected int64
	// LimitChanges counts windows after which the limit changed.
	LimitChanges int64
	// Waiting is how many calls wait for a slot now (MaxWait), and WaitTimeouts how many waits
	// ended without one at MaxWait or their context's deadline (each also counts in Rejected).
	Waiting      int
	WaitTimeouts int64
	// Partitions reads each partition (AdaptiveLimitConfig.Partitions), sorted by name; nil
	// without partitions.
	Partitions []PartitionSnapshot
	// Samples and Drops count the samples of the completed windows, and the drops among them
	// (calls that ended with an error in DropOn). They grow when a window ends: the samples of
	// the current window are not in them yet.
	Samples, Drops int64
	// Estimate is the algorithm's unrounded estimate (Gradient2, Vegas); equal to Limit for AIMD.
	Estimate float64
	// GuardedWindows counts the windows that Gradient2's drop guard (AdaptiveLimitConfig.DropGuard)
	// judged overloaded: they lowered the limit as if the gradient were at its floor and stayed
	// out of the long-term latency. Always 0 for the other algorithms and with DropGuard off.
	GuardedWindows int64
}

func (l *AdaptiveLimitHandle) snapshotAny() any { return l.Snapshot() }

// Snapshot returns the instance's state. It takes the window lock briefly.
func (l *AdaptiveLimitHandle) Snapshot() AdaptiveLimitSnapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := AdaptiveLimitSnapshot{
		ID: l.id, Algorithm: l.cfg.Algorithm, Enabled: l.enabled,
		Limit: int(l.limit.Load()), InFlight: int(l.inFlight.Load()),
		MinLimit: l.cfg.MinLimit, MaxLimit: l.cfg.MaxLimit,
		Windows: l.windows, WindowLatency: l.windowLatency, WindowSamples: l.windowSamples,
		Rejected: l.rejected.Load(), LimitChanges: l.limitChanges, Samples: l.samples, Drops: l.drops,
		Waiting: int(l.waiting.Load()), WaitTimeouts: l.waitTimeouts.Load(),
		Partitions: l.partitionSnapshots(l.limit.Load()),
		Estimate:   float64(l.limit.Load()), GuardedWindows: l.guarded,
	}
	if e, ok := l.alg.(estimator); ok {
		s.Estimate = e.Estimate()
	}
	return s
}

// estimator is an algorithm with an unrounded estimate behind its limit (Gradient2, Vegas).
type estimator interface{ Estimate() float64 }

// AdaptiveLimitPermit is a slot taken with AdaptiveLimitHandle.Acquire, for integrations that
// cannot hand the library a closure (HTTP middleware, gRPC interceptors). End it exactly once,
// with Release or one of Success, Drop and Ignore: a permit is a value, so a second end would
// free a slot twice. The zero permit's methods do nothing.
type AdaptiveLimitPermit struct {
	l    *AdaptiveLimitHandle
	slot limitSlot
}

// Acquire takes a slot, or returns the instance's *LimitExceededError at once when every slot
// is taken. It allocates nothing; a disabled instance always grants a permit.
func (l *AdaptiveLimitHandle) Acquire() (p AdaptiveLimitPermit, err error) {
	// Written to stay within the inliner's budget: a rejected permit is the zero value.
	if p.slot.start, err = l.acquire(); err == nil {
		p.l = l
	}
	return p, err
}

// Release ends the call with its result, classified as the pipeline does: nil is a sample; a
// failure once ctx (the caller's context) is done, or marked with Ignored, is a cancellation (no
// sample); a failure marked with Dropped, or in DropOn, is a drop; any other failure only frees
// the slot.
func (p AdaptiveLimitPermit) Release(ctx context.Context, err error) {
	if p.l != nil {
		p.l.release(p.slot, p.l.classify(ctx, err))
	}
}

// Success ends the call as a sample: its latency enters the window.
func (p AdaptiveLimitPermit) Success() {
	if p.l != nil {
		p.l.release(p.slot, outcomeSample)
	}
}

// Drop ends the call as a drop: its latency enters the window and the window counts as
// overloaded.
func (p AdaptiveLimitPermit) Drop() {
	if p.l != nil {
		p.l.release(p.slot, outcomeDrop)
	}
}

// Ignore ends the call without a sample: for failures that say nothing about load, caller
// cancellations and panics.
func (p AdaptiveLimitPermit) Ignore() {
	if p.l != nil {
		p.l.release(p.slot, outcomeFree)
	}
}
