package r4c

import (
	"math"
	"time"
)

// KneeAlgorithm seeks the knee of the dependency: the smallest concurrency at which it delivers
// its full throughput. Below the knee a call's latency is the dependency's no-load latency and
// throughput grows with concurrency; above it, calls queue, latency grows in proportion and
// throughput does not. The limit follows the knee with a small tolerance of queueing.
//
// The model, its update rules and why each exists are in docs/adaptive-limit.md ("Knee").
// In short, per window:
//   - The no-load latency (base) is measured, never assumed: in drain windows, where the limit
//     is lowered for one window (replicas drain together: drains fall on a grid of the wall
//     clock), and in any window whose concurrency changed. The response of latency to a change
//     of concurrency (its elasticity) tells a queue (latency falls with concurrency) from a
//     heavier request mix (it does not), so base follows drift and is never learned from a
//     queue.
//   - A window whose latency is within the tolerance of base grows the limit (fast while there
//     is no queue at all, by a little near the tolerance); a window above it cuts the limit in
//     proportion, at most by half.
//   - Timeouts and other drops above the share seen without load cut the limit too.
//   - A window in which the limit did not bind (no rejection, in-flight calls below the limit)
//     changes nothing: latency then says nothing about the limit, and light load is never
//     rejected.
//
// It is deterministic: it draws nothing at random. It is not safe for concurrent use on its own;
// the engine calls it under its window lock.
type KneeAlgorithm struct {
	est      float64 // the limit estimate; the limit is its truncation
	min, max float64
	window   time.Duration // the configured window: drains are planned in its units

	base      float64 // no-load latency estimate (ns); 0 until measured
	baseDrop  float64 // share of drops without load
	suspect   bool    // base may be above the no-load latency (measured through a queue)
	drainAll  bool    // the current drain is one of every replica (on the coarse grid)
	noise     float64 // the spread of one call's latency, as a share of the mean
	prev      kneeWindow
	drainOf   float64 // the estimate a drain window lowered; 0 when not draining
	drainNext bool    // the next window is a drain
	windows   int64   // windows since the last drain
	calm      float64 // the average latency over base of recent windows
	ceil      float64 // the limit at which a queue was last seen; 0: none
}

// kneeWindow is what the algorithm keeps of the previous window.
type kneeWindow struct {
	lat       float64 // average latency (ns)
	conc      float64 // average concurrency (Little's law)
	maxFlight float64 // the most calls in flight
	n         float64 // samples
	binding   bool    // the limit held back a share of the calls (one in twenty or more)
	touched   bool    // the limit held back at least one call
	drain     bool
	limit     float64 // the limit during the window
}

// Tuning of the knee algorithm (see docs/adaptive-limit.md for the reasoning behind each).
const (
	kneeTolerance    = 0.1  // queueing tolerated above base: latency up to base*(1+tolerance)
	kneeMaxTolerance = 0.2  // ... or more with noisy latency, up to this
	kneeFastGrowth   = 0.5  // growth per window while there is no queue at all
	kneeDrainDepth   = 0.15 // a drain lowers the limit by this share
	kneeDrainEvery   = 10   // windows between drains on the wall clock's grid
	kneeElastic      = 0.5  // elasticity above which a latency change is a queue
)

func newKnee(c AdaptiveLimitConfig) AdaptiveAlgorithm {
	return &KneeAlgorithm{est: float64(c.InitialLimit), min: float64(c.MinLimit), max: float64(c.MaxLimit), window: c.Window}
}

// Limit returns the current limit.
func (k *KneeAlgorithm) Limit() int { return int(k.est) }

// Estimate returns the unrounded estimate behind the limit.
func (k *KneeAlgorithm) Estimate() float64 { return k.est }

// NoLoadLatency returns the no-load latency the algorithm has measured (0 before it has one).
func (k *KneeAlgorithm) NoLoadLatency() time.Duration { return time.Duration(k.base) }

// Update applies one window.
func (k *KneeAlgorithm) Update(w WindowSummary) int {
	lat := float64(max(1, w.AvgLatency))
	cur := kneeWindow{
		lat:       lat,
		conc:      lat * float64(w.Samples) / float64(max(1, w.Duration)),
		maxFlight: float64(w.MaxInFlight),
		n:         float64(w.Samples),
		binding:   w.Rejected > 0 && w.Rejected*20 >= w.Samples+w.Rejected,
		touched:   w.Rejected > 0 || w.MaxInFlight >= int(k.est),
		drain:     k.drainOf > 0,
		limit:     k.est,
	}
	drops := 0.0
	if w.Samples > 0 {
		drops = float64(w.Drops) / float64(w.Samples)
	}
	prev := k.prev
	k.prev = cur
	k.windows++
	tol := k.tolerance(cur)

	// Drops above the share seen without load are overload, whatever the latency says (a
	// timed-out call's latency is the timeout, which may look like a normal latency).
	if excess := drops - k.baseDrop; excess > 0.05+k.baseDrop {
		if cur.drain {
			k.drainOf = 0
		}
		k.est = k.clamp(k.est * max(0.5, 1-excess))
		k.suspect = true
		return k.plan(w)
	}
	if k.base == 0 {
		if cur.binding {
			// A first guess, which the next change of concurrency tests.
			k.base, k.baseDrop = lat, drops
		}
		return k.grow(cur, w, tol)
	}

	// The elasticity of latency to concurrency between two binding windows.
	e, changed := 0.0, false
	if prev.binding && cur.binding && prev.conc > 0 && cur.conc > 0 {
		dn := math.Log(cur.conc / prev.conc)
		dl := math.Log(cur.lat / prev.lat)
		if math.Abs(dn) > 0.05 {
			e, changed = dl/dn, true
		}
	}
	k.learnNoise(prev, cur)
	if cur.drain {
		// A drain window: every replica lowered its limit by the same share at the same
		// time. The elasticity is taken against that share, which all replicas know alike,
		// so that they all draw the same conclusion from the latency they all see.
		changed = prev.lat > 0 && k.drainOf > k.est
		if changed {
			e = math.Log(lat/prev.lat) / math.Log(k.est/k.drainOf)
		}
		switch {
		case changed && e < kneeElastic/2 && (lat < k.base || k.drainAll):
			// Latency did not follow concurrency down: the drained window was at or
			// below the knee, and its latency is the no-load latency, drift included.
			// Only a drain of every replica may raise base: one replica alone draining
			// does not empty the queue the others keep.
			k.base, k.baseDrop = lat, drops
			k.est = k.drainOf
		case changed && e > kneeElastic:
			// Still a queue at the drained concurrency: stay there. If its latency is
			// below base, base was measured through a queue: drain deeper next.
			k.suspect = lat < k.base*(1-tol/2)
			k.base = min(k.base, lat)
		default:
			k.base = min(k.base, lat)
			k.est = k.drainOf
		}
		k.drainOf = 0
		return k.plan(w)
	}
	if cur.binding && lat < k.base*(1-tol/2) {
		k.base = lat // clearly below base: the no-load latency is lower than measured
	}
	if changed && cur.conc > prev.conc && e > 0.9 && prev.lat < k.base*(1+tol/2) {
		// More concurrency, proportionally more latency, from a window whose latency was
		// about base: that window queued as well, so base was measured through a queue.
		k.suspect = true
	}
	return k.grow(cur, w, tol)
}

// grow moves the estimate by the window's latency over base.
func (k *KneeAlgorithm) grow(cur kneeWindow, w WindowSummary, tol float64) int {
	if k.base == 0 {
		return k.plan(w)
	}
	ratio := cur.lat / k.base
	if k.calm == 0 {
		k.calm = ratio
	}
	k.calm += (ratio - k.calm) / 8
	switch {
	case ratio > 1+tol && (cur.binding || k.calm > 1+kneeTolerance):
		// A queue: cut to the middle of the tolerance, and remember where it was. When the
		// limit did not bind, the cut applies to the calls that were in flight: a replica
		// whose limit is above its share of the load cuts too, since the queue is its too.
		from := k.est
		if !cur.binding {
			from = min(from, max(cur.conc, 1))
		}
		k.ceil = from
		k.est = max(k.est*0.5, from*(1+tol/2)/ratio)
	case !cur.binding:
		// Latency says little about the limit while it does not bind. Keep room above the
		// calls in flight, so that bursts of light load are not rejected, unless calls queue
		// a little: then come down towards them.
		if cur.touched && ratio <= 1+tol/2 && k.calm <= 1+kneeTolerance/4 {
			room := 1.25 * cur.maxFlight
			if k.ceil > 0 {
				room = min(room, k.ceil)
			}
			k.est = max(k.est, room)
		} else if k.calm > 1+kneeTolerance/2 {
			// The dependency queues: a limit that does not bind lets this replica take
			// more than its share. Come down to the calls in flight.
			k.est = max(cur.conc, k.est*0.8)
		}
	case ratio > 1+tol/2:
		// Within the tolerance: hold.
	case k.ceil > 0 && k.est > 0.85*k.ceil:
		// Near the last queue: probe up by a little.
		k.est += 0.2 * math.Sqrt(k.est)
		if k.est > 1.1*k.ceil {
			k.ceil = 0 // past the last queue without one: the knee has moved up
		}
	case k.calm > 1+kneeTolerance/4:
		// Calls queued recently: grow by a little.
		k.est += 0.2 * math.Sqrt(k.est)
	default:
		// No queue at all and far from the last one: grow fast.
		k.est *= 1 + kneeFastGrowth
		if k.ceil > 0 {
			k.est = min(k.est, 0.95*k.ceil)
		}
	}
	k.est = k.clamp(k.est)
	return k.plan(w)
}

// plan decides whether the next window drains, and returns the limit for it. Drains fall on a
// grid of the wall clock, so that replicas drain together and see the dependency without each
// other's queues: every kneeDrainEvery windows, or every two windows while base is in doubt.
// A replica whose limit does not bind drains too when the dependency queues, from the calls
// it has in flight, so that the drain empties its share of the queue as well.
func (k *KneeAlgorithm) plan(w WindowSummary) int {
	cur := k.prev
	if k.base == 0 || cur.drain || !cur.binding && k.calm <= 1+kneeTolerance/4 {
		return int(k.est)
	}
	every := int64(kneeDrainEvery)
	if k.suspect {
		every = 2
	}
	period := every * int64(k.window)
	now := w.End.UnixNano()
	next := now + int64(max(w.Duration, k.window))
	coarse := int64(kneeDrainEvery) * int64(k.window)
	if now/period == next/period && k.windows < 4*kneeDrainEvery {
		return int(k.est)
	}
	depth := kneeDrainDepth
	if k.suspect {
		depth *= 2
	}
	from := k.est
	if !cur.binding {
		from = min(from, max(1, cur.conc*(1+k.tolerance(cur)/2)))
	}
	k.drainOf = k.est
	k.drainAll = now/coarse != next/coarse
	k.est = k.clamp(from * (1 - depth))
	k.windows = 0
	k.suspect = false
	return int(k.est)
}

// learnNoise estimates the spread of one call's latency (as a share of the mean) from the
// difference between two like windows: same concurrency, neither a drain. The spread of a
// window's mean is that over the square root of its samples.
func (k *KneeAlgorithm) learnNoise(prev, cur kneeWindow) {
	if prev.drain || cur.drain || prev.n == 0 || cur.n == 0 || prev.conc == 0 {
		return
	}
	if prev.limit != cur.limit {
		return
	}
	// dl has variance cv²(1/n1 + 1/n2); the mean of its absolute value is sqrt(2/pi) of its
	// standard deviation.
	dl := math.Abs(math.Log(cur.lat / prev.lat))
	cv := dl * 1.2533 / math.Sqrt(1/prev.n+1/cur.n)
	if k.noise == 0 {
		k.noise = cv
	} else {
		// A robust average: one wild difference (a replica elsewhere changed its limit)
		// moves it by little.
		k.noise += (min(cv, 2*k.noise) - k.noise) / 16
	}
}

// tolerance returns how far above base a window's latency may be before it counts as a queue:
// kneeTolerance, or three standard errors of the window's mean, whichever is more.
func (k *KneeAlgorithm) tolerance(cur kneeWindow) float64 {
	if cur.n == 0 {
		return kneeTolerance
	}
	return min(kneeMaxTolerance, max(kneeTolerance, 3*k.noise/math.Sqrt(cur.n)))
}

func (k *KneeAlgorithm) clamp(v float64) float64 { return max(k.min, min(k.max, v)) }
