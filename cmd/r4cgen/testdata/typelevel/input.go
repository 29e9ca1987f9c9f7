package typelevel

import "context"

//go:generate r4cgen -type Inventory

// Inventory has type-level directives; Reserve overrides maxLimit, Release uses a shared name
// and a named configuration, Count a lone value.
//
//r4c:adaptivelimit maxLimit=50 window=250ms
//r4c:timeout 1s
type Inventory interface {
	Lookup(ctx context.Context, sku string) (int, error)

	//r4c:adaptivelimit maxLimit=10
	Reserve(ctx context.Context, sku string, n int) error

	//r4c:adaptivelimit name=inventory-shared config=backend
	Release(ctx context.Context, sku string, n int) error

	//r4c:bulkhead 5
	Count(ctx context.Context) (int, error)
}
