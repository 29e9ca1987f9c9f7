package r4cgrpc_test

import (
	"context"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// TestMain fails the package if a test leaves a goroutine running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// service is the test's gRPC service: the health service's two methods, whose behaviour the
// request's service name chooses.
//   - Check "ok": SERVING; "slow": waits for release or its context; "unavailable": the first
//     fails answers are Unavailable (with a pushback trailer if pushback is set), then SERVING;
//     "notfound": NotFound; "panic": panics.
//   - Watch: sends SERVING, then waits for its context or release.
type service struct {
	healthpb.UnimplementedHealthServer
	calls    atomic.Int64
	entered  chan string
	release  chan struct{}
	fails    atomic.Int64
	pushback string
}

func newService() *service {
	return &service{entered: make(chan string, 100), release: make(chan struct{})}
}

func (s *service) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	s.calls.Add(1)
	s.entered <- req.Service
	switch req.Service {
	case "slow":
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	case "unavailable":
		if s.fails.Add(-1) >= 0 {
			if s.pushback != "" {
				grpc.SetTrailer(ctx, metadata.Pairs("grpc-retry-pushback-ms", s.pushback))
			}
			return nil, status.Error(codes.Unavailable, "busy")
		}
	case "notfound":
		return nil, status.Error(codes.NotFound, "no such service")
	case "panic":
		panic("boom")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (s *service) Watch(req *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	s.calls.Add(1)
	s.entered <- "watch"
	if err := stream.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}); err != nil {
		return err
	}
	select {
	case <-stream.Context().Done():
		return stream.Context().Err()
	case <-s.release:
		return nil
	}
}

// env is a server and a client on an in-memory connection.
type env struct {
	svc    *service
	client healthpb.HealthClient
}

// start serves svc with the server options and connects a client with the dial options; both
// stop when the test ends.
func start(t *testing.T, svc *service, serverOpts []grpc.ServerOption, dialOpts ...grpc.DialOption) *env {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(serverOpts...)
	healthpb.RegisterHealthServer(srv, svc)
	var wg sync.WaitGroup
	wg.Go(func() { srv.Serve(lis) })
	conn, err := grpc.NewClient("passthrough:///bufnet",
		append([]grpc.DialOption{
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
			grpc.WithTransportCredentials(insecure.NewCredentials()),
		}, dialOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-svc.release:
		default:
			close(svc.release)
		}
		conn.Close()
		srv.Stop()
		wg.Wait()
	})
	return &env{svc: svc, client: healthpb.NewHealthClient(conn)}
}

func newRegistry(t *testing.T) (*r4c.Registry, *r4ctest.ManualClock) {
	t.Helper()
	clock := r4ctest.NewManualClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock), r4c.WithDefaults(r4c.AdaptiveLimitConfig{MinWindowSamples: 1}))
	if err != nil {
		t.Fatal(err)
	}
	return reg, clock
}

func fixedLimit(n int) r4c.AdaptiveLimitConfig {
	return r4c.AdaptiveLimitConfig{InitialLimit: n, MinLimit: n, MaxLimit: n}
}

func limitOf(t *testing.T, reg *r4c.Registry, id string) *r4c.AdaptiveLimitHandle {
	t.Helper()
	h, err := reg.AdaptiveLimit(id)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func check(ctx context.Context, e *env, service string, opts ...grpc.CallOption) error {
	_, err := e.client.Check(ctx, &healthpb.HealthCheckRequest{Service: service}, opts...)
	return err
}

func waitPending(t *testing.T, clock *r4ctest.ManualClock, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := clock.WaitPending(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// eventually waits (yielding, on no clock) until cond holds, for the server's view of a call
// the client has just ended.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		runtime.Gosched()
	}
}
