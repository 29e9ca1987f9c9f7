package fallback

import (
	"context"

	"github.com/resilience4cata/r4c"
)

//go:generate r4cgen -type Prices

// Prices falls back to cached prices.
type Prices interface {
	//r4c:adaptivelimit
	//r4c:fallback method=Cached
	Price(ctx context.Context, sku string) (int, error)

	//r4c:adaptivelimit
	//r4c:fallback method=CachedQuote on=r4c.ErrLimitExceeded,context.DeadlineExceeded
	Quote(ctx context.Context, skus ...string) (int, error)

	Cached(ctx context.Context, sku string, err error) (int, error)
	CachedQuote(ctx context.Context, skus []string, err error) (int, error)
}

var _ = r4c.ErrLimitExceeded
