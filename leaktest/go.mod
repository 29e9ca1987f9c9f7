module github.com/resilience4cata/r4c/leaktest

go 1.26.0

require github.com/resilience4cata/r4c v0.0.0

require go.uber.org/goleak v1.3.0

replace github.com/resilience4cata/r4c => ../
