// Package heapq is a min-heap of pointers that keep their own position in it, so that one can
// leave from the middle: the event queues of the simulator and of the manual clock.
package heapq

// Heap orders elements by less. Each element keeps its position in the field that pos returns
// (-1 when it is not in the heap). The zero Heap is not usable: make one with New.
//
// It makes the same comparisons and leaves elements in the same places as container/heap (so
// equal elements come out in the same order), but moves an element along its path through a
// hole rather than by swaps, and calls less and pos directly rather than through an interface:
// the simulator spends most of its time here.
type Heap[T any] struct {
	items []*T
	less  func(a, b *T) bool
	pos   func(x *T) *int
}

// New returns an empty heap ordered by less, whose elements keep their position in *pos(x).
func New[T any](less func(a, b *T) bool, pos func(x *T) *int) *Heap[T] {
	return &Heap[T]{less: less, pos: pos}
}

// Len returns the number of elements.
func (h *Heap[T]) Len() int { return len(h.items) }

// Min returns the least element, nil when the heap is empty.
func (h *Heap[T]) Min() *T {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0]
}

// Push adds x.
func (h *Heap[T]) Push(x *T) {
	h.items = append(h.items, x)
	h.up(x, len(h.items)-1)
}

// Pop removes and returns the least element, nil when the heap is empty.
func (h *Heap[T]) Pop() *T {
	if len(h.items) == 0 {
		return nil
	}
	return h.removeAt(0)
}

// Remove takes x out of the heap and reports whether it was in it.
func (h *Heap[T]) Remove(x *T) bool {
	i := *h.pos(x)
	if i < 0 || i >= len(h.items) || h.items[i] != x {
		return false
	}
	h.removeAt(i)
	return true
}

// removeAt takes out the element at i: the last element fills its place and moves down, or up
// if it cannot move down, as container/heap.Remove does.
func (h *Heap[T]) removeAt(i int) *T {
	n := len(h.items) - 1
	x := h.items[i]
	last := h.items[n]
	h.items[n] = nil
	h.items = h.items[:n]
	if i != n && !h.down(last, i) {
		h.up(last, i)
	}
	*h.pos(x) = -1
	return x
}

// up moves x, bound for position j, towards the root while it is less than its parent, and
// places it.
func (h *Heap[T]) up(x *T, j int) {
	for j > 0 {
		i := (j - 1) / 2
		p := h.items[i]
		if !h.less(x, p) {
			break
		}
		h.put(p, j)
		j = i
	}
	h.put(x, j)
}

// down moves x, bound for position i0, towards the leaves while a child is less than it,
// places it, and reports whether it moved.
func (h *Heap[T]) down(x *T, i0 int) bool {
	n := len(h.items)
	i := i0
	for {
		j := 2*i + 1
		if j >= n || j < 0 { // j < 0 after an overflow of int
			break
		}
		if j2 := j + 1; j2 < n && h.less(h.items[j2], h.items[j]) {
			j = j2
		}
		c := h.items[j]
		if !h.less(c, x) {
			break
		}
		h.put(c, i)
		i = j
	}
	h.put(x, i)
	return i > i0
}

// put places x at position i.
func (h *Heap[T]) put(x *T, i int) {
	h.items[i] = x
	*h.pos(x) = i
}
