package r4cgrpc_test

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/test/bufconn"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4cgrpc"
)

// serveHealth serves gRPC's health service with the server options on an in-memory listener
// (a real service listens on a port: net.Listen("tcp", addr)) and returns a client of it made
// with the dial options, and a function that stops both.
func serveHealth(serverOpts []grpc.ServerOption, dialOpts ...grpc.DialOption) (healthpb.HealthClient, func()) {
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(serverOpts...)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	served := make(chan struct{})
	go func() { srv.Serve(lis); close(served) }()
	conn, _ := grpc.NewClient("passthrough:///example", append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}, dialOpts...)...)
	return healthpb.NewHealthClient(conn), func() { conn.Close(); srv.Stop(); <-served }
}

// A server limits the calls it serves at once with an adaptive limit per method.
func ExampleUnaryServerInterceptor() {
	reg, _ := r4c.NewRegistry()
	limit, err := r4cgrpc.UnaryServerInterceptor(reg, "health", r4cgrpc.WithInstanceID(r4cgrpc.MethodID))
	if err != nil {
		fmt.Println(err)
		return
	}
	client, stop := serveHealth([]grpc.ServerOption{grpc.ChainUnaryInterceptor(limit)})
	defer stop()

	resp, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	l, _ := reg.AdaptiveLimit("/grpc.health.v1.Health/Check")
	fmt.Println(resp.GetStatus(), err, l.Limit())
	// Output: SERVING <nil> 20
}

// A server bounds the streams open at once (a fixed limit: streams are not latency samples).
func ExampleStreamServerInterceptor() {
	reg, _ := r4c.NewRegistry()
	streams, err := r4cgrpc.StreamServerInterceptor(reg, "watchers",
		r4cgrpc.WithPolicies(r4c.AdaptiveLimitConfig{InitialLimit: 100, MinLimit: 100, MaxLimit: 100}))
	if err != nil {
		fmt.Println(err)
		return
	}
	client, stop := serveHealth([]grpc.ServerOption{grpc.ChainStreamInterceptor(streams)})
	defer stop()

	ctx, cancel := context.WithCancel(context.Background())
	w, _ := client.Watch(ctx, &healthpb.HealthCheckRequest{})
	first, _ := w.Recv()
	l, _ := reg.AdaptiveLimit("watchers")
	fmt.Println(first.GetStatus(), l.InFlight())
	cancel()
	// Output: SERVING 1
}

// A client retries Unavailable answers (waiting at least the server's pushback) and limits its
// calls in flight.
func ExampleUnaryClientInterceptor() {
	reg, _ := r4c.NewRegistry()
	policies, err := r4cgrpc.UnaryClientInterceptor(reg, "health-client",
		r4cgrpc.WithPolicies(r4c.AdaptiveLimitConfig{MaxLimit: 50}, r4c.RetryConfig{MaxAttempts: 3}))
	if err != nil {
		fmt.Println(err)
		return
	}
	client, stop := serveHealth(nil, grpc.WithChainUnaryInterceptor(policies))
	defer stop()

	resp, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	retry, _ := reg.Retry("health-client")
	fmt.Println(resp.GetStatus(), err, retry.Snapshot().SuccessfulWithoutRetry)
	// Output: SERVING <nil> 1
}

// A client's streams hold a slot until they end.
func ExampleStreamClientInterceptor() {
	reg, _ := r4c.NewRegistry()
	streams, err := r4cgrpc.StreamClientInterceptor(reg, "watch-client")
	if err != nil {
		fmt.Println(err)
		return
	}
	client, stop := serveHealth(nil, grpc.WithChainStreamInterceptor(streams))
	defer stop()

	ctx, cancel := context.WithCancel(context.Background())
	w, _ := client.Watch(ctx, &healthpb.HealthCheckRequest{})
	first, _ := w.Recv()
	l, _ := reg.AdaptiveLimit("watch-client")
	fmt.Println(first.GetStatus(), l.InFlight())
	cancel()
	_, err = w.Recv() // the stream ends: its slot is free
	fmt.Println(l.InFlight(), err != nil)
	// Output:
	// SERVING 1
	// 0 true
}
