// Package heapq is a min-heap of pointers that keep their own position in it, so that one can
// leave from the middle: the event queues of the simulator and of the manual clock.
package heapq

import "container/heap"

// Heap orders elements by less. Each element keeps its position in the field that pos returns
// (-1 when it is not in the heap). The zero Heap is not usable: make one with New.
type Heap[T any] struct {
	q queue[T]
}

// New returns an empty heap ordered by less, whose elements keep their position in *pos(x).
func New[T any](less func(a, b *T) bool, pos func(x *T) *int) *Heap[T] {
	return &Heap[T]{q: queue[T]{less: less, pos: pos}}
}

// Len returns the number of elements.
func (h *Heap[T]) Len() int { return len(h.q.items) }

// Min returns the least element, nil when the heap is empty.
func (h *Heap[T]) Min() *T {
	if len(h.q.items) == 0 {
		return nil
	}
	return h.q.items[0]
}

// Push adds x.
func (h *Heap[T]) Push(x *T) { heap.Push(&h.q, x) }

// Pop removes and returns the least element, nil when the heap is empty.
func (h *Heap[T]) Pop() *T {
	if len(h.q.items) == 0 {
		return nil
	}
	return heap.Pop(&h.q).(*T)
}

// Remove takes x out of the heap and reports whether it was in it.
func (h *Heap[T]) Remove(x *T) bool {
	i := *h.q.pos(x)
	if i < 0 || i >= len(h.q.items) || h.q.items[i] != x {
		return false
	}
	heap.Remove(&h.q, i)
	return true
}

// queue is the heap.Interface behind Heap.
type queue[T any] struct {
	items []*T
	less  func(a, b *T) bool
	pos   func(x *T) *int
}

func (q *queue[T]) Len() int           { return len(q.items) }
func (q *queue[T]) Less(i, j int) bool { return q.less(q.items[i], q.items[j]) }
func (q *queue[T]) Swap(i, j int) {
	q.items[i], q.items[j] = q.items[j], q.items[i]
	*q.pos(q.items[i]) = i
	*q.pos(q.items[j]) = j
}
func (q *queue[T]) Push(x any) {
	t := x.(*T)
	*q.pos(t) = len(q.items)
	q.items = append(q.items, t)
}
func (q *queue[T]) Pop() any {
	n := len(q.items)
	t := q.items[n-1]
	q.items[n-1] = nil
	q.items = q.items[:n-1]
	*q.pos(t) = -1
	return t
}
