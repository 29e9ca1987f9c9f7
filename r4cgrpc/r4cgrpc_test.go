package r4cgrpc_test

import (
	"context"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4cgrpc"
)

func serverOpts(t *testing.T, reg *r4c.Registry, opts ...r4cgrpc.Option) []grpc.ServerOption {
	t.Helper()
	u, err := r4cgrpc.UnaryServerInterceptor(reg, "srv", opts...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r4cgrpc.StreamServerInterceptor(reg, "srv", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(u), grpc.ChainStreamInterceptor(s)}
}

func clientOpts(t *testing.T, reg *r4c.Registry, opts ...r4cgrpc.Option) []grpc.DialOption {
	t.Helper()
	u, err := r4cgrpc.UnaryClientInterceptor(reg, "cli", opts...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r4cgrpc.StreamClientInterceptor(reg, "cli", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(u), grpc.WithChainStreamInterceptor(s)}
}

func TestServerAtItsLimitRejectsWithPushbackWithoutCallingTheHandler(t *testing.T) {
	reg, _ := newRegistry(t)
	e := start(t, newService(), serverOpts(t, reg, r4cgrpc.WithPolicies(fixedLimit(1))))
	slow := make(chan error, 1)
	go func() { slow <- check(context.Background(), e, "slow") }()
	<-e.svc.entered
	var trailer metadata.MD
	err := check(context.Background(), e, "ok", grpc.Trailer(&trailer))
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("%v, want ResourceExhausted", err)
	}
	if ms, err := strconv.Atoi(trailer.Get(r4cgrpc.PushbackKey)[0]); err != nil || ms < 1000 || ms > 2000 {
		t.Fatalf("pushback %v", trailer)
	}
	if n := e.svc.calls.Load(); n != 1 {
		t.Fatalf("the handler ran %d times", n)
	}
	e.svc.release <- struct{}{}
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	if s := limitOf(t, reg, "srv").Snapshot(); s.Rejected != 1 || s.InFlight != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestServerOutcomes(t *testing.T) {
	reg, clock := newRegistry(t)
	e := start(t, newService(), serverOpts(t, reg, r4cgrpc.WithPolicies(r4c.AdaptiveLimitConfig{Window: time.Hour, MinWindowSamples: 1})))
	e.svc.fails.Store(1)
	if err := check(context.Background(), e, "notfound"); status.Code(err) != codes.NotFound {
		t.Fatalf("%v", err)
	}
	if err := check(context.Background(), e, "unavailable"); status.Code(err) != codes.Unavailable {
		t.Fatalf("%v", err)
	}
	if err := check(context.Background(), e, "panic"); status.Code(err) != codes.Internal {
		t.Fatalf("a panic: %v, want Internal", err)
	}
	clock.Advance(time.Hour)
	if err := check(context.Background(), e, "ok"); err != nil { // ends the window
		t.Fatal(err)
	}
	// NotFound and the last OK are successes; Unavailable and the panic are drops.
	if s := limitOf(t, reg, "srv").Snapshot(); s.Samples != 4 || s.Drops != 2 || s.InFlight != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestServerTimeoutIsDeadlineExceeded(t *testing.T) {
	reg, clock := newRegistry(t)
	e := start(t, newService(), serverOpts(t, reg, r4cgrpc.WithPolicies(r4c.AdaptiveLimitConfig{}, r4c.TimeoutConfig{Timeout: time.Second})))
	done := make(chan error, 1)
	go func() { done <- check(context.Background(), e, "slow") }()
	<-e.svc.entered
	waitPending(t, clock, 1)
	clock.Advance(time.Second)
	err := <-done
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("%v", err)
	}
	eventually(t, "the slot is free", func() bool { return limitOf(t, reg, "srv").InFlight() == 0 })
}

func TestServerStreamHoldsItsSlotWithoutASample(t *testing.T) {
	reg, _ := newRegistry(t)
	e := start(t, newService(), serverOpts(t, reg, r4cgrpc.WithPolicies(fixedLimit(1))))
	ctx, cancel := context.WithCancel(context.Background())
	w, err := e.client.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatal(err)
	}
	w2, err := e.client.Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err == nil {
		_, err = w2.Recv()
	}
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a second stream: %v", err)
	}
	cancel()
	eventually(t, "the stream's slot is free", func() bool { return limitOf(t, reg, "srv").InFlight() == 0 })
	if s := limitOf(t, reg, "srv").Snapshot(); s.Samples != 0 || s.Windows != 0 {
		t.Fatalf("a stream was a sample: %+v", s)
	}
}

func TestClientRetriesUnavailableHonouringPushback(t *testing.T) {
	reg, clock := newRegistry(t)
	svc := newService()
	svc.fails.Store(2)
	svc.pushback = "3000"
	e := start(t, svc, nil, clientOpts(t, reg, r4cgrpc.WithPolicies(r4c.AdaptiveLimitConfig{}, r4c.RetryConfig{MaxAttempts: 3, Wait: time.Second, MaxWait: 10 * time.Second}))...)
	done := make(chan error, 1)
	go func() { done <- check(context.Background(), e, "unavailable") }()
	for i := range 2 {
		waitPending(t, clock, 1)
		clock.Advance(3*time.Second - 1) // the pushback, longer than the 1s backoff
		if n := svc.calls.Load(); n != int64(i+1) {
			t.Fatalf("attempt %d sent before the pushback's 3s", n)
		}
		clock.Advance(1)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	retry, _ := reg.Retry("cli")
	if s := retry.Snapshot(); s.SuccessfulWithRetry != 1 || s.Retries != 2 {
		t.Fatalf("%+v", s)
	}
}

func TestClientGivesUpWhenPushbackIsBeyondMaxWait(t *testing.T) {
	reg, _ := newRegistry(t)
	svc := newService()
	svc.fails.Store(1)
	svc.pushback = "60000"
	e := start(t, svc, nil, clientOpts(t, reg, r4cgrpc.WithPolicies(r4c.RetryConfig{MaxAttempts: 3, MaxWait: 10 * time.Second}))...)
	err := check(context.Background(), e, "unavailable")
	if status.Code(err) != codes.Unavailable || svc.calls.Load() != 1 {
		t.Fatalf("%v after %d calls", err, svc.calls.Load())
	}
}

func TestClientRejectionIsNotSent(t *testing.T) {
	reg, _ := newRegistry(t)
	e := start(t, newService(), nil, clientOpts(t, reg, r4cgrpc.WithPolicies(fixedLimit(1)))...)
	slow := make(chan error, 1)
	go func() { slow <- check(context.Background(), e, "slow") }()
	<-e.svc.entered
	err := check(context.Background(), e, "ok")
	if status.Code(err) != codes.ResourceExhausted || !errors.Is(err, r4c.ErrLimitExceeded) || e.svc.calls.Load() != 1 {
		t.Fatalf("%v, %d calls", err, e.svc.calls.Load())
	}
	e.svc.release <- struct{}{}
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
}

func TestClientStreamHoldsItsSlotUntilItEnds(t *testing.T) {
	reg, _ := newRegistry(t)
	e := start(t, newService(), nil, clientOpts(t, reg, r4cgrpc.WithPolicies(fixedLimit(1)))...)
	w, err := e.client.Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Watch(context.Background(), &healthpb.HealthCheckRequest{}); !errors.Is(err, r4c.ErrLimitExceeded) {
		t.Fatalf("a second stream: %v", err)
	}
	limit := limitOf(t, reg, "cli")
	if n := limit.InFlight(); n != 1 {
		t.Fatalf("%d in flight while the stream is open", n)
	}
	e.svc.release <- struct{}{} // the server ends the stream
	if _, err := w.Recv(); err != io.EOF {
		t.Fatalf("%v", err)
	}
	if s := limit.Snapshot(); s.InFlight != 0 || s.Samples != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestCancellationsFreeTheirSlots(t *testing.T) {
	reg, _ := newRegistry(t)
	e := start(t, newService(), serverOpts(t, reg), clientOpts(t, reg)...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- check(ctx, e, "slow") }()
	<-e.svc.entered
	cancel()
	if err := <-done; status.Code(err) != codes.Canceled {
		t.Fatalf("%v", err)
	}
	eventually(t, "both slots are free", func() bool {
		return limitOf(t, reg, "cli").InFlight() == 0 && limitOf(t, reg, "srv").InFlight() == 0
	})
	// A stream cancelled without being read to its end.
	ctx, cancel = context.WithCancel(context.Background())
	w, err := e.client.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	w.Recv()
	cancel()
	eventually(t, "the stream's slots are free", func() bool {
		return limitOf(t, reg, "cli").InFlight() == 0 && limitOf(t, reg, "srv").InFlight() == 0
	})
}

func TestPerMethodInstancesAndBypass(t *testing.T) {
	reg, _ := newRegistry(t)
	opts := []r4cgrpc.Option{r4cgrpc.WithInstanceID(r4cgrpc.MethodID),
		r4cgrpc.WithBypass(func(m string) bool { return m == "/grpc.health.v1.Health/Watch" })}
	e := start(t, newService(), serverOpts(t, reg, opts...))
	if err := check(context.Background(), e, "ok"); err != nil {
		t.Fatal(err)
	}
	w, err := e.client.Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	w.Recv()
	s := reg.Snapshot().AdaptiveLimits
	if len(s) != 2 || s[0].ID != "/grpc.health.v1.Health/Check" || s[1].ID != "srv" || s[1].InFlight != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestServerInterceptorsRefuseRepeats(t *testing.T) {
	reg, _ := newRegistry(t)
	if _, err := r4cgrpc.UnaryServerInterceptor(reg, "x", r4cgrpc.WithPolicies(r4c.RetryConfig{})); err == nil {
		t.Error("a retry on the server accepted")
	}
	if _, err := r4cgrpc.UnaryClientInterceptor(reg, "x", r4cgrpc.WithPolicies(r4c.AdaptiveLimitConfig{Smoothing: 2})); r4c.ErrorCode(err) != "R4C-REG-001" {
		t.Errorf("%v", err)
	}
}

func TestClientStopsOnANegativePushback(t *testing.T) {
	reg, _ := newRegistry(t)
	svc := newService()
	svc.fails.Store(1)
	svc.pushback = "-1" // the server says not to retry
	e := start(t, svc, nil, clientOpts(t, reg, r4cgrpc.WithPolicies(r4c.RetryConfig{MaxAttempts: 3, Wait: r4c.NoWait}))...)
	if err := check(context.Background(), e, "unavailable"); status.Code(err) != codes.Unavailable || svc.calls.Load() != 1 {
		t.Fatalf("%v after %d calls", err, svc.calls.Load())
	}
}
