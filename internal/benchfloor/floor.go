// Package benchfloor is the floor of an admitted call, shared by the core benchmarks and the
// peer benchmarks (module benchmarks/) so that both measure exactly the same thing: two
// monotonic clock reads plus the atomics of taking and returning a slot.
package benchfloor

import (
	"sync/atomic"
	"testing"
	"time"
)

// Limit is the floor's slot limit: large enough that no benchmark is ever rejected.
const Limit = 1000

// base is a fixed start with a monotonic reading: time.Since on it reads only the monotonic
// clock, as the engine's system-clock fast path does.
var base = time.Now()

// Slot is the least an admitted, measured call can do: take a slot with an atomic add checked
// against a limit loaded from an atomic, read the monotonic clock when the call starts and when
// it ends, and return the slot. The limit sits on another cache line than the counter, as in
// the engine.
type Slot struct {
	inFlight atomic.Int64
	_        [56]byte
	limit    atomic.Int64
	_        [56]byte
}

// New returns a slot with limit Limit.
func New() *Slot {
	f := &Slot{}
	f.limit.Store(Limit)
	return f
}

// InFlight returns the slots taken now.
func (f *Slot) InFlight() int64 { return f.inFlight.Load() }

// Call returns the measured latency of an empty call, or -1 when the limit is full.
func (f *Slot) Call() int64 {
	if f.inFlight.Add(1) > f.limit.Load() {
		f.inFlight.Add(-1)
		return -1
	}
	start := time.Since(base)
	lat := time.Since(base) - start
	f.inFlight.Add(-1)
	return int64(lat)
}

var (
	sinkInt  int64
	sinkAtom atomic.Int64
)

// Seq measures Call from one goroutine.
func Seq(b *testing.B) {
	f := New()
	b.ReportAllocs()
	var sum int64
	for b.Loop() {
		lat := f.Call()
		if lat < 0 {
			b.Fatal("rejected")
		}
		sum += lat
	}
	sinkInt = sum
}

// Parallel measures Call from GOMAXPROCS goroutines sharing one slot.
func Parallel(b *testing.B) {
	f := New()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var sum int64
		for pb.Next() {
			lat := f.Call()
			if lat < 0 {
				panic("rejected")
			}
			sum += lat
		}
		sinkAtom.Add(sum)
	})
}
