module github.com/resilience4cata/r4c/examples

go 1.26.0

require github.com/resilience4cata/r4c v0.0.0

require (
	github.com/resilience4cata/r4c/cmd/r4cgen v0.0.0 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)

// The tool directive keeps the generator required (go mod tidy would drop it otherwise), so
// that "go run github.com/resilience4cata/r4c/cmd/r4cgen" in the go:generate lines resolves.
tool github.com/resilience4cata/r4c/cmd/r4cgen

replace (
	github.com/resilience4cata/r4c => ../
	github.com/resilience4cata/r4c/cmd/r4cgen => ../cmd/r4cgen
)
