package r4cgrpc

import (
	"context"
	"fmt"
	"log"
	"time"

	"google.golang.org/grpc"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/edge"
)

// server holds what the server interceptors share.
type server struct {
	cache *edge.Cache[any]
	o     options
}

func newServer(reg *r4c.Registry, id, who string, opts []Option) (*server, error) {
	o := collect(opts)
	for _, c := range o.policies {
		if edge.Repeats(c) {
			return nil, fmt.Errorf("r4cgrpc: %s(%q): %T cannot serve a call: a handler runs once per call (use it in a client interceptor)", who, id, c)
		}
	}
	cache, err := edge.New[any](reg, id, o.policies)
	if err != nil {
		return nil, fmt.Errorf("r4cgrpc: %s(%q): %w", who, id, err)
	}
	return &server{cache: cache, o: o}, nil
}

func (s *server) pipeline(method string) (*r4c.Pipeline[any], bool, error) {
	if s.o.bypass != nil && s.o.bypass(method) {
		return nil, true, nil
	}
	id := ""
	if s.o.instanceID != nil {
		id = s.o.instanceID(method)
	}
	p, err := s.cache.Get(id)
	return p, false, err
}

// UnaryServerInterceptor returns an interceptor that serves each unary call through the
// policies of instance id (an adaptive limit by default).
//
// A call a policy rejects fails at once with codes.ResourceExhausted and a
// grpc-retry-pushback-ms trailer, without reaching the handler; one that runs past a Timeout
// fails with codes.DeadlineExceeded (the handler's context is cancelled). The handler's result
// tells the policies: OK and application errors (InvalidArgument, NotFound, Internal, ...) are
// successes, since the server answered and its latency is a sample; DeadlineExceeded,
// ResourceExhausted and Unavailable are drops; a call its client cancelled is ignored. A panic
// in the handler is a drop, and the client gets codes.Internal (the panic is recovered and
// logged: gRPC servers do not survive a handler's panic otherwise).
func UnaryServerInterceptor(reg *r4c.Registry, id string, opts ...Option) (grpc.UnaryServerInterceptor, error) {
	s, err := newServer(reg, id, "UnaryServerInterceptor", opts)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		p, bypass, err := s.pipeline(info.FullMethod)
		if bypass {
			return handler(ctx, req)
		}
		if err != nil {
			return nil, err
		}
		var resp any
		var herr error
		_, err = p.Execute(ctx, func(ctx context.Context) (_ any, outcome error) {
			defer func() {
				if v := recover(); v != nil {
					log.Printf("r4cgrpc: %s panicked (recovered): %v", info.FullMethod, v)
					herr = panicError(v)
					outcome = r4c.Dropped(herr)
				}
			}()
			resp, herr = handler(ctx, req)
			return nil, serverOutcome(herr)
		})
		if err != nil {
			if perr, pushback, ok := policyStatus(err); ok {
				if pushback > 0 {
					grpcSetTrailer(ctx, pushback)
				}
				return nil, perr
			}
		}
		return resp, herr
	}, nil
}

func grpcSetTrailer(ctx context.Context, pushback time.Duration) {
	grpc.SetTrailer(ctx, pushbackMD(pushback)) // fails only outside a server call
}

// StreamServerInterceptor returns an interceptor that serves each stream through the policies
// of instance id (an adaptive limit by default; Retry and Hedge are refused).
//
// A stream holds its slot for its whole life, so that the limit bounds the streams open at
// once; but a stream is not a latency sample: its life is as long as the client keeps it open,
// which says nothing about how long the server takes to answer, and would teach the limit that
// minutes are normal. The limit learns from unary calls; for a service of streams alone, fix the
// limit (MinLimit = MaxLimit) or use a bulkhead. A rejected stream fails at once with
// codes.ResourceExhausted and the pushback trailer; a Timeout bounds the whole stream.
func StreamServerInterceptor(reg *r4c.Registry, id string, opts ...Option) (grpc.StreamServerInterceptor, error) {
	s, err := newServer(reg, id, "StreamServerInterceptor", opts)
	if err != nil {
		return nil, err
	}
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		p, bypass, err := s.pipeline(info.FullMethod)
		if bypass {
			return handler(srv, ss)
		}
		if err != nil {
			return err
		}
		var herr error
		_, err = p.Execute(ss.Context(), func(ctx context.Context) (_ any, outcome error) {
			defer func() {
				if v := recover(); v != nil {
					log.Printf("r4cgrpc: %s panicked (recovered): %v", info.FullMethod, v)
					herr = panicError(v)
				}
			}()
			herr = handler(srv, &serverStream{ServerStream: ss, ctx: ctx})
			return nil, r4c.Ignored(errStreamEnded)
		})
		if perr, pushback, ok := policyStatus(err); ok {
			if pushback > 0 {
				ss.SetTrailer(pushbackMD(pushback))
			}
			return perr
		}
		return herr
	}, nil
}

// serverStream gives the handler the pipeline's context (a Timeout's).
type serverStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *serverStream) Context() context.Context { return s.ctx }
