module github.com/resilience4cata/r4c/r4cgrpc

go 1.26.0

require (
	github.com/resilience4cata/r4c v0.0.0
	google.golang.org/grpc v1.85.0
)

require (
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/resilience4cata/r4c => ../
