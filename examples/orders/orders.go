// Package orders is the OrderClient of docs/codegen.md: a shared adaptive limit with a timeout inside,
// an AIMD limit with its own drop errors, and an async method.
package orders

import (
	"context"

	"github.com/resilience4cata/r4c"
)

//go:generate go run github.com/resilience4cata/r4c/cmd/r4cgen -type OrderClient

// OrderClient places and cancels orders.
type OrderClient interface {
	//r4c:adaptivelimit name=orders initialLimit=10 maxLimit=100 window=500ms
	//r4c:timeout 2s
	Place(ctx context.Context, order string) (string, error)

	//r4c:adaptivelimit name=orders-aimd algorithm=aimd initialLimit=10 dropOn=net.ErrClosed,r4c.ErrCallTimeout
	Cancel(ctx context.Context, order string) (string, error)

	//r4c:adaptivelimit name=orders-async initialLimit=2
	PlaceAsync(ctx context.Context, order string) *r4c.Future[string]
}
