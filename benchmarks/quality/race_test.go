//go:build race

package quality

// raceEnabled reports whether the test runs under the race detector.
const raceEnabled = true
