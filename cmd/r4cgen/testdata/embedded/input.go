package embedded

import (
	"context"
	"io"
)

//go:generate r4cgen -type ReadStore

// Reader is embedded.
type Reader interface {
	//r4c:adaptivelimit name=reads
	Read(ctx context.Context, key string) ([]byte, error)
}

// ReadStore embeds Reader and io.Closer: their methods are wrapped (with their own directives)
// or forwarded.
type ReadStore interface {
	Reader
	io.Closer

	//r4c:timeout 500ms
	List(ctx context.Context, prefix string) ([]string, error)
}
