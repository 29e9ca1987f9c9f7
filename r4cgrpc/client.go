package r4cgrpc

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/edge"
)

// client holds what the client interceptors share.
type client struct {
	cache *edge.Cache[struct{}]
	o     options
}

func newClient(reg *r4c.Registry, id, who string, opts []Option, stream bool) (*client, error) {
	o := collect(opts)
	if stream {
		o.policies = edge.WithoutRepeats(o.policies)
	}
	cache, err := edge.New[struct{}](reg, id, o.policies)
	if err != nil {
		return nil, fmt.Errorf("r4cgrpc: %s(%q): %w", who, id, err)
	}
	return &client{cache: cache, o: o}, nil
}

func (c *client) pipeline(method string) (*r4c.Pipeline[struct{}], bool, error) {
	if c.o.bypass != nil && c.o.bypass(method) {
		return nil, true, nil
	}
	id := ""
	if c.o.instanceID != nil {
		id = c.o.instanceID(method)
	}
	p, err := c.cache.Get(id)
	return p, false, err
}

// UnaryClientInterceptor returns an interceptor that sends each unary call through the
// policies of instance id (an adaptive limit by default).
//
// A call a policy rejects is not sent: it fails with codes.ResourceExhausted, and errors.Is
// finds the policy's error (r4c.ErrLimitExceeded, ...). The server's answer tells the policies:
// Unavailable, ResourceExhausted and DeadlineExceeded are drops for the limit, failures for a
// breaker and retried by a retry, which waits at least the server's grpc-retry-pushback-ms
// (within its MaxWait; a negative pushback stops it); OK and application errors are successes;
// a call the caller cancelled is ignored. A Retry resends the request message; leave gRPC's own
// retry policy off for the methods an r4c Retry covers, or the two multiply.
func UnaryClientInterceptor(reg *r4c.Registry, id string, opts ...Option) (grpc.UnaryClientInterceptor, error) {
	c, err := newClient(reg, id, "UnaryClientInterceptor", opts, false)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
		p, bypass, err := c.pipeline(method)
		if bypass {
			return invoker(ctx, method, req, reply, cc, callOpts...)
		}
		if err != nil {
			return err
		}
		var last error
		var mu sync.Mutex // attempts of a hedge run at once
		_, err = p.Execute(ctx, func(ctx context.Context) (struct{}, error) {
			var trailer metadata.MD
			ierr := invoker(ctx, method, req, reply, cc, append(callOpts, grpc.Trailer(&trailer))...)
			mu.Lock()
			last = ierr
			mu.Unlock()
			outcome := clientOutcome(ctx, ierr)
			if outcome != nil {
				if d, ok := pushback(trailer); ok {
					outcome = &pushbackError{error: outcome, wait: d}
				}
			}
			return struct{}{}, outcome
		})
		if err == nil {
			mu.Lock()
			defer mu.Unlock()
			return last // nil, or an application error the policies counted as a success
		}
		if perr, _, ok := policyStatus(err); ok {
			return perr
		}
		// The server's error, through the policies' marks and a retry's *r4c.RetryExhaustedError:
		// status.Code and status.FromError see its code through them.
		return err
	}, nil
}

// pushbackError is a failed attempt whose server said when to try again.
type pushbackError struct {
	error
	wait time.Duration
}

func (e *pushbackError) Unwrap() error { return e.error }

// RetryAfter is the server's pushback: a Retry waits at least that long. A negative pushback
// (the server says not to retry) is -1, which stops a Retry.
func (e *pushbackError) RetryAfter() time.Duration { return e.wait }

// pushback reads the grpc-retry-pushback-ms trailer.
func pushback(md metadata.MD) (time.Duration, bool) {
	v := md.Get(PushbackKey)
	if len(v) != 1 {
		return 0, false
	}
	ms, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil {
		return 0, false
	}
	if ms < 0 {
		return -1, true // the server says not to retry
	}
	return time.Duration(min(ms, int64(24*time.Hour/time.Millisecond))) * time.Millisecond, true
}

// StreamClientInterceptor returns an interceptor that opens each stream through the policies
// of instance id (an adaptive limit by default; Retry and Hedge are left out: a stream cannot
// be replayed).
//
// The stream holds its slot until it ends: RecvMsg returns an error (io.EOF at its normal end),
// or the stream's context is done. As on the server, a stream is not a latency sample (its life
// says nothing about the server's latency); the limit bounds the streams open at once. A
// stream a policy rejects is not opened: it fails with codes.ResourceExhausted, and errors.Is
// finds the policy's error. Read every stream to its end, or cancel its context: a stream left
// open keeps its slot.
func StreamClientInterceptor(reg *r4c.Registry, id string, opts ...Option) (grpc.StreamClientInterceptor, error) {
	c, err := newClient(reg, id, "StreamClientInterceptor", opts, true)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, callOpts ...grpc.CallOption) (grpc.ClientStream, error) {
		p, bypass, err := c.pipeline(method)
		if bypass {
			return streamer(ctx, desc, cc, method, callOpts...)
		}
		if err != nil {
			return nil, err
		}
		opened := make(chan grpc.ClientStream, 1)
		var openErr error
		f := p.ExecuteAsync(ctx, func(ctx context.Context) *r4c.Future[struct{}] {
			done := r4c.NewFuture[struct{}]()
			cs, err := streamer(ctx, desc, cc, method, callOpts...)
			if err != nil {
				openErr = err
				done.Complete(struct{}{}, clientOutcome(ctx, err))
				return done
			}
			s := &clientStream{ClientStream: cs, done: done}
			context.AfterFunc(ctx, func() { s.end() }) // a Timeout's, or the caller's, cancellation
			opened <- s
			return done
		})
		select {
		case s := <-opened:
			return s, nil
		case <-f.Done(): // rejected, or the stream could not be opened
		}
		select {
		case s := <-opened: // opened, then ended by its context at once
			return s, nil
		default:
		}
		_, err = f.Get(ctx)
		if perr, _, ok := policyStatus(err); ok {
			return nil, perr
		}
		if openErr != nil {
			return nil, openErr
		}
		return nil, err
	}, nil
}

// clientStream ends its call when it ends.
type clientStream struct {
	grpc.ClientStream
	done *r4c.Future[struct{}]
	once sync.Once
}

func (s *clientStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil {
		s.end()
	}
	return err
}

func (s *clientStream) end() {
	s.once.Do(func() { s.done.Complete(struct{}{}, r4c.Ignored(errStreamEnded)) })
}
