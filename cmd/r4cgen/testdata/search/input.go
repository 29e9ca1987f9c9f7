package search

import "context"

//go:generate r4cgen -type SearchClient

// SearchClient is the seed's example: a lone directive, every setting from the registry.
type SearchClient interface {
	//r4c:adaptivelimit
	Search(ctx context.Context, query string) (string, error)
}
