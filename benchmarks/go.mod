module github.com/resilience4cata/r4c/benchmarks

go 1.26.0

require (
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/resilience4cata/r4c v0.0.0
	golang.org/x/sync v0.25.0
)

require (
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/influxdata/tdigest v0.0.1 // indirect
)

replace github.com/resilience4cata/r4c => ../
