package r4c

// Test-only access to unexported state, for the external tests (package r4c_test). This file
// is compiled only with the tests.

// LongLatencyOf returns the long-term latency of h's algorithm, which must be Gradient2.
func LongLatencyOf(h *AdaptiveLimitHandle) float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.alg.(*Gradient2Algorithm).LongLatency()
}

// Gradient2Overloaded applies w to g as the engine's drop guard does.
func Gradient2Overloaded(g *Gradient2Algorithm, w WindowSummary) int { return g.overloaded(w) }

// DropGuarded is the drop guard's test of a window.
func DropGuarded(samples, drops int64) bool { return dropGuarded(samples, drops) }
