package r4c

// Test-only access to unexported state, for the external tests (package r4c_test). This file
// is compiled only with the tests.

// LongLatencyOf returns the long-term latency of h's algorithm, which must be Gradient2.
func LongLatencyOf(h *AdaptiveLimitHandle) float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.alg.(*gradient2Limit).LongLatency()
}

// Gradient2Overloaded applies w to g, a Gradient2 algorithm, as the engine's drop guard does.
func Gradient2Overloaded(g AdaptiveAlgorithm, w WindowSummary) int {
	return g.(*gradient2Limit).overloaded(w)
}

// DropGuarded is the drop guard's test of a window.
func DropGuarded(samples, drops int64) bool { return dropGuarded(samples, drops) }

// endAtEveryDrop is a window sizer that asks to end the window at every drop.
type endAtEveryDrop struct{ windowSizer }

func (endAtEveryDrop) watchesDrops() bool                { return true }
func (endAtEveryDrop) endsEarly(samples, drops int) bool { return true }

// EndWindowsAtEveryDrop makes h's algorithm ask, at every drop, that the window end at once.
func EndWindowsAtEveryDrop(h *AdaptiveLimitHandle) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sizer = endAtEveryDrop{h.sizer}
	h.watchDrops = true
}
