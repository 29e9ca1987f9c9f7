// Package leaktest proves, with go.uber.org/goleak, that r4c's pipelines leave no goroutine
// behind. It is a module of its own so that the core module keeps no dependency, not even a
// test-only one. It has no API: see leak_test.go.
package leaktest
