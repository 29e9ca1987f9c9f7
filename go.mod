module github.com/resilience4cata/r4c

go 1.26.0
