package async

import (
	"context"

	"github.com/resilience4cata/r4c"
)

//go:generate r4cgen -type Orders

// Orders has async methods.
type Orders interface {
	//r4c:adaptivelimit name=orders-async initialLimit=2
	PlaceAsync(ctx context.Context, order string) *r4c.Future[string]

	//r4c:adaptivelimit
	//r4c:timeout 2s
	Later(order string) *r4c.Future[int]
}
