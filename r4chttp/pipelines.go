package r4chttp

import (
	"net/http"
	"sync"

	"github.com/resilience4cata/r4c"
)

// pipelines builds a pipeline per instance id on first use, all with the same policies.
type pipelines[T any] struct {
	reg  *r4c.Registry
	cfgs []r4c.PolicyConfig
	id   string // the default id
	def  *r4c.Pipeline[T]
	pick func(*http.Request) string // nil: always id
	mu   sync.Mutex
	byID sync.Map // instance id -> *r4c.Pipeline[T]
}

// newPipelines builds the default id's pipeline at once, so that a configuration error is the
// constructor's.
func newPipelines[T any](reg *r4c.Registry, id string, cfgs []r4c.PolicyConfig, pick func(*http.Request) string) (*pipelines[T], error) {
	p, err := r4c.NewPipeline[T](reg, id, cfgs...)
	if err != nil {
		return nil, err
	}
	return &pipelines[T]{reg: reg, cfgs: cfgs, id: id, def: p, pick: pick}, nil
}

// forRequest returns the pipeline of r's instance id.
func (ps *pipelines[T]) forRequest(r *http.Request) (*r4c.Pipeline[T], error) {
	if ps.pick == nil {
		return ps.def, nil
	}
	id := ps.pick(r)
	if id == "" || id == ps.id {
		return ps.def, nil
	}
	if p, ok := ps.byID.Load(id); ok {
		return p.(*r4c.Pipeline[T]), nil
	}
	ps.mu.Lock() // one build per id: a second would only join the first's instances
	defer ps.mu.Unlock()
	if p, ok := ps.byID.Load(id); ok {
		return p.(*r4c.Pipeline[T]), nil
	}
	p, err := r4c.NewPipeline[T](ps.reg, id, ps.cfgs...)
	if err != nil {
		return nil, err
	}
	ps.byID.Store(id, p)
	return p, nil
}
