package heapq

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"testing"
)

type item struct {
	v, pos int
}

func newHeap() *Heap[item] {
	return New(func(a, b *item) bool { return a.v < b.v }, func(x *item) *int { return &x.pos })
}

// Elements come out in order, whatever leaves from the middle, and keep their positions.
func TestHeapOrderAndRemove(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	h := newHeap()
	var in []*item
	for range 200 {
		x := &item{v: r.IntN(1000), pos: -1}
		h.Push(x)
		in = append(in, x)
	}
	removed := map[*item]bool{}
	for i := 0; i < len(in); i += 3 {
		if !h.Remove(in[i]) {
			t.Fatalf("element %d not removed", i)
		}
		if in[i].pos != -1 {
			t.Fatalf("removed element keeps position %d", in[i].pos)
		}
		removed[in[i]] = true
	}
	if h.Remove(in[0]) {
		t.Fatal("an element removed twice")
	}
	var want []int
	for _, x := range in {
		if !removed[x] {
			want = append(want, x.v)
		}
	}
	slices.Sort(want)
	if h.Len() != len(want) || h.Min().v != want[0] {
		t.Fatalf("len %d min %d, want %d and %d", h.Len(), h.Min().v, len(want), want[0])
	}
	var got []int
	for h.Len() > 0 {
		got = append(got, h.Pop().v)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("popped %v, want %v", got, want)
	}
	if h.Pop() != nil || h.Min() != nil {
		t.Fatal("an empty heap returns an element")
	}
}

// ref is container/heap over the same elements: the order Heap promises to keep.
type ref []*item

func (q ref) Len() int           { return len(q) }
func (q ref) Less(i, j int) bool { return q[i].v < q[j].v }
func (q ref) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *ref) Push(x any)        { *q = append(*q, x.(*item)) }
func (q *ref) Pop() any {
	x := (*q)[len(*q)-1]
	*q = (*q)[:len(*q)-1]
	return x
}

// Equal elements come out in the same order as from container/heap, through any mix of pushes,
// pops and removals from the middle (the simulator's results depend on it), and every element
// knows its place.
func TestHeapPlacesAsContainerHeap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	h := newHeap()
	var q ref
	var in []*item // in h; twin[x] is its copy in q
	twin := map[*item]*item{}
	for step := range 20000 {
		switch op := r.IntN(10); {
		case op < 5 || h.Len() == 0:
			x := &item{v: r.IntN(20), pos: -1} // few values: many ties
			y := &item{v: x.v}
			twin[x] = y
			h.Push(x)
			heap.Push(&q, y)
			in = append(in, x)
		case op < 8:
			x, y := h.Pop(), heap.Pop(&q).(*item)
			if twin[x] != y {
				t.Fatalf("step %d: popped a different element (%d) than container/heap (%d)", step, x.v, y.v)
			}
			in = slices.DeleteFunc(in, func(e *item) bool { return e == x })
		default:
			k := r.IntN(len(in))
			x := in[k]
			i := slices.Index(q, twin[x])
			if x.pos != i {
				t.Fatalf("step %d: element at %d in Heap, %d in container/heap", step, x.pos, i)
			}
			h.Remove(x)
			heap.Remove(&q, i)
			in = slices.Delete(in, k, k+1)
		}
		for i, x := range h.items {
			if x.pos != i || twin[x] != q[i] {
				t.Fatalf("step %d: position %d differs from container/heap's", step, i)
			}
		}
	}
}
