// Package shop is the end-to-end test's input: generated, built and tested in a temporary
// module by TestEndToEnd.
package shop

import (
	"context"

	"github.com/resilience4cata/r4c"
)

//go:generate r4cgen -type OrderClient

type OrderClient interface {
	//r4c:adaptivelimit name=orders initialLimit=10 maxLimit=100 window=500ms
	//r4c:timeout 2s
	Place(ctx context.Context, order string) (string, error)

	//r4c:adaptivelimit name=orders-aimd algorithm=aimd initialLimit=10 dropOn=net.ErrClosed,r4c.ErrCallTimeout
	Cancel(ctx context.Context, order string) (string, error)

	//r4c:adaptivelimit name=orders-async initialLimit=2
	PlaceAsync(ctx context.Context, order string) *r4c.Future[string]

	//r4c:adaptivelimit initialLimit=1 maxLimit=5
	//r4c:fallback method=CachedStatus on=r4c.ErrLimitExceeded
	Status(ctx context.Context, order string) (string, error)

	CachedStatus(ctx context.Context, order string, err error) (string, error)

	//r4c:adaptivelimit initialLimit=3
	Ping() error
}
