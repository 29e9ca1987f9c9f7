package r4c

import (
	"container/list"
	"context"
	"time"
)

// Priority orders the calls that wait for a slot of an adaptive limit with a MaxWait: waiting
// calls are admitted highest priority first, and a call that finds the wait queue full takes
// the place of a waiting call of lower priority. Without MaxWait no call waits, and priorities
// change nothing. Give a call its priority with WithPriority; the zero value is PriorityNormal.
type Priority int8

// The priorities, lowest first.
const (
	PriorityLow      Priority = -1 // batch, prefetch: the first to give way
	PriorityNormal   Priority = 0  // the default
	PriorityHigh     Priority = 1  // user-facing
	PriorityCritical Priority = 2  // the calls that must get through
)

type priorityKey struct{}

// WithPriority returns a context that gives the calls made with it priority p when they wait for
// a slot of an adaptive limit (AdaptiveLimitConfig.MaxWait). A value outside the four levels
// counts as the nearest one.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// priorityLevels is the number of priority queues.
const priorityLevels = int(PriorityCritical-PriorityLow) + 1

// queueOf returns the index of the wait queue of ctx's priority: 0 for the lowest.
func queueOf(ctx context.Context) int {
	p, _ := ctx.Value(priorityKey{}).(Priority)
	return int(min(max(p, PriorityLow), PriorityCritical) - PriorityLow)
}

// limitWaiter is a call waiting for a slot of an adaptive limit. A synchronous waiter waits on
// ready; an asynchronous one is told by notify, in the goroutine that decided. Either way ok
// says whether it got a slot (at start) or was displaced by a call of higher priority.
type limitWaiter struct {
	ready  chan struct{}
	notify func(w *limitWaiter)
	queue  int
	part   int32 // the call's partition + 1, 0 for none
	elem   *list.Element
	queued bool  // in a queue (guarded by the limit's wmu)
	ok     bool  // set before ready is closed or notify called
	start  int64 // the latency sample's start: when the slot was taken
}

// done tells the waiter what was decided.
func (w *limitWaiter) done(ok bool, start int64) {
	w.ok, w.start = ok, start
	if w.notify != nil {
		w.notify(w)
	} else {
		close(w.ready)
	}
}

// enqueueResult is what enqueue did with a waiter.
type enqueueResult uint8

const (
	enqueued enqueueResult = iota // it waits
	admitted                      // it has a slot already (a slot was free after all)
	refused                       // the queue is full of calls of its priority or higher
)

// waitBudget returns how long a call with ctx may wait: MaxWait, or less if ctx's deadline
// comes first (0: not at all).
func (l *AdaptiveLimitHandle) waitBudget(ctx context.Context) time.Duration {
	d := l.maxWait
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl))
	}
	return max(d, 0)
}

// takeSlotFor takes a slot for a call of partition part (0: none; partition i is i+1) if one is free: under the
// partitions' rules when the limit has partitions.
func (l *AdaptiveLimitHandle) takeSlotFor(part int32) bool {
	if l.parts != nil {
		return l.takePartitioned(part)
	}
	return l.takeSlot()
}

// takeSlot takes a slot if one is free under the current limit.
func (l *AdaptiveLimitHandle) takeSlot() bool {
	for {
		n, limit := l.inFlight.Load(), l.limit.Load()
		if n >= limit {
			return false
		}
		if l.inFlight.CompareAndSwap(n, n+1) {
			if n+1 > l.maxInFlight.Load() {
				l.raiseMaxInFlight(n + 1)
			}
			return true
		}
	}
}

// tells is what enqueue decided for other waiters: the caller tells them (done) once it holds no
// lock, since telling an asynchronous waiter runs its call's code, which takes that call's lock.
type tells struct {
	granted   []*limitWaiter
	displaced *limitWaiter
}

// tell tells the waiters what was decided. The displaced one counts as a rejection.
func (t tells) tell(l *AdaptiveLimitHandle) {
	if t.displaced != nil {
		l.rejected.Add(1)
		l.partitionRejected(t.displaced.part)
		t.displaced.done(false, 0)
	}
	for _, g := range t.granted {
		g.done(true, g.start)
	}
}

// enqueue queues w, unless a slot is free now (w then has it) or the queue is full (w is
// refused, unless it can take the place of a waiting call of lower priority, which fails). What
// it decided for other waiters is returned, for the caller to tell once it holds no lock.
func (l *AdaptiveLimitHandle) enqueue(w *limitWaiter) (enqueueResult, tells) {
	var t tells
	l.wmu.Lock()
	if l.waiting.Load() == 0 && l.takeSlotFor(w.part) {
		l.wmu.Unlock()
		w.start = l.nanotime()
		return admitted, t
	}
	bound := int64(l.maxWaiting)
	if bound <= 0 {
		bound = max(l.limit.Load(), 1)
	}
	if l.waiting.Load() >= bound {
		// Make room by displacing the newest waiter of the lowest priority below w's.
		for q := 0; q < w.queue && t.displaced == nil; q++ {
			if back := l.queues[q].Back(); back != nil {
				t.displaced = l.queues[q].Remove(back).(*limitWaiter)
				t.displaced.queued = false
				l.waiting.Add(-1)
			}
		}
		if t.displaced == nil {
			l.wmu.Unlock()
			return refused, t
		}
	}
	w.elem, w.queued = l.queues[w.queue].PushBack(w), true
	l.waiting.Add(1)
	// A slot freed between the caller's first try and now was freed before waiting counted w:
	// its releaser did not look at the queue. Admit for it.
	granted := l.admitLocked(nil)
	l.wmu.Unlock()
	got := false
	for _, g := range granted {
		if g == w {
			got = true
			continue
		}
		t.granted = append(t.granted, g)
	}
	if got {
		return admitted, t
	}
	return enqueued, t
}

// admitLocked hands free slots to the waiters, highest priority first, and returns them, to be
// told (done) once wmu is released. wmu must be held.
func (l *AdaptiveLimitHandle) admitLocked(granted []*limitWaiter) []*limitWaiter {
	for q := priorityLevels - 1; q >= 0; q-- {
		for e := l.queues[q].Front(); e != nil; {
			if l.inFlight.Load() >= l.limit.Load() {
				return granted
			}
			w := e.Value.(*limitWaiter)
			next := e.Next()
			if l.takeSlotFor(w.part) {
				l.queues[q].Remove(e)
				w.queued = false
				w.start = l.nanotime()
				l.waiting.Add(-1)
				granted = append(granted, w)
			} else if l.parts == nil {
				return granted
			}
			// With partitions, a waiter whose partition cannot take the free slot lets one of
			// another partition behind it have it.
			e = next
		}
	}
	return granted
}

// admitWaiters hands the slots free now to waiting calls: after a release when calls wait, and
// when a window raises the limit.
func (l *AdaptiveLimitHandle) admitWaiters() {
	var buf [4]*limitWaiter
	l.wmu.Lock()
	granted := l.admitLocked(buf[:0])
	l.wmu.Unlock()
	for _, w := range granted {
		w.done(true, w.start)
	}
}

// dequeue takes w out of its queue. It reports false when w was told first (it has a slot, or
// was displaced): what it was told stands.
func (l *AdaptiveLimitHandle) dequeue(w *limitWaiter) bool {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if !w.queued {
		return false
	}
	l.queues[w.queue].Remove(w.elem)
	w.queued = false
	l.waiting.Add(-1)
	return true
}

// freeSlot returns a slot. When calls wait, it hands the slot on: a call that does not wait
// pays one load of a counter that stays zero.
func (l *AdaptiveLimitHandle) freeSlot(part int32) {
	if part > 0 {
		l.parts[part-1].inFlight.Add(-1)
	}
	l.inFlight.Add(-1)
	if l.maxWait > 0 && l.waiting.Load() > 0 {
		l.admitWaiters()
	}
}

// tryTake takes a slot for a call with ctx if one is free and no call waits for one. The slot's
// partition is ctx's either way.
func (l *AdaptiveLimitHandle) tryTake(ctx context.Context) (limitSlot, bool) {
	var s limitSlot
	if l.parts != nil {
		s.part = l.partitionOf(ctx)
	}
	if l.waiting.Load() == 0 && l.takeSlotFor(s.part) {
		s.start = l.nanotime()
		return s, true
	}
	return s, false
}

// acquireWait takes a slot for a call with ctx, in its partition, waiting up to MaxWait (never
// past ctx's deadline) when none is free, or returns the rejection or ctx's error.
func (l *AdaptiveLimitHandle) acquireWait(ctx context.Context) (limitSlot, error) {
	if !l.enabled {
		return limitSlot{}, nil
	}
	slot, ok := l.tryTake(ctx)
	if ok {
		return slot, nil
	}
	start, err := l.wait(ctx, slot.part)
	return limitSlot{start: start, part: slot.part}, err
}

// wait queues a call of partition part for a slot, and waits for it up to MaxWait (never past
// ctx's deadline), or returns the rejection or ctx's error.
func (l *AdaptiveLimitHandle) wait(ctx context.Context, part int32) (int64, error) {
	d := l.waitBudget(ctx)
	if d <= 0 {
		l.partitionRejected(part)
		return 0, l.reject()
	}
	w := &limitWaiter{ready: make(chan struct{}), queue: queueOf(ctx), part: part}
	result, others := l.enqueue(w)
	others.tell(l)
	switch result {
	case admitted:
		return w.start, nil
	case refused:
		l.partitionRejected(part)
		return 0, l.reject()
	}
	timer := l.clock.NewTimer(d)
	defer timer.Stop()
	timedOut := false
	select {
	case <-w.ready:
	case <-timer.C():
		timedOut = true
	case <-ctx.Done():
	}
	if l.dequeue(w) {
		if timedOut {
			l.waitTimeouts.Add(1)
			l.partitionRejected(part)
			return 0, l.reject()
		}
		return 0, ctx.Err()
	}
	<-w.ready // told first: what it was told stands
	if !w.ok {
		return 0, l.rejection // displaced (counted as a rejection by enqueue)
	}
	return w.start, nil
}

// AcquireContext takes a slot as Acquire does, in ctx's partition (WithPartition) when the limit
// has partitions; and when every slot is taken and the limit has a MaxWait, it waits for one in
// the queue of ctx's priority (WithPriority), up to MaxWait and never past ctx's deadline; cancelling ctx ends the wait at once. The wait is not part of the
// call's latency sample. Without MaxWait it is Acquire.
func (l *AdaptiveLimitHandle) AcquireContext(ctx context.Context) (AdaptiveLimitPermit, error) {
	if !l.queued {
		return l.Acquire() // directly: a limit without MaxWait or partitions pays no extra call
	}
	slot, err := l.acquireIn(ctx)
	if err != nil {
		return AdaptiveLimitPermit{}, err
	}
	return AdaptiveLimitPermit{l: l, slot: slot}, nil
}
