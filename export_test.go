package r4c

// Test-only access to unexported state, for the external tests (package r4c_test). This file
// is compiled only with the tests.

// LongLatencyOf returns the long-term latency of h's algorithm, which must be Gradient2.
func LongLatencyOf(h *AdaptiveLimitHandle) float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.alg.(*gradient2Algorithm).LongLatency()
}

// Gradient2Overloaded applies w to g as the engine's drop guard does.
func Gradient2Overloaded(g *gradient2Algorithm, w WindowSummary) int { return g.overloaded(w) }

// DropGuarded is the drop guard's test of a window.
func DropGuarded(samples, drops int64) bool { return dropGuarded(samples, drops) }

// The algorithms' types, unexported in the package (NewAdaptiveAlgorithm returns them as
// AdaptiveAlgorithm), for the tests that read their state.
type (
	Gradient2Algorithm = gradient2Algorithm
	VegasAlgorithm     = vegasAlgorithm
	KneeAlgorithm      = kneeAlgorithm
)
