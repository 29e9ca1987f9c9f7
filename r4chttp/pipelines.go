package r4chttp

import (
	"net/http"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/internal/edge"
)

// pipelines picks each request's pipeline: the instance id WithInstanceID gives it (or the
// default), each id's pipeline built on first use.
type pipelines[T any] struct {
	cache *edge.Cache[T]
	pick  func(*http.Request) string // nil: always the default id
}

func newPipelines[T any](reg *r4c.Registry, id string, cfgs []r4c.PolicyConfig, pick func(*http.Request) string) (*pipelines[T], error) {
	c, err := edge.New[T](reg, id, cfgs)
	if err != nil {
		return nil, err
	}
	return &pipelines[T]{cache: c, pick: pick}, nil
}

// forRequest returns the pipeline of r's instance id.
func (ps *pipelines[T]) forRequest(r *http.Request) (*r4c.Pipeline[T], error) {
	if ps.pick == nil {
		return ps.cache.Get("")
	}
	return ps.cache.Get(ps.pick(r))
}
