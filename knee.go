package r4c

import (
	"math"
	"time"
)

// kneeLimit seeks the knee of the dependency: the smallest concurrency at which it delivers
// its full throughput. Below the knee a call's latency is the dependency's no-load latency and
// throughput grows with concurrency; above it, calls queue, latency grows in proportion and
// throughput does not. The limit follows the knee with a small tolerance of queueing.
//
// The model and its rules are in docs/adaptive-limit.md ("Knee"), why each exists in
// docs/knee-design.md. In short:
//   - It compares each window's latency with the no-load latency (base), which it measures
//     and never assumes: in drain windows, where the limit is lowered for one window (drains
//     fall on a grid of the wall clock, so that replicas of a service drain together, and
//     space out while they agree with base; where calls are long, a drain first lets those
//     admitted before it end; a drain window lasts only as long as its reading needs, see
//     drainLength), and whenever it changes the limit, from how latency responds.
//     Latency that follows a change of the limit is a queue; latency that does not is the
//     no-load latency (heavier calls).
//   - Latency above base by more than the tolerance (the larger of 10% and three standard
//     errors of the window's mean, at most 25%, or one call of queue over the limit where that
//     is more) cuts the limit in proportion, at most by half; latency within it holds; latency
//     at base grows the limit, faster the longer it stays there.
//   - Timeouts and other drops above the share seen without load cut the limit too; after a
//     growth, or once base is confirmed, drops far above that share end the window at once (see
//     watchesDrops). Drops that cuts do not lower, or that come steady from a cold start under
//     light load while latency does not rise, are the dependency's own (see ownDrops and
//     steadyDrops): they set that share instead.
//   - A window in which the limit did not bind changes it only to keep room above the calls
//     in flight (light load is never rejected), or, when the dependency queues, to bring it
//     down to them (a replica whose limit does not bind takes more than its share).
//   - A queue that vanishes under the limit that queued doubles the limit at once: the knee
//     rose past it (see queueVanished).
//   - After a growth of a quarter or more, the next window is shorter than the configured one
//     where its latency can still be read (see shortWindow): a climb takes a few short windows.
//     The first window ends as soon as it has read base, where the initial limit holds back as
//     many calls as it serves (see endsAt).
//
// It is deterministic: it draws nothing at random. It is not safe for concurrent use on its own;
// the engine calls it under its window lock.
type kneeLimit struct {
	est      float64 // the limit estimate; the limit is its truncation
	min, max float64
	window   time.Duration // the configured window: drains are planned in its units

	base       float64 // the no-load latency (ns); 0 until measured
	baseDrop   float64 // the share of drops without load
	trend      float64 // the change of base per window (log), from the last two drains
	since      int     // windows since base was measured
	estAtBase  float64 // the estimate at the last measurement after the first; 0 before (limitHeld is false)
	varb       float64 // the variance of log(base)
	surpriseZ  float64 // how far off (log) that measurement was
	surpriseAt int     // since, when it was
	surprise   int     // the sign of the last measurement of base that was far off; 0: none
	lightBase  int     // windows of light load that measured base since it was last set anew (see drained)
	noise      float64 // the spread of one call's latency, as a share of the mean; 0: unknown
	noiseN     int     // measurements of noise so far, up to 8
	wander     float64 // the spread of one call's latency learned from windows within a probe of each other (see learnNoise)
	wanderN    int     // measurements of wander so far, up to 8
	calm       float64 // the average of recent windows' latency over base
	flow       float64 // the average of recent windows' completions per second
	atBase     int     // windows in a row whose latency is about base (within the lower half of the tolerance)
	atBaseSum  float64 // the sum of their latencies over base
	fell       bool    // completions fell well below their average, latency about base: the load fell (until a queue)
	clear      int     // windows in a row in which the limit bound with latency about base
	ceil       float64 // the limit at which a queue was last seen; 0: none
	queueAt    float64 // the limit of the last window that bound with latency above the tolerance's lower half, not right after a cut
	queueLat   float64 // that window's latency (ns): see queueVanished
	suspect    bool    // base may be above the no-load latency: drain deeper, sooner
	lowered    bool    // the last drain lowered base by more than the tolerance's lower half: drain at the next boundary, even if latency looks clear
	agreed     int     // drains in a row whose latency agreed with base and did not fall in full with the drain (see drained)
	inelastic  int     // cuts in a row after which latency did not fall (see cutResponse)
	below      int     // windows in a row under a limit that binds whose latency is clearly below base (see decide)
	held       bool    // a cut was held back to see whether latency falls without it
	dropped    bool    // the last window had a few drops too many, under no sign of a queue
	started    bool    // a queue has been seen: the startup's fast growth is over
	confirmed  bool    // a drain has found base: until then every replica drains on the grid
	unverified bool    // base was first measured under a limit that did not bind: one drain must check it (see plan)
	step       float64 // the factor by which the last window changed the limit (1: none)
	peak       float64 // the highest estimate since the last drain

	prev    kneeWindow
	older   kneeWindow    // the window before prev
	anchor  kneeWindow    // the last window at the highest limit since: cuts are measured from it (see cutResponse)
	dropCut kneeDropCut   // the window whose drops began a row of cuts not yet measured (see ownDrops)
	pooled  WindowSummary // a window too short to decide on, pooled with the next
	light   WindowSummary // until base is measured: the windows of light load so far, pooled (see decide)
	drainOf float64       // the estimate a drain window lowered; 0 when not draining
	depth   float64       // the depth of the current drain
	windows int64         // windows since the last drain
	spacing int64         // drains fall on every spacing-th boundary of the grid (0 or 1: every one; see plan)
	spaceAt float64       // the estimate restored by the last drain that spaced the drains out
	moved   float64       // the factor by which the last window's decision changed the limit (1: none)
	elapsed float64       // time (ns) from the first window's start, until base is first measured
	short   bool          // base was first measured on the first window, which reads short
	shortBy float64       // by how much (log) that window may have read short (see readsShort)
	next    time.Duration // the length of the next window; 0: the configured one (see shortWindow)
	alignAt int64         // the grid's boundary (ns) the next window was cut short to end at (lead before it); 0: none (see plan)
	lead    int64         // where calls are long, how long (ns) before the boundary alignAt the aligned window ends (see plan)
	settle  bool          // the window is a drain's first part, which lets the calls admitted before it end: it decides nothing (see plan)
}

// kneeDropCut is the first window of a row of cuts for drops, and what the cut changed, as it was
// before it: all that undoing the row needs (see ownDrops).
type kneeDropCut struct {
	w                kneeWindow
	est, ceil        float64
	started, suspect bool
	light            bool // w was a window of light load: a limit that did not bind, latency about base (see decide)
	cuts             int  // the cuts of the row so far
}

// kneeWindow is what the algorithm keeps of a window.
type kneeWindow struct {
	lat       float64 // average latency (ns)
	conc      float64 // average concurrency (Little's law)
	rate      float64 // completions per second
	maxFlight float64 // the most calls in flight
	n         float64 // samples
	drops     float64 // the share of the samples dropped
	binding   bool    // the limit held back a share of the calls (one in twenty or more)
	touched   bool    // the limit held back at least one call, or was reached
	drain     bool
	limit     float64 // the limit during the window
	span      float64 // the window's length in latencies
	lags      bool    // the window holds fewer than kneeSpan latencies: latency answers a change of the limit a window late
	heavy     bool    // the limit held back three calls or more for each one it served: heavy overload (see bands)
}

// Tuning of the knee algorithm (see docs/knee-design.md for the reasoning behind each).
const (
	kneeTolerance    = 0.1   // queueing tolerated above base: latency up to base*(1+tolerance)
	kneeMaxTolerance = 0.25  // ... or more with noisy latency, up to this
	kneeCutTarget    = 0.7   // cuts aim at base*(1+tolerance*kneeCutTarget)
	kneeProbe        = 0.5   // the step up near the knee
	kneeFirstGrowth  = 0.25  // growth after two clear windows, doubling each window after
	kneeFastGrowth   = 1.0   // the most the limit grows in a window after a queue was seen
	kneeStartup      = 1.0   // growth per clear window before any queue was seen
	kneeDrainDepth   = 0.15  // a drain lowers the limit by this share
	kneeDrainEvery   = 10    // windows between drains on the wall clock's grid
	kneeElastic      = 0.5   // elasticity above which a latency change is a queue
	kneeInelastic    = 2     // cuts in a row that do not lower latency before it becomes base
	kneeDrift        = 0.005 // how far (log) base may move in a window, one standard deviation
	kneePrior        = 0.1   // the uncertainty (log) of the first measurement of base
	kneeFloor        = 0.005 // the least spread (log) of a window's mean latency
	kneeSlack        = 1.0   // calls of queue tolerated at the least, whatever the limit
	kneeSpan         = 10    // latencies from the start before a window's latency is not biased short
	kneeSpanDrain    = 15    // latencies a drain window spans at the least, once base is confirmed
	kneeLoadFell     = 0.85  // completions per second below this share of their average: the load fell
	kneeRecovered    = 3     // windows about base in a row, the load fallen, before a queue is history
	kneeRose         = 4     // clear windows a queue that vanished under its limit counts as: the limit doubles
	kneeMaxSpacing   = 4     // drains agreeing with base space out to every this many boundaries of the grid
	kneeSagged       = 0.925 // ... until the limit falls below this share of the one they restored
	kneeEarly        = 20    // samples a window holds at least before its drops may end it early
	kneeSettle       = 1.25  // latencies a drain lets the calls admitted before it end, where calls are long, before its window starts
	kneeWarm         = 3     // latencies from the start a window after the first starts at least before it measures base
	kneeSteady       = 0.1   // how far (log) latency may move between two windows of drops that are the dependency's own
	kneeSettleLag    = 4     // a window shorter than this many latencies holds a quarter or more of calls admitted before it
	kneeLightBase    = 8     // windows of light load that measured base before a drain's noise cannot lower it (see drained)
	kneeMaxTrend     = 0.03  // the fastest base may move along its trend, per window (log; see observe)
	kneeAgreed       = 3     // drains in a row that agree with base without resolving it, which confirm it (see drained)
)

func newKnee(c AdaptiveLimitConfig) AdaptiveAlgorithm {
	return &kneeLimit{est: float64(c.InitialLimit), min: float64(c.MinLimit), max: float64(c.MaxLimit), window: c.Window, step: 1, moved: 1}
}

// Limit returns the current limit.
func (k *kneeLimit) Limit() int { return toLimit(k.est) }

// Estimate returns the unrounded estimate behind the limit.
func (k *kneeLimit) Estimate() float64 { return k.est }

// NoLoadLatency returns the no-load latency the algorithm expects now: the last measurement,
// moved along its trend (0 before it has one).
func (k *kneeLimit) NoLoadLatency() time.Duration {
	if k.base == 0 {
		return 0
	}
	return time.Duration(k.expected())
}

// Update applies one window.
func (k *kneeLimit) Update(w WindowSummary) int {
	k.next = 0
	if k.settle {
		// The calls admitted before the drain have ended: the drain's window starts now.
		k.settle = false
		return toLimit(k.est)
	}
	if k.pooled.Samples > 0 {
		w = pool(k.pooled, w)
		k.pooled = WindowSummary{}
	}
	if k.base > 0 && k.noiseN > 0 && k.alignAt == 0 && k.unresolved(w) {
		// Too few samples to tell a queue from noise: decide on this window and the next
		// together, as one longer window. Not a window cut short to end at the grid's
		// boundary: the next one drains.
		k.pooled = w
		return toLimit(k.est)
	}
	return k.decide(w)
}

// unresolved reports whether a window has too few samples for its mean latency to resolve the
// largest tolerance (three standard deviations of it above kneeMaxTolerance), and shows no
// clear overload that cannot wait: drops well above base's share, or latency far above base.
func (k *kneeLimit) unresolved(w WindowSummary) bool {
	n := float64(w.Samples)
	sd := k.spread(n)
	if 3*sd <= kneeMaxTolerance || w.Samples == 0 {
		return false
	}
	if float64(w.Drops)/n-k.baseDrop > 0.05+3*math.Sqrt(0.25/n) {
		return false
	}
	return math.Log(float64(max(1, w.AvgLatency))/k.expected()) < 3*sd+kneeMaxTolerance
}

// steadyDrops reports whether two consecutive windows show the same share of drops (within two
// standard deviations of the difference), with latency within kneeSteady of each other and the
// calls in flight not rising by more than that and two standard deviations of the difference of
// two counts of calls (Poisson: the first window of a cold start held 13% fewer calls than the
// second under the same light load): drops that a queue does not explain. Windows of fewer
// than kneeEarly calls do not tell.
func steadyDrops(a, b kneeWindow) bool {
	if a.n < kneeEarly || b.n < kneeEarly {
		return false // a window of a few calls says little by its drops (see decide)
	}
	_, sd := pooledDrops(a, b)
	return math.Abs(math.Log(b.lat/a.lat)) < kneeSteady && math.Log(b.conc/a.conc) < kneeSteady+2*math.Sqrt(1/a.n+1/b.n) &&
		math.Abs(b.drops-a.drops) < 2*sd
}

// pooledDrops returns the share of drops of two windows together, and the standard deviation
// of the difference of their shares were both drawn from it.
func pooledDrops(a, b kneeWindow) (share, sd float64) {
	p := (a.drops*a.n + b.drops*b.n) / (a.n + b.n)
	return p, math.Sqrt(p * (1 - p) * (1/a.n + 1/b.n))
}

// dropShare returns the share of a window's samples that were drops (0 without samples).
func dropShare(w WindowSummary) float64 {
	if w.Samples == 0 {
		return 0
	}
	return float64(w.Drops) / float64(w.Samples)
}

// pool merges two consecutive windows into one.
func pool(a, b WindowSummary) WindowSummary {
	n := a.Samples + b.Samples
	if n > 0 {
		b.AvgLatency = time.Duration((float64(a.AvgLatency)*float64(a.Samples) + float64(b.AvgLatency)*float64(b.Samples)) / float64(n))
	}
	b.Samples = n
	b.Drops += a.Drops
	b.Dropped = b.Dropped || a.Dropped
	b.Rejected += a.Rejected
	b.MaxInFlight = max(a.MaxInFlight, b.MaxInFlight)
	b.Duration += a.Duration
	return b
}

func (k *kneeLimit) decide(w WindowSummary) int {
	lat := float64(max(1, w.AvgLatency))
	span := float64(w.Duration) / lat
	cur := kneeWindow{
		lat:       lat,
		conc:      lat * float64(w.Samples) / float64(max(1, w.Duration)),
		rate:      float64(w.Samples) / max(1e-9, w.Duration.Seconds()),
		maxFlight: float64(w.MaxInFlight),
		n:         float64(w.Samples),
		drops:     dropShare(w),
		binding:   w.Rejected > 0 && w.Rejected*20 >= w.Samples+w.Rejected,
		touched:   w.Rejected > 0 || w.MaxInFlight >= toLimit(k.est),
		drain:     k.drainOf > 0,
		limit:     k.est,
		span:      span,
		lags:      span < kneeSpan,
		heavy:     w.Rejected >= 3*w.Samples,
	}
	prev := k.prev
	k.prev = cur
	k.windows++
	k.unverified = k.unverified && !cur.binding // a limit that binds learns base from its own changes
	k.age()
	step := k.step
	k.step = 1
	k.moved = step
	tol := k.tolerance(cur)
	k.learnNoise(prev, cur)

	// Drops above the share seen without load are overload, whatever the latency says (a
	// timed-out call's latency is the timeout, which may look like a normal latency).
	// Only an excess beyond the noise of the window's count counts. Under a limit that does not
	// bind and latency about base (or base not yet measured), a few more drops than usual may
	// be the dependency's own (calls whose work outlasts the timeout): they count when the next
	// window has them too. So do any number of drops in a window of fewer than kneeEarly calls,
	// whose share is mostly chance (4 of 10 exponential calls of 700ms outlasting a timeout of
	// three times that cut a light load's limit in half; the drain that followed rejected most
	// of it for a minute). If the first cut does not settle whether they are the dependency's
	// own, the second tests it (below).
	excess := cur.drops - k.baseDrop
	dropped := excess > 0.05+2*math.Sqrt(cur.drops*(1-cur.drops)/max(1, cur.n))
	light := !cur.binding && (excess < 0.2 || cur.n < kneeEarly) && (k.base == 0 || lat < k.expected()*(1+tol))
	if dropped && !k.dropped && light {
		k.dropped = true
		dropped = false
	} else if dropped && k.dropped && light && k.base == 0 && k.dropCut.w.n == 0 && steadyDrops(prev, cur) {
		// Before base is measured, two windows of light load in a row with the same share of
		// drops, and neither latency nor the calls in flight rising: no queue is building,
		// and the drops are the dependency's own (calls whose work outlasts the timeout).
		// Their share is the share without load. Cutting on them, and then testing the cut
		// (see ownDrops), rejected 1.4% of a light load's calls in its first seconds; a
		// queue that builds at a cold start shows in the second window's latency. Only where
		// a row of cuts would begin: once it has, ownDrops reads the cuts.
		k.baseDrop, _ = pooledDrops(prev, cur)
		dropped, k.dropped = false, false
	} else if !dropped {
		k.dropped = false
	}
	if share, own := k.ownDrops(cur); own {
		// The drops did not follow the cuts down: they are the dependency's own (calls whose
		// work outlasts the timeout, whatever the limit), and the cuts were a mistake: undo
		// them, and what they taught (a queue seen, which ends the startup's doubling).
		c := k.dropCut
		k.baseDrop = share
		k.est = max(k.est, c.est)
		k.started, k.ceil, k.suspect = c.started, c.ceil, c.suspect
		dropped, k.dropped = false, false
	}
	if !dropped {
		k.dropCut = kneeDropCut{}
	}
	if dropped {
		if k.dropCut.w.n == 0 {
			k.dropCut = kneeDropCut{w: cur, est: k.est, ceil: k.ceil, started: k.started, suspect: k.suspect, light: light}
		}
		k.dropCut.cuts++
		test := k.dropCut.light && k.dropCut.cuts == 2 // see below
		if cur.drain {
			k.drainOf = 0
		}
		k.started = true
		k.spacing = 1 // base may have moved: drain on the next boundary (see plan)
		k.clear = 0   // a window with too many drops breaks a row of clear windows
		from := k.usage(cur, tol)
		k.ceil = from
		if k.base > 0 && prev.lat > 0 && prev.lat < k.expected()*(1+tol/4) && k.moved <= 1 {
			// Calls time out although latency just looked like base, under the same limit:
			// base was measured through a queue. Drain to measure it again. (After a growth,
			// the growth explains them.)
			k.suspect = true
		}
		if test {
			// A row of cuts for drops that began under light load, and whose first cut did
			// not show whether the drops are the dependency's own (see ownDrops): test it at
			// once, at the least cost. The limit goes to half the calls that were in flight
			// when the row began, for a window just long enough to read the answer (see
			// testWindow); the window after it tells. Cuts of the excess alone (13.5% of the
			// calls, outlasting a timeout at twice the mean of exponential calls) added up
			// past the noise of the windows' latencies after a few whole windows, or, in one
			// variant of 32, after 5 seconds (86.5% of the light load's best goodput).
			k.set(max(k.min, min(k.est, k.usage(k.dropCut.w, tol)/2)))
			k.next = k.testWindow(k.dropCut.w)
			return k.plan(w)
		}
		k.cut(from * max(0.5, 1-excess))
		return k.plan(w)
	}
	if k.base == 0 {
		if k.elapsed += float64(w.Duration); k.elapsed >= kneeSpan*lat || k.windows > 1 && k.elapsed-float64(w.Duration) >= kneeWarm*lat {
			// A first guess, uncertain: the first windows may already queue. Once the limit
			// was reached, or, if it never is, from the second window (the first reads
			// short) when a drain could check it (see plan); otherwise there is nothing to
			// limit yet.
			// The windows of light load before the limit was reached are pooled, and where
			// they hold more calls than the window that reached it and read higher, their
			// mean is the first guess. A slow dependency under light load holds a dozen calls
			// a window, too few to check by a drain: the one window that reached the limit
			// (15 exponential calls of 700ms) read base 47% low, every later window read as a
			// queue, and the limit fell to 1 for good. The higher of the two, because a base
			// too high is brought down by the drains, while one too low cuts the limit until
			// no window holds the calls to correct it (pooling them all, measured: a slow
			// dependency's light load, read a few percent low, was then rejected).
			if !cur.touched && k.windows > 1 {
				k.light = pool(k.light, w)
			}
			if cur.touched || k.windows > 1 && k.resolves(cur.n, kneeDrainDepth) {
				n, mean, share := cur.n, lat, cur.drops
				if l := float64(k.light.AvgLatency); cur.touched && float64(k.light.Samples) > cur.n && l > lat {
					n, mean, share = float64(k.light.Samples), l, float64(k.light.Drops)/float64(k.light.Samples)
				}
				k.observe(mean, share, n, false)
				// Read short (see below); no drain comes before base, so windows counts them all.
				k.short = k.windows == 1 || cur.span < kneeSettleLag
				if k.short {
					// By how much it may read short is uncertain as well: base holds that
					// uncertainty until a drain measures it (see readsShort).
					k.shortBy = readsShort(cur, w)
					k.varb = max(k.varb, k.shortBy*k.shortBy)
				}
				k.unverified = !cur.binding // see plan
				k.light = WindowSummary{}
			}
		}
		if k.base == 0 && cur.touched {
			// The limit was reached before the windows held enough latencies to measure base
			// (calls longer than a tenth of the window): end the next window as soon as they
			// do, rather than reject the calls over the initial limit for a whole window more
			// before the startup's doubling begins. A light load of 120ms calls above the
			// initial limit lost 3% of its goodput to two whole windows at it.
			if d := max(1.25*kneeSpan*lat-k.elapsed, 1.25*kneeWarm*lat); d < float64(k.window) {
				k.next = time.Duration(d)
			}
		}
		return k.grow(cur, w, tol)
	}
	if k.short {
		// Base was first measured on the first window: its calls began with it, and the
		// longest of them had not ended by its end, so its latency reads short (by about the
		// latency over the window times the square of latency's spread: 5% for exponential
		// calls of 50ms in a window of 1s). The next window measures base again if the
		// startup's doubling of the limit did not raise latency beyond the tolerance, or
		// beyond the noise of two windows' latencies where that is wider (so the first did
		// not queue either: both windows are noisy, and the first reads short besides), and
		// it reads above base. So too for a base first measured on a later window of fewer
		// than kneeSettleLag latencies (see "first base soon" in docs/knee-design.md), which
		// reads short the same way, where the next window holds that many or more: 120ms
		// exponential calls read base 9% low on a window of 0.39s, the windows at base after
		// it read 5% to 15% over it, and the startup stopped at 40 for a knee of 100 (79% of
		// the best goodput over the phase; 93% with base measured again).
		k.short = false
		if cur.binding && k.moved > 1 && (k.windows == 2 || cur.span >= kneeSettleLag) && lat > k.expected() && lat < k.expected()*max(1+tol, math.Exp(3*math.Sqrt2*k.wanderSpread(cur.n))) {
			k.observe(lat, cur.drops, cur.n, false)
			// Half its calls are new, begun with the startup's doubling: it may read half as
			// short as the first. (Its own calls in flight say less: those begun before it
			// ended in it, their ages before it counted in its latency.)
			b := k.shortBy / 2
			k.varb = max(k.varb, b*b)
		}
	}
	if cur.drain {
		return k.drained(prev, cur, w, tol)
	}
	if k.alignAt > 0 && cur.lags {
		// The window before a drain, cut short to end at the grid's boundary (see plan),
		// where latency lags a window: its latency is mostly that of calls admitted before
		// it, and a change of the limit now would be read by the drain's window, which
		// measures the drain against this one. It decides nothing.
		return k.plan(w)
	}

	// Latency below base, beyond the noise of the window's mean, twice in a row under a limit
	// that binds: base is too high (calls got lighter, or base was measured through a
	// queue), and latency bounds it from above.
	if sd := k.spread(cur.n); cur.binding && lat < k.expected()*math.Exp(-3*sd) {
		k.below++
		if b := max(lat, prev.lat) * math.Exp(3*sd); k.below >= 2 && b < k.expected() {
			k.rebase(b, sd)
			k.below = 0
		}
	} else {
		k.below = 0
	}

	// The response of latency to changes of the limit. Every replica of a service makes the
	// same change at the same time (they see the same latency), so the response is the
	// dependency's, not one replica's. Only changes larger than the noise of the difference of
	// two windows' latencies (three standard deviations) say anything.
	resolved := max(0.04, 3*math.Sqrt2*k.wanderSpread(cur.n))
	k.cutResponse(prev, cur, resolved)
	if prev.binding && cur.binding && math.Log(step) > resolved && !prev.drain {
		dl := math.Log(lat / prev.lat)
		if dl/math.Log(step) > 0.9 && dl > 3*math.Sqrt2*k.wanderSpread(cur.n) && prev.lat < k.expected()*(1+tol/2) {
			// Growth, and latency rose in proportion from a window whose latency was about
			// base: that window queued as well, so base was measured through a queue.
			k.suspect = true
		} else if dl/math.Log(step) < kneeElastic/2 && !k.suspect && prev.lat < k.expected()*(1+tol/4) && lat < k.expected()*(1+tol/4) {
			// Growth, and latency did not follow it, from a window at base to one at base:
			// the window before was below the knee, and its latency, which base agrees with,
			// was the no-load latency. A drain would teach no more (it is a growth read the
			// other way): base is confirmed.
			k.confirmed = true
		}
	}
	return k.grow(cur, w, tol)
}

// cutResponse measures the response of latency to the cuts made since the anchor, the last
// window at the highest limit since, once they add up to more than resolved: one cut, or several
// that are each too small to stand out of the noise (noisy latency: a window's mean is uncertain
// by several percent, so a base measured a few percent low cuts the limit a little every window,
// and without this the cuts never added up to an answer). Latency that did not follow the cuts
// down (elasticity below a quarter) is not a queue of ours; twice in a row, and it is the
// no-load latency: heavier calls, or a base measured low.
// Cuts spread over several windows count only when latency followed them by less than an
// eighth: replicas, which make the same cut in the same window, may cut in different windows over
// such a run, and then each sees only its share of the response.
// Where latency lags a window (calls longer than a tenth of the window), a cut is only compared
// with the window before it, as is a cut larger than the noise by itself.
func (k *kneeLimit) cutResponse(prev, cur kneeWindow, resolved float64) {
	a := k.anchor
	if cur.lags || math.Log(prev.limit/cur.limit) > resolved {
		a = prev
	}
	if !cur.binding || !a.binding || prev.drain || cur.limit >= a.limit {
		// Not a cut to measure: a window that does not bind (no anchor then), follows a
		// drain (which lowered its latency), or holds the highest limit since the anchor
		// (the next anchor).
		k.anchor = cur
		if !cur.binding {
			k.anchor = kneeWindow{}
		}
		return
	}
	cut := math.Log(cur.limit / a.limit)
	if -cut <= resolved {
		return
	}
	k.anchor = cur
	k.held = false // a fresh answer: after a first cut that did not lower latency, hold once (see grow)
	elastic := kneeElastic / 2
	if a != prev {
		elastic = kneeElastic / 4
	}
	if math.Log(cur.lat/a.lat)/cut >= elastic {
		k.inelastic = 0
		return
	}
	k.inelastic++
	k.spacing = 1 // base may have moved: drain on the next boundary (see plan)
	if k.inelastic >= kneeInelastic {
		k.observe(cur.lat, cur.drops, cur.n, true)
		k.inelastic = 0
	}
}

// ownDrops reports whether the drops of cur are the dependency's own rather than a queue's: the
// limit was cut for drops since dropCut, by more than the noise of two windows' latencies, and
// neither latency (elasticity below a quarter) nor the share of drops (within two standard
// deviations of the difference) followed the cut down. Under a queue both fall with the limit
// (latency in proportion). Calls whose work outlasts the timeout (a timeout at twice the mean of
// exponential calls drops 13.5% of them, at three times that of lognormal ones of sigma 1, 5.6%)
// drop the same share at any limit: before this, such drops above the 5% tolerated cut the
// limit every window, from 20 to 5 for a knee of 16 and to 15 for a knee of 180, until a window
// read below that by chance.
// It returns the share of drops of both windows together, the dependency's own share if so.
func (k *kneeLimit) ownDrops(cur kneeWindow) (float64, bool) {
	a := k.dropCut.w
	if a.n == 0 || !cur.binding || cur.lags || a.lags || cur.drain {
		return 0, false
	}
	cut := math.Log(cur.conc / a.conc)
	if -cut <= max(0.04, 3*math.Sqrt2*k.wanderSpread(min(a.n, cur.n))) {
		return 0, false
	}
	p, sd := pooledDrops(a, cur)
	return p, cur.drops > a.drops-2*sd && math.Log(cur.lat/a.lat)/cut < kneeElastic/2
}

// undoCuts raises the estimate after a drain whose latency did not follow it (no queue) showed
// that base, x before it, was too low by more than the noise of the drained window: the latency
// over x that cut the limit since the last drain was base's error (calls got heavier), not a
// queue. The limit goes up by that error, at most back to the highest estimate since the last
// drain. Not where latency lags a window (a drain's answer is read late there).
// (Cuts that did not lower latency also move base, in cutResponse; undoing them there as well
// measured level, so the one place is the drain.)
func (k *kneeLimit) undoCuts(cur kneeWindow, x float64) {
	if f := cur.lat / x; !cur.lags && f > math.Exp(3*k.spread(cur.n)) {
		k.est = max(k.est, min(k.peak, k.est*f))
	}
}

// extrapolated reports whether base has moved along its trend, since it was last measured, by
// more than a quarter of the tolerance: latency that looks like base then proves little.
func (k *kneeLimit) extrapolated(tol float64) bool {
	return math.Abs(k.trend)*float64(k.since) > tol/4
}

// limitHeld reports whether the estimate has not grown since base was last measured: only then
// may latency that rose meanwhile teach base a rising trend (see observe).
func (k *kneeLimit) limitHeld() bool { return k.est <= k.estAtBase*1.02 }

// age moves base one window on: it drifts along its trend, and grows less certain.
func (k *kneeLimit) age() {
	k.since++
	k.varb += kneeDrift * kneeDrift
}

// rebase makes lat the no-load latency, with sd the spread (log) of its measurement: a fresh
// start, without trend.
func (k *kneeLimit) rebase(lat, sd float64) {
	k.base, k.varb, k.trend, k.since, k.surprise = lat, sd*sd, 0, 0, 0
	k.lightBase = 0
}

// drained learns from a drain window: every replica lowered its limit by the same share at the
// same time, so the response of latency is taken against that share, which all of them know
// alike, and they all draw the same conclusion.
func (k *kneeLimit) drained(prev, cur kneeWindow, w WindowSummary, tol float64) int {
	lat := cur.lat
	if k.depth == 0 {
		// Watched, not drained: if latency fell clearly, other replicas drained and found
		// base lower than this one has it: a measurement of base. Not once the load fell:
		// then the replicas watch rather than drain (see plan), and a window that fell is
		// most likely noise.
		if !k.fell && lat < prev.lat*(1-tol/2) && lat < k.expected()*math.Exp(-2*k.spread(cur.n)) {
			k.observe(lat, cur.drops, cur.n, false)
		}
		k.drainOf = 0
		return k.plan(w)
	}
	// The response of latency is read against the window before the drain, or, where base is
	// known (confirmed, or measured by kneeLightBase windows of light load), the limit is no
	// small share and latency does not lag (in that window or the drain's), against the recent
	// windows' average (calm) where that is lower (but not below the drained window): one
	// window's mean is as noisy as its calls, and a window that read high by chance made the
	// drain after it read as a queue it had emptied, which holds the drained limit (250ms
	// exponential calls, 80 a window: one read 1.42 times base and cut the limit; the drain
	// after it, twice as deep since base was suspect, held three quarters of the knee for twelve
	// seconds, 92.4% of the best goodput). Not where latency lags (as there: four latencies a
	// window): the average then mixes windows of calls admitted under other limits, and long
	// calls' drains read against it restored limits that grew and were cut in turn (a lone
	// knee of 40 of 500ms calls swung between 41 and 56 instead of holding 44); what it gains
	// is shorter calls' (light load's overload, 30ms exponential calls, 97% of the best goodput
	// in the worst of 16 variants instead of 95.7%). Not a small share's, nor a cold start's: there
	// drains that read a queue, the noise of that window included, are what holds the
	// replicas' limits down ("a drain read against recent latency" in docs/knee-design.md).
	e := 0.0
	if prev.lat > 0 {
		ref := prev.lat
		if k.calm > 0 && !smallShare(k.drainOf) && (k.confirmed || k.lightBase >= kneeLightBase) && !prev.lags && !cur.lags {
			ref = min(ref, max(lat, k.calm*k.expected()))
		}
		e = math.Log(lat/ref) / math.Log(1-k.depth)
	}
	// A drain that crossed the knee (latency fell by clearly less than the drain: three
	// standard deviations of its elasticity) and found base where it was expected (within a
	// quarter of the tolerance) has nothing more to teach: the next drains are spaced out
	// (see plan). Also where latency lags a window and the drain did not let the calls
	// admitted before it end first (see plan): the drained window's latency is then mostly
	// theirs, and about base it says the limit did not queue. A small share's drains space
	// out too: they agree rarely (a drain across the knee from a limit of 9 runs at 7 when the
	// estimate is below 9.42, and its latency falls by most of it), but a lone small limit that
	// drains every boundary spends a point of goodput on it.
	crossed := e < 1-3*math.Sqrt2*k.spread(cur.n)/-math.Log(1-k.depth)
	off := math.Abs(math.Log(lat / k.expected())) // from base as expected before this drain moves it
	atBase := off < tol/4
	agree := atBase && crossed && e <= kneeElastic
	// Drains too noisy to resolve whether latency followed them still tell, kneeAgreed in a row,
	// that base holds: each found latency about base (within the tolerance's lower half, where
	// a window reads no queue) and latency followed none in full. Base is then confirmed, as by
	// one drain that resolves it. A limit whose drains never resolve (a share of a few calls,
	// windows of few samples) otherwise stayed unconfirmed for good, without what confirmation
	// brings: the loss tolerance, drains read in whole calls, windows ended at their drops
	// ("confirmed by agreeing drains" in docs/knee-design.md).
	if off < tol/2 && e <= kneeElastic {
		k.agreed++
	} else {
		k.agreed = 0
	}
	if k.agreed >= kneeAgreed {
		k.confirmed = true
	}
	spacing := k.spacing
	k.spacing = 1
	if agree {
		k.spacing, k.spaceAt = min(kneeMaxSpacing, 2*max(1, spacing)), k.drainOf
	}
	switch {
	case e < kneeElastic/2 && lat > k.expected() && smallShare(k.drainOf) && cur.lags && !k.resolves(cur.n, k.depth) && !prev.heavy:
		// Too noisy to read, for a small share where latency lags: the drained window's
		// mean cannot tell a queue from none, and latency above base proves nothing. Read as
		// base, it raised the bases of replicas a little with every drain that happened to
		// read high, until they stopped binding ("a drain too noisy to read" in
		// docs/knee-design.md). The limit is restored; base stays. Not a drain from a limit
		// that held back three calls or more for each it served: that is a limit far below
		// the knee (or a replica far below its share), most likely cut there by a base read
		// low, which only such drains can raise (a lone limit of 300ms calls whose first base
		// read 20% low was cut to a fifth of the knee for good).
		k.est = k.drainOf
	case e < kneeElastic/2:
		// Latency did not follow: the drained window was at or below the knee, and its
		// latency is the no-load latency, drift included. It confirms base, unless a small
		// share drained on a window too noisy to tell a queue from none: a replica's slot or
		// two moves a shared dependency too little for latency to follow, and a base
		// confirmed there (by chance a little high) let the replica grow fast on windows
		// that read about it, past its share ("a drain too noisy to read" in
		// docs/knee-design.md).
		x := k.expected()
		k.observe(lat, cur.drops, cur.n, true)
		k.confirmed = k.confirmed || !smallShare(k.drainOf) || k.resolves(cur.n, k.depth)
		k.est = k.drainOf
		k.undoCuts(cur, x)
	case e > kneeElastic:
		// Still a queue at the drained limit: stay there. If latency is below base, base
		// was measured through a queue: drain deeper, sooner.
		// Latency fell with the limit, beyond the noise: the queue is real, and the
		// drained latency bounds base from above.
		// Once a drain or a growth has confirmed base, or base is known four times more
		// precisely than the drained window's mean (measured over many windows of light load),
		// the bound is the drained latency plus three standard deviations of that mean: a
		// window that reads low by chance (a few percent, with few samples or noisy calls)
		// would otherwise set base below the no-load latency, and every window after it would
		// read as a queue. So too where kneeLightBase windows of light load or more measured
		// base since it was last set anew and the drained latency lies within three standard
		// deviations of it: such a base was not measured through a queue, and one drain that
		// reads a little low says nothing against it (under a timeout that cuts 13.5% of
		// exponential calls, a drain after a minute of light load read 8% low, base went
		// there, and the limit was cut to three quarters of the knee for ten seconds).
		// Otherwise (a cold start's base, measured through its queue, must come down at
		// once), and for a small share (the replicas' bases come down only by their drains),
		// the latency itself.
		bound := lat
		if sd := k.spread(cur.n); (k.confirmed || 4*k.varb < sd*sd || k.lightBase >= kneeLightBase && lat > k.base*math.Exp(-3*sd)) && !smallShare(k.drainOf) {
			bound *= math.Exp(3 * sd)
		}
		k.suspect = bound < k.base*(1-tol/2)
		k.lowered = k.suspect // see plan
		k.started = true      // a queue: the startup's doubling is over
		if bound < k.base {
			k.rebase(bound, k.spread(cur.n))
		} else if x := k.expected(); bound < x {
			// Base measured above it, but moved along its trend past it: the bound holds
			// for what base is expected to be now, trend kept (calls may still get heavier).
			// A limit that then went back up would otherwise grow into the queue that the
			// trend, gone on after the drift stopped, hides.
			k.base *= bound / x
		}
		k.est = min(k.est, k.drainOf)
		if crossed && atBase {
			// Latency fell by less than the drain, beyond the noise: the drained window ran
			// below the knee, and its latency, which agrees with base, confirms it. (Under
			// heavy overload the limit holds a little above the knee and every drain reads
			// this way: base stayed unconfirmed, and a capacity that rose fourfold was
			// climbed by probes near the last queue for ten seconds.)
			k.confirmed = true
		}
		if e < 1 && !smallShare(k.drainOf) {
			// The drain crossed the knee: latency fell by the share of it that was queue,
			// which puts the knee at the drained limit over (1-depth)^(1-e). Aim where a cut
			// aims, not at the drained limit, which is below the knee (under noisy latency a
			// limit left there a few windows in every ten costs a point or more of goodput).
			// Not for a small share (see smallShare).
			_, _, target := k.bands(cur, w, tol)
			k.est = min(k.drainOf, max(k.est, k.est*math.Pow(1-k.depth, e-1)*target))
		}
	default:
		// Latency fell by a quarter to half of the drain: the drain crossed the knee, and
		// its window ran mostly below it. Its latency measures base, whichever side of base
		// it falls on: taking only those below base biased base low, a little more with
		// every drain, and windows at the knee then read as a queue.
		k.observe(lat, cur.drops, cur.n, false)
		k.est = k.drainOf
	}
	k.drainOf = 0
	k.peak = k.est
	return k.plan(w)
}

// grow moves the estimate by the window's latency over base.
func (k *kneeLimit) grow(cur kneeWindow, w WindowSummary, tol float64) int {
	if k.base == 0 {
		return k.plan(w)
	}
	ratio := cur.lat / k.expected()
	if k.calm == 0 {
		k.calm = ratio
	}
	lasting := k.calm > 1+tol/2 // a queue before this window: for a limit that does not bind
	k.calm += (ratio - k.calm) / 8
	if k.flow == 0 {
		k.flow = cur.rate
	}
	if ratio <= 1+tol/2 {
		// Fewer completions than of late (beyond the noise of their count) while latency
		// stays about base: fewer calls arrive. About base is within the lower half of the
		// tolerance, where a limit that binds would grow: light load on a FIFO queue waits a
		// little, and base may be a few percent low. A limit that does not bind completes
		// every call it gets, so the count does not fall when other replicas' drains lower
		// latency.
		k.fell = k.fell || cur.rate < k.flow*min(kneeLoadFell, math.Exp(-3/math.Sqrt(max(1, cur.n))))
		k.atBase++
		k.atBaseSum += ratio
	} else {
		// A window over the middle of the tolerance ends the row; only one over the
		// tolerance, a queue, ends the fallen load.
		k.atBase, k.atBaseSum = 0, 0
		k.fell = k.fell && ratio <= 1+tol
	}
	k.flow += (cur.rate - k.flow) / 8
	if k.recovered(cur) {
		// The average of recent windows would remember a queue for ten windows more, and the
		// limit at which the overload queued would cap the room above bursts: forget both,
		// so that light load gets its room (below).
		k.calm = min(k.calm, k.atBaseSum/float64(k.atBase))
		k.ceil = 0
	}
	grownQueue := k.moved > 1 && cur.lags && k.older.binding && ratio > 1 // see below
	if !cur.binding && !k.started && !cur.drain && (k.moved <= 1 || ratio <= 1+tol && !grownQueue) && (k.calm <= 1+tol/4 || math.Abs(math.Log(ratio)) <= 2*k.spread(cur.n)) {
		// Light load, no queue ever seen: the window's latency is the no-load latency, while
		// the recent windows stay about base or this one is within the noise of it (with few
		// samples a window, a first base set low by a lucky window keeps their average above
		// it, and only these measurements can correct it). Its drops may lower the share
		// of drops without load, not raise it (a queue that builds under a limit that does
		// not bind may look like light load, and its drops would teach that they are
		// normal); counted as none, they wore down the share learned under a timeout that
		// outlasts 13.5% of the calls, and the next window with as many cut the light
		// load's limit. Not the window right after a growth whose latency rose beyond the
		// tolerance: that is the growth's own queue (a startup that doubled the limit past a
		// closed loop's demand read the queue it made as base). Nor, where latency lags a
		// window, one right after a growth of a limit that bound, whose latency rose at all:
		// it reads that queue mixed with the calls admitted before the growth, within a
		// tolerance at its widest while the spread of latency is unknown (calls of 500ms, a
		// startup that doubled 40 to 80 for a knee of 40 read base 12% high, and the limit
		// then held that much queue).
		k.observe(cur.lat, min(k.baseDrop, cur.drops), cur.n, false)
		k.lightBase++
	}
	// Under heavy overload (four calls offered or more for each one admitted) a slot that
	// frees up is refilled at once: the queue of the tolerance's upper half buys no goodput,
	// only latency, so aim at its lower half. Not for a limit at which one call moves latency
	// by more than a quarter of the tolerance: the lower half would leave it at the knee
	// without a call of queue (a knee of 10 lost 0.7 points of goodput).
	hold, queue, target := k.bands(cur, w, tol)
	// A window is clear, a sign that the knee is above the limit, within the lower half of
	// the band in which the limit may grow: a quarter of the tolerance, an eighth under heavy
	// overload, where a quarter is the latency the limit aims at (see bands).
	clearWindow := cur.binding && ratio <= 1+(hold-1)/2
	if clearWindow && !k.older.drain {
		k.clear++
	} else {
		// The window after a drain does not count: the drain, not spare capacity, may
		// have lowered its latency.
		k.clear = 0
	}
	if clearWindow && k.clear < 2 && k.queueVanished(cur) {
		// The first clear window, not yet a row: it shows what a row would (see queueVanished).
		// The last queue is behind the knee now: forget it, or the probe near it (below)
		// would climb to the new knee by a constant step a window.
		k.clear = kneeRose
		k.ceil = 0
	}
	if cur.binding && ratio > hold && toLimit(cur.limit) >= toLimit(k.older.limit) {
		// A queue under a limit that was not just cut (the window after a cut may still
		// hold calls admitted above it): remember it for queueVanished.
		k.queueAt, k.queueLat = cur.limit, cur.lat
	}
	switch {
	case ratio > queue && (cur.binding || lasting):
		// A queue: cut to the middle of the tolerance (its lower half under heavy overload,
		// see above). After cuts that did not lower
		// latency, hold one window (latency may lag), then cut again: cuts that do not lower
		// it either make that latency the new base (see cutResponse). A limit that does not
		// bind is cut only if the queue lasts, in the windows before this one too: one
		// noisy window of light load is not one, however far off.
		if k.inelastic == 1 && !k.held {
			k.held = true
			break
		}
		if cur.lags && k.moved <= 1-kneeFirstGrowth {
			// Latency lags a window, and the last one cut the limit by a quarter or more:
			// this window's latency is mostly that of calls admitted before the cut, which
			// aimed at the tolerance already. Cutting again on it took a limit of 80, after
			// the startup's doubling, to 31 for a knee of 40 (calls of 500ms). It holds, as
			// the window after a growth does not grow (below).
			break
		}
		if cur.lags {
			k.held = false // latency lags a window: each cut after the first waits one too
		}
		k.started = true
		if k.moved <= 1 && k.est <= k.spaceAt {
			// Latency rose by itself, under a limit no higher than the last drain that agreed
			// with base restored: base may be moving. (Above it, probes found the knee.)
			k.spacing = 1
		}
		from := k.usage(cur, tol)
		k.ceil = from
		k.cut(from * target / ratio)
	case !cur.binding:
		if cur.touched && (ratio <= 1+tol/4 && k.calm <= 1+kneeTolerance/4 || k.recovered(cur)) {
			// Light load: keep room above the calls in flight, so that bursts are not
			// rejected. Once the load fell, latency about base is enough (see recovered).
			room := 1.25 * cur.maxFlight
			if k.ceil > 0 {
				room = min(room, k.ceil)
			}
			k.set(max(k.est, room))
		} else if ratio > 1+tol/2 && k.calm > 1+tol/2 && !k.fell {
			// The dependency queues, and this limit does not bind: come down towards
			// the calls in flight, which are part of the queue. Not once the load fell:
			// then the average of recent windows remembers the overload, not a queue.
			k.set(max(k.usage(cur, tol), k.est*0.8))
		}
	case ratio > hold:
		// Within the tolerance: hold.
	default:
		if cur.lags && (k.started || cur.span < kneeSettleLag) && k.moved >= 1+kneeFirstGrowth {
			// Latency lags a window, and the last one grew the limit by a quarter or more:
			// this window's latency is mostly that of calls admitted before the growth, and
			// says nothing of it yet. Growing again on it doubled a limit of 20 to 80 for a
			// knee of 40 (calls of half a window), then cut it to 28. In the startup, only
			// where the window holds fewer than kneeSettleLag latencies: one of eight
			// latencies holds about an eighth of calls admitted before the growth, and a
			// doubling that queues still shows in it (the startup ends at the cut). Waiting
			// a window after each doubling, a cold start at a fifth of its knee reached it
			// in 6.4 seconds instead of 3.4 ("lagging growth" in docs/knee-design.md).
			break
		}
		// No queue: probe after one clear window; after two, grow by kneeFirstGrowth,
		// twice as much after each more, up to kneeFastGrowth; near the last queue seen,
		// probe.
		if !k.started && k.clear >= 1 {
			// Startup: no queue seen yet. Double the limit each window while latency stays at base.
			k.set(k.est * (1 + kneeStartup))
		} else if k.clear < 2 || k.ceil > 0 && k.est > 0.85*k.ceil && (!k.confirmed || smallShare(k.est)) || k.extrapolated(tol) {
			// Near the knee: probe up by a constant step, the same for every replica of a
			// service, so that cuts in proportion and equal steps up even out their shares.
			// Near the last queue only while base is unconfirmed (it may be too high, and
			// latency look clear under a queue) or the limit is a small share (see
			// smallShare): otherwise two clear windows there mean the knee moved up, and
			// the limit grows in the second (see below), not only from the next.
			k.set(k.est + kneeProbe)
		} else {
			// Clearly below the knee: double the growth each clear window.
			g := kneeFirstGrowth
			for i := 2; i < k.clear && g < kneeFastGrowth; i++ {
				g *= 2
			}
			k.set(k.est * (1 + min(g, kneeFastGrowth)))
		}
		if k.step >= 1+kneeFirstGrowth && !smallShare(k.est) {
			k.next = k.shortWindow(cur)
		}
		if k.ceil > 0 && (k.est > 1.1*k.ceil || k.clear >= 2 && k.confirmed) {
			// Past the last queue without one, or clear windows at a base a drain has
			// confirmed: the knee has moved up (or drift had eroded the limit).
			k.ceil = 0
		}
	}
	return k.plan(w)
}

// queueVanished reports whether a clear window (see grow) shows that the knee rose past the
// limit: latency fell, beyond the noise of two windows, from that of the last queue seen under a
// limit as high or higher, which was not a window right after a cut. Latency that falls
// because the limit fell is the queue's answer to the cut; latency that falls under the limit
// that queued means the dependency serves more at once than before (capacity grew). Not where
// latency lags a window (a long call's latency answers a change late), nor for a small share
// (see smallShare), whose windows swing with the other replicas' limits.
func (k *kneeLimit) queueVanished(cur kneeWindow) bool {
	return k.queueAt > 0 && !cur.lags && !smallShare(k.est) && toLimit(cur.limit) >= toLimit(k.queueAt) &&
		math.Log(k.queueLat/cur.lat) > max(0.04, 3*math.Sqrt2*k.spread(cur.n))
}

// nextWindow returns the length of the next window (0: the configured one).
func (k *kneeLimit) nextWindow() time.Duration { return k.next }

// shortWindow returns the length of the window after a fast growth of the limit, shorter than
// the configured one where that suffices: a climb towards a knee far above (a capacity that
// rose, a cold start) then takes a few short windows rather than a few seconds of calls
// rejected that the dependency could serve. The window must hold ten latencies and a quarter
// more (its latency then answers the growth within it, see kneeWindow.lags), and, at the rate
// the grown limit admits without a queue, the samples that keep its tolerance at kneeTolerance
// (three standard deviations of its mean latency within it). The growth that follows is
// decided on that window as on any other. Until the spread of latency is measured (a limit
// that changes every window from the start measures none) it is taken to be that of
// exponential service, the widest the rules assume: a startup's doubling on a fast dependency
// then climbs on short windows too (a cold start on a knee of 150 of 2ms calls reached it in
// 1.1s rather than 3s, one whole window a doubling).
func (k *kneeLimit) shortWindow(cur kneeWindow) time.Duration {
	return k.windowFor(1.25*kneeSpan, cur.lat, samplesFor(k.noise, k.noiseN, kneeTolerance/3), cur.rate*k.step)
}

// windowFor returns the length of a window that holds latencies calls' latencies of lat (ns) and
// samples completions at rate (per second), whichever is longer: 0 (the configured window) when
// that is not shorter than it, or when nothing completes.
func (k *kneeLimit) windowFor(latencies, lat, samples, rate float64) time.Duration {
	if rate <= 0 {
		return 0
	}
	d := max(latencies*lat, samples/rate*1e9)
	if d >= float64(k.window) {
		return 0
	}
	return time.Duration(d)
}

// testWindow returns the length of the window that tests, under half the calls in flight of
// cur (the row's first window), whether drops are the dependency's own (see decide): the
// samples in which ownDrops resolves a cut by half (three standard deviations of the
// difference of two windows' mean latencies within 80% of it) at the rate half those calls
// complete, and twenty latencies at the least, so that the window is not read as one that lags
// (its own latency, timeouts included, may be higher than cur's) and the calls admitted before
// the cut, the long ones and their timeouts first, are a small part of it. 0 (the configured
// window) when that is as long.
func (k *kneeLimit) testWindow(cur kneeWindow) time.Duration {
	return k.windowFor(2*kneeSpan, cur.lat, samplesFor(k.wander, k.wanderN, 0.8*math.Ln2/(3*math.Sqrt2)), cur.rate/2)
}

// watchesDrops reports whether the next window may end early on its drops (see endsEarly): the
// window after a growth of the limit, and every window once a drain has confirmed base. A limit
// that grew into timeouts (a startup's doubling through a queue it could not see) would
// otherwise run a whole window of calls into them: a cold start of a knee of 8 under 2x overload
// timed out 217 calls in that window. So would a capacity that falls under a settled limit (80
// workers to 5: a window of timeouts, then cuts of at most half a window). Not before base is
// confirmed without a growth: a cold start's windows, whose limit is above the knee by design
// until the drains bring base down, ended early on drops of the queue they measure, and the lone
// cold start of a knee of 8 lost 0.7 points of goodput.
func (k *kneeLimit) watchesDrops() bool { return k.step > 1 || k.confirmed }

// endsEarly reports whether a window that watches its drops (see watchesDrops) should end at
// once: it holds kneeEarly samples or more, and its drops are above the share seen without load
// by more than a quarter of them beyond three standard deviations of their count, or exceed the
// drops that share would give by twice the limit (and kneeEarly), five standard deviations of
// their count beyond it. The share alone is diluted by the calls that succeeded before the
// overload began within the window: a capacity that fell from 80 workers to 5 half a window in
// timed out a whole limit of calls for another half window before the share crossed its bar
// (where the fall came at a window's start, the window ended within a tenth of one).
func (k *kneeLimit) endsEarly(samples, drops int) bool {
	if samples < kneeEarly {
		return false
	}
	n := float64(samples)
	if float64(drops)/n-k.baseDrop > 0.25+3*math.Sqrt(0.25/n) {
		return true
	}
	excess := float64(drops) - k.baseDrop*n
	p := max(k.baseDrop, 1/n)
	return excess >= max(kneeEarly, 2*k.est) && excess > 5*math.Sqrt(n*p*(1-p))
}

// readsEvery returns how often the next window is read before its end (see endsAt): every
// twentieth of the configured window in the first window, never after.
func (k *kneeLimit) readsEvery() time.Duration {
	if k.prev.n == 0 && k.base == 0 {
		return k.window / 20
	}
	return 0
}

// endsAt reports whether the first window, read before its end (see readsEvery), ends there: it
// spans 12.5 latencies (its latency is then not biased short, see kneeWindow.lags), it holds the
// samples for a standard deviation of its mean of half the tolerance with exponential calls
// (about 400: base read within the tolerance), and the limit held back as many calls as it
// served. A light load far above the initial limit (51 calls in flight of 10ms on a knee of 64,
// from 20) was otherwise rejected by more than half for a whole window before the startup's
// doubling began: 98.85% of the best goodput over its minute instead of 99.6%. Where the limit
// holds back fewer, the window is not worth cutting short, and a light load just below the
// initial limit may read low (see docs/knee-design.md, "first window read early").
func (k *kneeLimit) endsAt(w WindowSummary) bool {
	n := float64(w.Samples)
	return float64(w.Duration) >= 1.25*kneeSpan*float64(w.AvgLatency) && n >= kneeBaseSamples && w.Rejected >= w.Samples
}

// kneeBaseSamples is how many samples read base within the tolerance whatever the spread: those
// for a standard deviation of a window's mean of half the tolerance with exponential calls (about
// 400). The first window read early (see endsAt) and a drain (see drainLength) hold as many.
var kneeBaseSamples = samplesFor(1, 1, kneeTolerance/2)

// smallShare reports whether a limit is below 10, where its one call of slack is more than the
// tolerance: most often a replica's share. The replicas' drains, kept down and, until they
// agree with base, on every boundary, hold the sum of their limits near the knee, and the rules
// that would let one limit grow back sooner (a drain across the knee, growth near the last
// queue) cost replicas their fair shares there.
func smallShare(limit float64) bool { return kneeSlack/limit > kneeTolerance }

// bands returns the bands of latency over base (as ratios) a window is read in: at or below
// hold the limit may grow, above queue it is cut, between the two it holds; a cut aims at
// target. Target is the middle of the tolerance, or its lower half under heavy overload (see
// grow).
func (k *kneeLimit) bands(cur kneeWindow, w WindowSummary, tol float64) (hold, queue, target float64) {
	if cur.binding && cur.heavy && kneeSlack/k.est <= tol/4 && 3*k.wanderSpread(cur.n) <= tol/2 {
		// Only where the narrowed band stands above the noise: its cut, at half the
		// tolerance, is still three standard deviations of the window's mean. Where the
		// tolerance is noise's (calls that vary much, few samples), half of it is a standard
		// deviation and a half, and noise alone cut the limit every few windows: a cold start
		// of 120ms exponential calls at 20 for a knee of 100 under 2x overload (rejecting four
		// calls for each one it admitted because its limit was far too low, not because the
		// dependency was overloaded) wandered between 20 and 40 and reached the knee after 75
		// seconds, 43% of the best goodput ("heavy overload" in docs/knee-design.md).
		return 1 + tol/4, 1 + tol/2, 1 + tol*kneeCutTarget/2
	}
	tol = max(tol, k.lossTolerance(cur, w))
	return 1 + tol/2, 1 + tol, 1 + tol*kneeCutTarget
}

// lossTolerance returns the tolerance a window's calls arriving at random ask of a limit that
// rejects what it cannot admit (0 where they ask for none): the latency, over base, of the
// lowest limit that carries kneeLossGoodput of the load the dependency can serve, where that
// limit is at or above the window's (see lossModel): below it, the tolerance makes the limit
// grow to it, and at it, holds it there (a tolerance only below it cut the limit back from it
// every other window: a knee of 8 under 2x overload spent half its windows at 9, where the
// model asks for 10; holding 10 gains it 0.8 points of goodput on average). A limit at the
// knee leaves workers idle whenever arrivals bunch and then pause, and the calls it rejected
// meanwhile are lost: under moderate overload (1.3 times a knee of 24) 5 calls of queue keep
// 98% of the goodput, at 11.5% of latency, above the lower half of a tolerance of 10%, where
// the limit stops growing. Only where the window tells the dependency's workers apart: a limit
// that binds (its rejections are the model's evidence), whose latency does not lag a window,
// that reads at least kneeLossFewest workers (see there), and whose base a drain confirmed and
// no drain made suspect (a cold start's base, measured through the queue, reads the load
// offered in base latencies low); not under heavy overload (see bands), nor above
// kneeLossMost. At most kneeMaxTolerance.
func (k *kneeLimit) lossTolerance(cur kneeWindow, w WindowSummary) float64 {
	limit := toLimit(cur.limit)
	if !cur.binding || cur.lags || !k.confirmed || k.suspect || w.Duration <= 0 || limit > kneeLossMost {
		return 0
	}
	offered := float64(w.Samples + w.Rejected)
	load := offered / float64(w.Duration) * k.expected()
	at, lat := lossModel(limit, load, float64(w.Rejected)/offered)
	if at < limit {
		return 0
	}
	return min(kneeMaxTolerance, (lat-1)/kneeCutTarget) // a cut aims at base*(1+tol*kneeCutTarget)
}

const (
	// kneeLossGoodput is the share of the load the dependency can serve that lossTolerance
	// asks a limit to carry.
	kneeLossGoodput = 0.98
	// kneeLossReach caps the limit lossModel asks for at this many times the workers it
	// inferred: the limits of a small knee of noisy calls (8 workers under 2x overload) then
	// wander past 1.5 times it less often (see docs/knee-design.md, "loss tolerance").
	kneeLossReach = 1.3
	// kneeLossMost is the largest limit lossTolerance reads: above it, the queue random
	// arrivals need is within the tolerance's floor (200 workers need 2% of latency at 1.05
	// times their load, none at 1.3), and the model's cost, which grows with the limit (it
	// runs under the engine's lock once a window), buys nothing.
	kneeLossMost = 200
	// kneeLossFewest is the fewest workers lossModel reads a window as before it asks for a
	// queue: a replica's rejections count the slots the other replicas leave it, not the
	// workers, and a share of 4 to 6 slots (ten replicas on a knee of 40) reads as a dependency
	// of that many workers, whose extra queue then adds up with the other replicas' past 1.5
	// times the knee. A lone dependency of fewer workers loses the rule with them; one of 8 (2x
	// overload) keeps it.
	kneeLossFewest = 7
)

// lossModel reads a window as an M/M/c/limit system: Poisson arrivals of load (in calls of base
// latency), c workers, and at most limit calls in the system, the rest rejected and lost (a
// limit over a pool of workers with a queue; processor sharing has the same throughput and mean
// latency). It takes for c the fewest workers that would reject no more than the window's
// rejected share did under that limit, and returns the lowest limit, up to 4c, at which the
// model carries kneeLossGoodput of min(load, c), at most kneeLossReach times c, with the mean
// latency over base at the limit that carries it (0 and 1 where no limit up to 4c does, or where
// c is fewer than kneeLossFewest).
func lossModel(limit int, load, rejected float64) (at int, lat float64) {
	lo, hi := 1, limit
	for lo < hi { // rejection falls as workers are added
		mid := (lo + hi) / 2
		if lossRejected(mid, limit, load) <= rejected {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	c := lo
	if c < kneeLossFewest {
		return 0, 1
	}
	want := kneeLossGoodput * min(load, float64(c))
	m := newLossStates()
	for n := 1; n <= 4*c; n++ {
		m.add(n, c, load)
		if n >= c && m.busy >= want*m.z {
			return min(n, int(kneeLossReach*float64(c))), m.flight / m.busy
		}
	}
	return 0, 1
}

// lossRejected returns the share of the calls an M/M/c/limit system rejects at a load: the
// probability that it holds limit calls.
func lossRejected(c, limit int, load float64) float64 {
	m := newLossStates()
	for n := 1; n <= limit; n++ {
		m.add(n, c, load)
	}
	return m.p / m.z
}

// lossStates sums the states of an M/M/c/limit system up to a limit, one state at a time: the
// weight p of the last (p(n) = p(n-1) x load / min(n, c)), the total weight z of the states so
// far, and the weighted busy workers and calls in the system.
type lossStates struct{ p, z, busy, flight float64 }

// newLossStates returns the sums over the state of no call, whose weight is 1.
func newLossStates() lossStates { return lossStates{p: 1, z: 1} }

// add adds the state of n calls. The sums are scaled down together where they grow large
// (heavy load over many states): only their ratios count.
func (m *lossStates) add(n, c int, load float64) {
	m.p *= load / float64(min(n, c))
	m.z += m.p
	m.busy += m.p * float64(min(n, c))
	m.flight += m.p * float64(n)
	if m.z > 1e200 {
		m.p, m.z, m.busy, m.flight = m.p/1e200, m.z/1e200, m.busy/1e200, m.flight/1e200
	}
}

// recovered reports whether the load fell to light load: kneeRecovered windows in a row about
// base, completions that fell well below their average, and a limit that does not bind.
// After an overload, light load would otherwise be rejected: the average of recent windows,
// which fades by an eighth a window, keeps room above bursts of calls shut for ten windows or
// more. It tells this limit nothing then: latency at base, under a limit that does not bind, is
// the no-load latency. (The watch at the grid's boundary needs less: the load fell, and no window
// read over the tolerance since; see plan.)
func (k *kneeLimit) recovered(cur kneeWindow) bool {
	return k.fell && k.atBase >= kneeRecovered && !cur.binding
}

// usage returns what the limit effectively was in a window: the limit when it bound, the calls
// in flight with the tolerance when it did not.
func (k *kneeLimit) usage(cur kneeWindow, tol float64) float64 {
	if cur.binding {
		return k.est
	}
	return min(k.est, max(1, cur.conc*(1+tol/2)))
}

// resolves reports whether a drain of the given depth, over a window of n samples, tells a
// queue from none: three standard deviations of its elasticity within kneeElastic.
func (k *kneeLimit) resolves(n, depth float64) bool {
	return 3*math.Sqrt2*k.spread(n)/-math.Log(1-depth) <= kneeElastic
}

// cut lowers the estimate to v, by at most half.
func (k *kneeLimit) cut(v float64) { k.set(max(k.est*0.5, min(k.est, v))) }

// set moves the estimate to v, within the limits, and remembers the step.
func (k *kneeLimit) set(v float64) {
	v = max(k.min, min(k.max, v))
	if k.est > 0 {
		k.step *= v / k.est
	}
	k.est = v
	k.peak = max(k.peak, v)
}

// plan decides whether the next window drains, and returns the limit for it. Drains fall on a
// grid of the wall clock, so that the replicas of a service drain together and see the
// dependency without each other's queues: at most every kneeDrainEvery windows, and off the
// grid only after four times that without one. A drain window starts at the grid's boundary:
// the window before it is cut short to end there (see below); where calls are long, the limit
// is lowered a while before, so that the calls admitted before the drain end first (see lead).
// There is no drain while latency stays about base (nothing to learn) or while the limit grows,
// unless base moved along its trend or the last drain lowered it by much (see lowered). A limit
// that does not bind drains from the calls in flight, except once the load has fallen to light
// load (see fell), where it watches.
// While drains agree with base they are spaced out to every second, then every fourth boundary
// of the grid (see drained), the same boundaries for every replica; the drains come back to every
// boundary as soon as anything says base may have moved: a suspect base, one moved along its
// trend, a limit that sagged below the one the last agreeing drain restored, a queue or drops
// that came without the limit growing, cuts that did not lower latency. A base first measured
// under a limit that did not bind is checked by one drain (see verify below).
func (k *kneeLimit) plan(w WindowSummary) int {
	cur := k.prev
	tol := k.tolerance(cur)
	quiet := 1 + tol/2 // latency within the tolerance's middle: nothing to learn from a drain
	if !cur.binding {
		quiet = 1 + tol // a drain from the calls in flight costs more: only under a queue
	}
	// Base moved along a trend since it was last measured, or the last drain lowered it by
	// much (it was measured through a queue, and may still be too high): a drain must check it,
	// whatever latency says (base too high makes latency look like base, and a queue grows
	// under it).
	extrapolated := cur.binding && k.extrapolated(tol)
	alignAt, alignLead := k.alignAt, k.lead
	k.alignAt, k.lead = 0, 0
	if k.base == 0 || cur.drain || k.clear >= 1 && !extrapolated && !k.lowered {
		return toLimit(k.est)
	}
	// A base first measured under a limit that did not bind may be a queue: a closed loop of
	// fewer clients than the limit never reaches it, and nothing but admitting fewer of them
	// tells their latency from a slower dependency's. One drain checks it, where it can tell
	// (latency steady enough) and costs little: calls in flight that barely vary (a closed loop,
	// whose rejected clients come back), not the bursts of open light load.
	verify := k.unverified && k.resolves(cur.n, kneeDrainDepth) && cur.maxFlight <= cur.conc+math.Sqrt(cur.conc)
	// After the load fell, a drain from the calls in flight would only reject calls (see
	// recovered): watch, even if base is suspect, until a window reads over the tolerance
	// (fell's end); one in its upper half is noise under light load, and once drained a limit
	// from 11 to 2 for 4 calls in flight.
	observe := !extrapolated && k.calm <= quiet && (!k.suspect && (k.confirmed || !cur.binding && !k.started && !verify) || k.fell && !cur.binding)
	period := int64(kneeDrainEvery) * int64(k.window)
	now := w.End.UnixNano()
	next := now + int64(max(w.Duration, k.window))
	// Where calls are long (a window holds fewer than kneeSettleLag latencies), a drain's
	// window reads the calls admitted before the drain, under the higher limit, as well as its
	// own: about lat/window of its samples, which bias its mean up by that share of the fall of
	// latency the drain causes (at most its depth). Where that bias is larger than the spread of
	// the drain window's mean, the drain begins lead before the boundary, where its limit
	// applies while those calls end (a window that decides nothing), and its window starts at
	// the boundary. Below, windows are placed against the boundary as if they ended lead later
	// (shifted).
	lead := int64(0)
	if win := float64(k.window); win < kneeSettleLag*cur.lat && cur.lat/win*kneeDrainDepth > k.spread(cur.rate*win/1e9) {
		lead = min(int64(k.window), int64(kneeSettle*cur.lat))
	}
	if k.est < kneeSagged*k.spaceAt || k.suspect || extrapolated {
		k.spacing = 1
	}
	at := (next + lead) / period // the boundary of the grid the next window crosses, if it crosses one
	crossing := (now+lead)/period != at
	if alignAt > 0 && now >= alignAt-alignLead {
		// The window just ended was cut short to end at this boundary (lead before it, the
		// lead it was cut short for: below): the drain starts here.
		at, crossing, lead = alignAt/period, true, alignLead
	}
	shifted := now + lead
	if b := (shifted/period + 1) * period; !crossing && k.next == 0 && !k.spacedOver(b/period) && b-shifted > int64(k.window) && b-shifted < int64(k.window)+int64(k.window)/4 {
		// The window after the next would begin within a quarter of a window of the
		// boundary, too close to be cut short to it (below), and drain from there, early.
		// Windows of any length come to that after short ones (see shortWindow): split the
		// span to the boundary in two, so that the drain still starts on it.
		k.next = time.Duration((b - shifted) / 2)
	}
	if !crossing && k.windows < 4*kneeDrainEvery*max(1, k.spacing) || k.spacedOver(at) {
		return toLimit(k.est)
	}
	if b := at * period; crossing && b-shifted >= int64(k.window)/4 && b-shifted != int64(k.window) {
		// Each replica's windows end on its own calls, so the window that crosses the
		// boundary begins anywhere in the window before it, and the replicas' drains
		// overlapped by two thirds on average: each drain then read the others' limits as
		// well as its own. The next window is cut short to end at the boundary, and the
		// drain (or watch) is decided there, so that every replica's drain window starts at
		// the boundary. Not within a quarter of a window of it (a window that short reads
		// little; the drain starts that much early, unless the window before was split, see
		// above), nor where the next window already ends on it (windows of exactly the
		// configured length, from the grid's origin). A next window longer than the
		// configured one (pooled) is cut short at the window after.
		k.alignAt, k.lead = b, lead
		if d := time.Duration(b - shifted); k.next == 0 || d < k.next {
			k.next = d
		}
		return toLimit(k.est)
	}
	if observe {
		// Nothing to learn from draining this limit, but other replicas may drain: watch
		// the window as a drain, without lowering the limit.
		if crossing && !cur.binding {
			k.drainOf, k.depth = k.est, 0
			k.settleTo(lead, crossing, at*period, now)
		}
		return toLimit(k.est)
	}
	k.next = 0 // a drain window is a whole one: it measures base
	k.settleTo(lead, crossing, at*period, now)
	k.depth = kneeDrainDepth
	if k.suspect {
		k.depth *= 2
	}
	if !k.settle && cur.binding && !smallShare(k.est) {
		// The drain needs only the samples that read it (see drainLength). Not a drain from
		// the calls in flight, nor one that follows a settling window (where calls are long,
		// a drain window is a whole one), nor a small share's, which drains by whole calls
		// from a few and reads noisily (on the wall clock, a knee of 8 lost a point of
		// goodput to such shorter drains).
		if d := k.drainLength(cur); d > 0 {
			k.next = d
		}
	}
	k.drainOf = k.est
	k.est = max(k.min, k.usage(cur, tol)*(1-k.depth))
	if from, to := toLimit(k.drainOf), toLimit(k.est); cur.binding && k.confirmed && to < from {
		// The limit is a whole number of calls: a drain of 15% runs at 10 after 11 (9%) from
		// an estimate of 11.9, at 9 (18%) from 11.2. Its elasticity is read against the
		// limits it ran at (see drained); read against 15%, a drain across a knee of 10
		// looked like a queue, and the limit stayed below the knee. A small share's drains
		// most of all: from 9 to 7 across a knee of 8 read as a queue, and under heavy overload
		// the limit spent a few windows below the knee after every drain. Only once base is
		// confirmed: in a cold start's drains, the same reading cost replicas their fair shares.
		k.depth = 1 - float64(to)/float64(from)
	}
	k.windows = 0
	k.suspect = false
	k.lowered = false
	k.unverified = false
	return toLimit(k.est)
}

// drainLength returns how long a drain window needs to be (0: the configured window, see
// windowFor). A drain costs goodput for as long as it lasts (the limit is below the knee), so
// its window holds only the samples that read it, and kneeSpanDrain latencies, so that the
// calls admitted before the drain are few of its samples.
// The samples are those for a standard deviation of the drained window's mean of half the
// tolerance with exponential calls, whatever spread was learned (about 400): two of them make
// the tolerance, so the drain reads base within it. Once base is confirmed, fewer where they
// read the drain's elasticity to within a quarter (three standard deviations of it, as in
// resolves): calls of little spread read it from a few hundred samples or less.
// Before base is confirmed, the drain may be what measures it (a cold start's base, measured
// through its queue, comes down by drains), and its mean is taken as it is (see drained): it is
// cut short only where that takes half a window or less. A drain shortened by less saves
// little, and two replicas of 50ms exponential calls (drains of 0.8 windows) took different
// courses from the first such drain on, until one of them stopped binding and grew, the worst
// variant's goodput 97.6% to 91.1% (see docs/knee-design.md, "drain").
func (k *kneeLimit) drainLength(cur kneeWindow) time.Duration {
	rate := cur.rate * (1 - k.depth)
	n := kneeBaseSamples
	if !k.confirmed {
		if d := k.windowFor(kneeSpanDrain, cur.lat, n, rate); d <= k.window/2 {
			return d
		}
		return 0
	}
	// The spread of the drained window's mean that reads its elasticity to within a quarter.
	n = max(1, min(n, samplesFor(k.noise, k.noiseN, kneeElastic/2*-math.Log(1-k.depth)/(3*math.Sqrt2))))
	return k.windowFor(kneeSpanDrain, cur.lat, n, rate)
}

// settleTo begins a drain (or a watch) with a window that lets the calls admitted before it end
// where calls are long (lead > 0, see plan): up to the boundary b it crosses, or lead long off the
// grid. The drain's own window follows it.
func (k *kneeLimit) settleTo(lead int64, crossing bool, b, now int64) {
	if lead == 0 {
		return
	}
	d := lead
	if crossing && b > now {
		d = b - now
	}
	k.settle, k.next = true, time.Duration(d)
}

// spacedOver reports whether spaced drains pass over the grid's boundary at (counted in periods
// of the grid): it is not one of every spacing-th, and the last drain is recent enough (see plan).
func (k *kneeLimit) spacedOver(at int64) bool {
	return k.spacing > 1 && at%k.spacing != 0 && k.windows < 4*kneeDrainEvery*max(1, k.spacing)
}

// learnNoise estimates the spread of one call's latency (as a share of the mean) from three
// like windows in a row: none a drain, and limits within a probe of each other. It takes the
// second difference of their latencies, which a steady drift of latency (heavier calls) does not
// move, as a difference of two windows would. The spread of a window's mean is that over the
// square root of its samples.
// It keeps two estimates. noise takes only windows whose limits are within 3% of each other:
// the spread of the calls themselves, which a window's mean is read against where its precision
// is what counts (a measurement of base, a drain's reading, pooling). wander also takes windows
// a probe apart (half a call), the spread a window's latency shows between the windows the limit
// actually runs: it sets the tolerance and the noise a change of the limit must stand out of
// (see wanderSpread). A limit of 8 to 10 probes by 5% or more in most windows, so noise learned
// from a handful of them and could sit far off (0.36 for exponential calls whose spread is about
// 0.86, and the tolerance at one call instead of about 22%: a base read 7% low then held the
// limit at half the knee); replicas' windows a probe apart also carry the other replicas' moves,
// a spread (0.28 to 0.35 against 0.18 for ten replicas of 100ms calls) that reads their drains
// and measurements as less precise than they are, and raised their limits where it stood in for
// noise everywhere.
func (k *kneeLimit) learnNoise(prev, cur kneeWindow) {
	older := k.older
	k.older = prev
	if older.drain || prev.drain || cur.drain || older.n == 0 || prev.n == 0 || cur.n == 0 ||
		math.Abs(older.limit-cur.limit) > max(0.03*cur.limit, kneeProbe) || math.Abs(prev.limit-cur.limit) > max(0.03*cur.limit, kneeProbe) {
		return // not like windows: the limit moved by more than a probe
	}
	// d2 has variance cv²(1/n1 + 4/n2 + 1/n3); the mean of its absolute value is sqrt(2/pi)
	// of its standard deviation.
	d2 := math.Abs(math.Log(cur.lat) - 2*math.Log(prev.lat) + math.Log(older.lat))
	cv := d2 * 1.2533 / math.Sqrt(1/older.n+4/prev.n+1/cur.n)
	averageSpread(&k.wander, &k.wanderN, cv)
	if math.Abs(math.Log(older.limit/cur.limit)) <= 0.03 && math.Abs(math.Log(prev.limit/cur.limit)) <= 0.03 {
		averageSpread(&k.noise, &k.noiseN, cv)
	}
}

// averageSpread feeds one measurement of the spread to an estimate and its count. The first eight
// are a plain mean, with the prior (the spread of exponential service times) counted as one of
// them, since one measurement may be far off either way; then a robust average, in which one
// wild difference (a replica elsewhere changed its limit) moves it by little.
func averageSpread(est *float64, count *int, cv float64) {
	if *count < 8 {
		*count++
		if *count == 1 {
			*est = 1
		}
		*est += (cv - *est) / float64(*count+1)
		return
	}
	*est += (min(cv, 2**est) - *est) / 16
}

// tolerance returns how far above base a window's latency may be before it counts as a queue:
// kneeTolerance or three standard deviations of the ratio of the window's mean latency to base,
// up to kneeMaxTolerance, or a queue of kneeSlack calls over the limit if that is more. The
// last keeps a small limit from leaving workers idle between arrivals, and evens out replicas:
// the smaller a share, the more it tolerates.
func (k *kneeLimit) tolerance(cur kneeWindow) float64 {
	if cur.n == 0 {
		return kneeMaxTolerance
	}
	// The ratio of a window's latency to base is as uncertain as both, but for a limit that
	// binds only the window's spread counts: replicas of a service then hold the same
	// tolerance, which keeps their shares even, while a limit that does not bind (light
	// load) is not cut by an error in base. The spread is the one the window's latency shows
	// between the windows the limit runs (see learnNoise).
	sd := k.wanderSpread(cur.n)
	if !cur.binding {
		sd = math.Sqrt(sd*sd + k.varb)
	}
	// kneeMaxTolerance caps what noise may hide, not the call of queue every limit may hold:
	// a limit of 4 calls or fewer tolerates its one call (a replica squeezed to a call or two
	// by a base read low otherwise read the others' queue as its own and stayed there).
	return max(min(kneeMaxTolerance, max(kneeTolerance, 3*sd)), kneeSlack/max(1, k.est))
}

// observe feeds base one measurement of the no-load latency: a window of n samples at or below
// the knee. Base is a Kalman filter of its logarithm: each measurement counts in proportion to
// its precision (the spread of latency over the window's samples) against base's own, which
// widens every window by kneeDrift, so that base follows heavier calls. A measurement far off
// (three standard deviations) counts only when the next one is off the same way: one noisy
// window cannot move base, two in a row mean it moved. A clean measurement, one that sees no
// queue (a drain whose latency did not follow it, cuts that did not lower latency), also
// corrects the trend of base per window; other measurements let a trend fade.
func (k *kneeLimit) observe(lat, drops, n float64, clean bool) {
	r := k.spread(n)
	r *= r
	if k.base == 0 {
		k.base, k.baseDrop, k.varb, k.since = lat, drops, r+kneePrior*kneePrior, 0
		return
	}
	z := math.Log(lat / k.expected())
	v := k.varb + r
	if z*z > 9*v {
		sign := 1
		if z < 0 {
			sign = -1
		}
		if k.surprise != sign {
			k.surprise, k.surpriseZ, k.surpriseAt = sign, z, k.since
			return
		}
		// Two surprises the same way: base moved. Start again from this measurement. If the
		// second is further off than the first, base is still moving (calls getting heavier
		// by the window): keep moving it at that pace until the next measurement; a step
		// (both about as far off) has no trend.
		d := k.since - k.surpriseAt
		switch {
		case clean && d > 0 && (z < k.surpriseZ || k.limitHeld()):
			// Two drains off the same way, the second further: the trend is off by the
			// growth of the error between them (a limit that grew meanwhile may have grown
			// the queue its drain sees, as above).
			k.trend += (z - k.surpriseZ) / float64(d)
		case d > 0 && math.Abs(z) > 1.2*math.Abs(k.surpriseZ):
			k.trend = (z - k.surpriseZ) / float64(d)
		default:
			k.trend = 0
		}
		// At most kneeMaxTrend a window: calls that get heavier or lighter do so by a few
		// percent a window at most (a service time that triples over two minutes moves 0.9%).
		// Two windows that read 15% and 26% below base one after the other, under a limit
		// that did not bind while the dependency's queue swung, taught 14% a window: base ran
		// from 106ms to 18ms in twelve windows, every window then read as a queue, and the
		// limit fell to 1 for a knee of 6 ("trend" in docs/knee-design.md).
		k.boundTrend()
		k.estAtBase = k.est
		k.base, k.baseDrop, k.varb, k.since, k.surprise = lat, drops, r, 0, 0
		k.lightBase = 0
		return
	}
	k.surprise = 0
	g := k.varb / v
	k.base = k.expected() * math.Exp(g*z)
	switch {
	case clean && k.since >= 2 && (z < 0 || k.limitHeld()):
		// A drain measures base apart from any queue: what it finds off the trend, per
		// window since the last measurement, corrects the trend by half. Latency above the
		// trend counts only when the limit has not grown meanwhile: calls got heavier. With
		// replicas, a limit that grew may have grown the queue its drain still sees, and
		// following it would grow the limits further.
		k.trend += g / 2 * z / float64(k.since)
	default:
		k.trend /= 2 // a measurement that agrees with base: a trend, if any, is fading
	}
	k.boundTrend()
	k.estAtBase = k.est
	k.baseDrop += g * (drops - k.baseDrop)
	k.varb *= 1 - g
	k.since = 0
}

// readsShort returns by how much (log) the mean latency of a window may read short because its
// calls began with it (the first window, or one soon after): the calls in flight at its end
// are the long ones, and they have not ended. It reads that from Little's law on a window whose
// limit stayed full (rejections as many as its samples at least, and the limit reached): the
// limit's slots were busy for limit x Duration, of which the calls that ended account for
// Samples x AvgLatency and the calls still in flight for the rest, their ages A. A renewal's
// age averages m(1+cv^2)/2 for calls of mean m and spread cv, so A over the ended calls' time
// (rho) is about (m/T)(1+cv^2)/2, while their mean reads short by (m/T)cv^2 = 2 rho - m/T: the
// whole of m/T for exponential calls, nothing for steady ones, whatever the spread (unknown
// this early). Calls that began together and last alike end together, so a window that ends
// on one of them can leave the rest just short of ending: rho reads their full call, and this
// says "may", not "does". 0 where the limit did not stay full; at most kneeMaxTolerance, and
// three times m/T.
func readsShort(cur kneeWindow, w WindowSummary) float64 {
	if w.Samples == 0 || w.Duration <= 0 || w.Rejected < w.Samples || w.MaxInFlight < toLimit(cur.limit) {
		return 0
	}
	r := cur.lat / float64(w.Duration)
	rho := float64(toLimit(cur.limit))*float64(w.Duration)/(float64(w.Samples)*cur.lat) - 1
	return max(0, min(3*r, kneeMaxTolerance, 2*rho-r))
}

// spread returns the standard deviation of the logarithm of a window's mean latency: the spread
// of one call's latency (noise) over the square root of the samples, with a floor for what the
// model does not see.
func (k *kneeLimit) spread(n float64) float64 { return spreadOf(k.noise, k.noiseN, n) }

// wanderSpread is spread with the spread learned from windows a probe apart (wander), or, until
// that is measured, spread itself (see learnNoise).
func (k *kneeLimit) wanderSpread(n float64) float64 {
	if k.wanderN == 0 {
		return k.spread(n)
	}
	return spreadOf(k.wander, k.wanderN, n)
}

// spreadOf returns the standard deviation of the logarithm of a mean of n samples of a spread cv
// learned from that many measurements (see learnedCV).
func spreadOf(cv float64, measured int, n float64) float64 {
	cv = learnedCV(cv, measured)
	return math.Sqrt(cv*cv/max(1, n) + kneeFloor*kneeFloor)
}

// samplesFor returns the samples a window's mean needs for its spread (spreadOf) to be sd: the
// inverse of spreadOf, +Inf at or below kneeFloor, which no number of samples goes under.
func samplesFor(cv float64, measured int, sd float64) float64 {
	if sd <= kneeFloor {
		return math.Inf(1)
	}
	cv = learnedCV(cv, measured)
	return cv * cv / (sd*sd - kneeFloor*kneeFloor)
}

// learnedCV returns a spread of one call's latency cv learned from that many measurements, or
// until one, 1: the spread of exponential service times.
func learnedCV(cv float64, measured int) float64 {
	if measured == 0 {
		return 1
	}
	return cv
}

// boundTrend holds the trend within kneeMaxTrend a window either way (see observe).
func (k *kneeLimit) boundTrend() { k.trend = max(-kneeMaxTrend, min(kneeMaxTrend, k.trend)) }

// expected returns the no-load latency now: base moved along its trend for at most the windows
// between two drains (and by kneeTolerance at least), so that a trend that stopped misleads
// little until the next drain, while one that goes on is followed until then.
func (k *kneeLimit) expected() float64 {
	most := max(kneeTolerance, math.Abs(k.trend)*kneeDrainEvery)
	d := max(-most, min(most, k.trend*float64(k.since)))
	return k.base * math.Exp(d)
}
