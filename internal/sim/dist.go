package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
)

// Dist is the distribution of a call's work around the phase's mean service time: a multiplier
// of mean 1.
type Dist interface {
	Sample(r *rand.Rand) float64
	String() string
}

// Fixed is no spread: every call takes the mean.
type Fixed struct{}

// Sample returns 1.
func (Fixed) Sample(*rand.Rand) float64 { return 1 }

func (Fixed) String() string { return "fixed" }

// Uniform spreads the work uniformly over [1-Spread, 1+Spread].
type Uniform struct{ Spread float64 }

// Sample returns a uniform multiplier.
func (u Uniform) Sample(r *rand.Rand) float64 { return 1 + u.Spread*(2*r.Float64()-1) }

func (u Uniform) String() string { return "uniform ±" + strconv.FormatFloat(u.Spread, 'g', -1, 64) }

// Exponential is an exponential multiplier of mean 1.
type Exponential struct{}

// Sample returns an exponential multiplier.
func (Exponential) Sample(r *rand.Rand) float64 { return r.ExpFloat64() }

func (Exponential) String() string { return "exponential" }

// LogNormal is a lognormal multiplier of mean 1 whose logarithm has standard deviation Sigma:
// with Sigma 0.8 one call in a hundred takes more than 4.5 times the mean.
type LogNormal struct{ Sigma float64 }

// Sample returns a lognormal multiplier.
func (l LogNormal) Sample(r *rand.Rand) float64 {
	return math.Exp(l.Sigma*r.NormFloat64() - l.Sigma*l.Sigma/2)
}

func (l LogNormal) String() string {
	return "lognormal σ=" + strconv.FormatFloat(l.Sigma, 'g', -1, 64)
}

// spreadTable holds many sorted samples of a Dist, to compute what share of calls can succeed
// under a timeout and how much work they use.
type spreadTable struct {
	x      []float64 // sorted multipliers
	prefix []float64 // prefix[i] = sum of x[:i]
}

// spreadTables keeps the tables of the package's own distributions (comparable values, unlike
// a Dist of the caller's, which may not be): a bench runs every contender, and best-fixed's
// search many fixed limits, on the same scenario, and drawing and sorting a table is a
// twentieth of a run. At most a few hundred are kept (1 MB each); then the cache starts again.
var spreadTables struct {
	sync.Mutex
	m map[spreadKey]*spreadTable
}

type spreadKey struct {
	d    Dist
	seed uint64
}

// spreadTableOf returns the table of d and seed: a kept one when d is one of the package's.
func spreadTableOf(d Dist, seed uint64) *spreadTable {
	switch d.(type) {
	case Fixed, Uniform, Exponential, LogNormal:
	default:
		return newSpreadTable(d, seed)
	}
	k := spreadKey{d, seed}
	spreadTables.Lock()
	t := spreadTables.m[k]
	spreadTables.Unlock()
	if t != nil {
		return t
	}
	t = newSpreadTable(d, seed) // outside the lock: runs in parallel draw their own at once
	spreadTables.Lock()
	if len(spreadTables.m) >= 256 {
		clear(spreadTables.m)
	}
	if spreadTables.m == nil {
		spreadTables.m = map[spreadKey]*spreadTable{}
	}
	spreadTables.m[k] = t
	spreadTables.Unlock()
	return t
}

// newSpreadTable draws the table of d and seed. A table is never changed once drawn.
func newSpreadTable(d Dist, seed uint64) *spreadTable {
	const n = 1 << 16
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	t := &spreadTable{x: make([]float64, n), prefix: make([]float64, n+1)}
	for i := range t.x {
		t.x[i] = d.Sample(r)
	}
	slices.Sort(t.x)
	for i, v := range t.x {
		t.prefix[i+1] = t.prefix[i] + v
	}
	return t
}

// under returns, for calls of mean work s (ns) and a timeout (0: none), the share that finish
// within the timeout when served at full speed, and the mean work a call uses: all of it, or
// up to the timeout when the dependency stops at the timeout (keep false).
func (t *spreadTable) under(s, timeout float64, keep bool) (ok, work float64) {
	n := float64(len(t.x))
	if timeout <= 0 {
		return 1, s * t.prefix[len(t.x)] / n
	}
	k, _ := slices.BinarySearch(t.x, timeout/s) // x[:k] < timeout/s
	for k < len(t.x) && t.x[k]*s <= timeout {
		k++
	}
	ok = float64(k) / n
	if keep {
		return ok, s * t.prefix[len(t.x)] / n
	}
	return ok, s*t.prefix[k]/n + timeout*(1-ok)
}
