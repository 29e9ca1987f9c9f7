package heapq

import (
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
