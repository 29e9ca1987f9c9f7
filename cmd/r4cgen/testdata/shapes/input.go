package shapes

import (
	"context"
	"io"
	"time"
)

//go:generate r4cgen -type Store

// Box is a generic type used as a parameter.
type Box[T any] struct{ V T }

// Store has one method per shape.
type Store interface {
	//r4c:adaptivelimit
	Put(ctx context.Context, key string, value []byte) error

	//r4c:adaptivelimit initialLimit=5
	Ping() error

	//r4c:adaptivelimit
	GetMany(ctx context.Context, keys ...string) (map[string][]byte, error)

	//r4c:retry maxAttempts=2 wait=10ms
	Stat(ctx context.Context, key string) (size int64, modified time.Time, err error)

	//r4c:adaptivelimit
	Generic(ctx context.Context, b Box[int], f func(int) error, r io.Reader) (Box[string], error)

	// Close has no directive: it is forwarded untouched (no error result is fine then).
	Close()
}
