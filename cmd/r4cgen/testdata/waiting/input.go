package waiting

import "context"

//go:generate r4cgen -type Catalog

// Catalog waits for a slot and partitions its limit: the attributes of MaxWait, MaxWaiting and
// Partitions become fields of the config literal (a map for the partitions).
type Catalog interface {
	//r4c:adaptivelimit maxWait=50ms maxWaiting=20 partitions=interactive:0.6,batch:0.3
	Lookup(ctx context.Context, sku string) (string, error)

	//r4c:adaptivelimit name=catalog-bulk maxWait=2s
	//r4c:timeout 5s
	Bulk(ctx context.Context, skus []string) (int, error)
}
