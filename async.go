package r4c

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// The asynchronous driver: ExecuteAsync (and Go, through it) applies the pipeline's policies in
// the canonical order as the events of the call happen, on the goroutine that causes each one,
// with no goroutine of its own:
//
//   - The caller's goroutine, before ExecuteAsync returns, runs the first attempt up to its
//     function: breaker permission, rate permit, limit slot, timeout timer, bulkhead slot, fn.
//     A rejection returns an already completed future.
//   - The goroutine that completes an attempt's inner future settles the attempt, innermost
//     first (bulkhead, timeout, limit sample, breaker outcome), then the call: the hedge, the
//     retry (its next attempt is a timer on the registry's clock), the fallback, and last the
//     returned future.
//   - Waits are timers on the registry's clock (timeout deadline, retry wait, hedge delay, rate
//     permit), or a place in a bulkhead's queue that the call freeing a slot hands over; with a
//     manual clock, Advance runs whatever fell due, synchronously.
//   - Cancelling the returned future, or the caller's context, ends every running attempt: its
//     context and inner future are cancelled, its slots freed without a sample, its timers
//     stopped, once, whatever races with it.
//
// Each policy's decisions (admit, settle, what counts, how long to wait) are the same methods
// the synchronous stages call; this file only sequences them.

// asyncCall is one call of ExecuteAsync: the returned future, and the state of the policies
// that span attempts (retry, hedge). It is allocated once per call, with its first attempt.
type asyncCall[T any] struct {
	out   Future[T] // the returned future
	p     *Pipeline[T]
	ctx   context.Context // the caller's
	fn    func(context.Context) *Future[T]
	goFn  func(context.Context) (T, error) // Go's function, when fn is nil
	watch func() bool                      // unregisters from ctx; nil when ctx cannot be cancelled

	mu       sync.Mutex
	ended    bool // the call's result is decided (or it was cancelled)
	retrying bool // retryNow is starting attempts (see retryNow)
	again    int  // a group whose next attempt retryNow must start, 0 if none
	attempts int  // retry: attempts (each a group of hedged attempts) started
	group    int  // the current group, from 1: timers of an earlier group do nothing
	launched int  // hedge: attempts launched in the current group
	live     []*asyncAttempt[T]
	liveBuf  [2]*asyncAttempt[T]
	delay    Timer // the hedge's delay; nil when no launch is pending
	backoff  Timer // the retry's wait; nil when none is pending
	first    asyncAttempt[T]
}

// asyncAttempt is one attempt of a call: the policies inside the hedge, for one run of fn.
type asyncAttempt[T any] struct {
	c     *asyncCall[T]
	ctx   callCtx // fn's context
	n     int     // its number in its group (hedge), from 1
	group int

	// Guarded by c.mu.
	ended   bool
	adm     admission
	wait    Timer          // the wait for a rate permit, or for a bulkhead slot (queued)
	cycle   int64          // the period of the awaited rate permit
	timer   Timer          // the timeout's, on a clock other than the system's
	dl      *deadlineTimer // the timeout's, on the system clock (pooled)
	expired bool           // the timeout fired
	queued  *bulkheadWaiter
	limitW  *limitWaiter // waits for a slot of the adaptive limit (MaxWait)
	held    bool         // holds a bulkhead slot
	inner   *Future[T]
}

// admission is what an attempt holds of the policies that admit it before it runs.
type admission struct {
	permit  cbPermit
	slot    limitSlot // the adaptive limit's: its sample's start and the call's partition
	breaker bool      // holds the breaker's permission
	limit   bool      // holds a slot of the adaptive limit
}

// How an attempt ended.
type attemptEnd uint8

const (
	endReturned  attemptEnd = iota // its function's future completed, or a policy stopped it
	endTimedOut                    // the timeout fired
	endPanicked                    // its function panicked
	endCancelled                   // the call was cancelled: free everything, learn nothing
)

// errCallCancelled marks an attempt ended by the call's cancellation.
var errCallCancelled = errors.New("r4c: the call was cancelled")

// ExecuteAsync runs fn, which is itself asynchronous, through the pipeline. Every policy acts
// when its event happens: admission (and the first call of fn) before ExecuteAsync returns, so
// a full limit, an open breaker, a rate limiter or a bulkhead without a wait that rejects the
// call returns an already completed future (through a limit alone, without allocating); the
// end of an attempt in the goroutine that completes fn's future, so when Complete returns the
// slot is free, the sample recorded and the breaker has the outcome. A call holds its limit
// slot until fn's future completes, and its latency is measured to that completion. Retry
// waits, hedge delays, timeouts and waits for a permit or a slot are timers on the registry's
// clock: no goroutine waits.
//
// Cancelling the returned future, or ctx, cancels fn's future and context, frees every slot
// without a sample, stops every timer and completes the returned future with the cancellation;
// completing it with Complete ends the call the same way, with the holder's result. A ctx that
// is done already fails the call at once: fn is not started.
// A panic in fn while ExecuteAsync runs frees the attempt's slots and is re-raised; in a later
// attempt (a retry or a hedge, run from a timer or by the call that freed a bulkhead slot) it
// fails the call with a *PanicError. A nil future from fn fails the attempt.
func (p *Pipeline[T]) ExecuteAsync(ctx context.Context, fn func(context.Context) *Future[T]) *Future[T] {
	if ctx == nil || fn == nil {
		return failedFuture[T](p.checkCall(ctx, fn == nil))
	}
	return p.executeAsync(ctx, fn, nil)
}

// executeAsync starts an asynchronous call of fn (ExecuteAsync) or of goFn, each attempt in a
// goroutine of its own (Go).
func (p *Pipeline[T]) executeAsync(ctx context.Context, fn func(context.Context) *Future[T], goFn func(context.Context) (T, error)) *Future[T] {
	if err := ctx.Err(); err != nil {
		return failedFuture[T](err) // cancelled already: fn is not started
	}
	var adm admission
	if p.admitsFirst {
		// No policy acts on a rejection: admit before allocating anything.
		if err := p.admit(ctx, &adm); err != nil {
			if err == p.limitRejection {
				return p.limitRejected
			}
			return failedFuture[T](err)
		}
	}
	c := &asyncCall[T]{p: p, ctx: ctx, fn: fn, goFn: goFn}
	c.live = c.liveBuf[:0]
	c.out.owner = c
	c.mu.Lock() // a hedge's timer or ctx's watch may run at once
	a := c.newGroup()
	a.adm = adm
	if ctx.Done() != nil {
		c.watch = context.AfterFunc(ctx, func() { c.cancelCall(ctx.Err()) })
	}
	c.mu.Unlock()
	if p.hedge != nil {
		p.hedge.calls.Add(1)
	}
	if p.admitsFirst {
		a.afterAdmission(true)
	} else {
		a.start(true)
	}
	return &c.out
}

// admit takes the permissions of the policies that admit a call without waiting: the breaker,
// the rate limiter (without MaxWait) and the adaptive limit. On a rejection it gives back what
// it took and returns the policy's error.
func (p *Pipeline[T]) admit(ctx context.Context, adm *admission) error {
	if b := p.breaker; b != nil {
		permit, err := b.admit(ctx)
		if err != nil {
			return err
		}
		adm.permit, adm.breaker = permit, true
	}
	if r := p.rate; r != nil {
		if _, _, err := r.reserve(ctx); err != nil {
			p.settleAdmission(ctx, adm, err, false)
			return err
		}
	}
	return p.admitLimit(ctx, adm)
}

// admitLimit takes a slot of the adaptive limit, if the pipeline has one. On a rejection it
// settles what adm holds with it.
func (p *Pipeline[T]) admitLimit(ctx context.Context, adm *admission) error {
	if l := p.limit; l != nil && l.enabled {
		slot, err := l.admit(ctx)
		if err != nil {
			p.settleAdmission(ctx, adm, err, false)
			return err
		}
		adm.slot, adm.limit = slot, true
	}
	return nil
}

// settleAdmission ends what an attempt holds of the admitting policies, innermost first: with
// its outcome err (ctx is the caller's: its cancellation teaches nothing), or, when free,
// without learning anything (a cancellation, a panic).
func (p *Pipeline[T]) settleAdmission(ctx context.Context, adm *admission, err error, free bool) {
	if adm.limit {
		adm.limit = false
		if free {
			p.limit.abandon(adm.slot)
		} else {
			p.limit.settle(ctx, adm.slot, err)
		}
	}
	if adm.breaker {
		adm.breaker = false
		if free {
			p.breaker.abandon(adm.permit)
		} else {
			p.breaker.settle(ctx, adm.permit, err)
		}
	}
}

// newGroup starts a new group of attempts (a retry's attempt, hedged or not) and returns its
// first attempt, to start once c.mu is released.
func (c *asyncCall[T]) newGroup() *asyncAttempt[T] {
	c.attempts++
	c.group++
	c.launched = 1
	var a *asyncAttempt[T]
	if c.attempts == 1 {
		a = &c.first
	} else {
		a = &asyncAttempt[T]{}
	}
	a.c, a.n, a.group = c, 1, c.group
	c.live = append(c.live, a)
	if h := c.p.hedge; h != nil && h.cfg.MaxHedges > 0 {
		g := c.group
		c.delay = c.p.reg.clock.AfterFunc(h.cfg.Delay, func() { c.hedge(g) })
	}
	return a
}

// start runs the attempt from its first policy. first reports that this is the caller's
// goroutine inside ExecuteAsync (a panic of fn is re-raised there).
func (a *asyncAttempt[T]) start(first bool) {
	p := a.c.p
	if b := p.breaker; b != nil {
		permit, err := b.admit(a.c.ctx)
		if err != nil {
			a.end(zero[T](), err, endReturned)
			return
		}
		a.c.mu.Lock()
		if a.ended { // cancelled meanwhile
			a.c.mu.Unlock()
			b.abandon(permit)
			return
		}
		a.adm.permit, a.adm.breaker = permit, true
		a.c.mu.Unlock()
	}
	if r := p.rate; r != nil {
		wait, cycle, err := r.reserve(a.c.ctx)
		if err != nil {
			a.end(zero[T](), err, endReturned)
			return
		}
		if wait > 0 {
			a.c.mu.Lock()
			if a.ended {
				a.c.mu.Unlock()
				r.endWait(cycle, false)
				return
			}
			a.cycle = cycle
			a.wait = p.reg.clock.AfterFunc(wait, a.permitted)
			a.c.mu.Unlock()
			return
		}
	}
	a.limited(first)
}

// permitted continues an attempt whose rate permit's period has begun.
func (a *asyncAttempt[T]) permitted() {
	c := a.c
	c.mu.Lock()
	if a.wait == nil {
		c.mu.Unlock()
		return // the attempt ended, and gave the permit back
	}
	a.wait = nil
	c.mu.Unlock()
	c.p.rate.endWait(a.cycle, true)
	a.limited(false)
}

// limited takes the adaptive limit's slot and goes on, or, when the limit is full and has a
// MaxWait, waits in its queue (waitForLimit).
func (a *asyncAttempt[T]) limited(first bool) {
	var adm admission
	c := a.c
	if l := c.p.limit; l != nil && l.enabled && l.maxWait > 0 {
		slot, ok := l.tryTake(c.ctx)
		if !ok {
			a.waitForLimit(l, slot.part, first)
			return
		}
		adm.slot, adm.limit = slot, true
	} else if err := c.p.admitLimit(c.ctx, &adm); err != nil {
		a.end(zero[T](), err, endReturned)
		return
	}
	c.mu.Lock()
	if a.ended { // cancelled meanwhile
		c.mu.Unlock()
		c.p.settleAdmission(c.ctx, &adm, nil, true)
		return
	}
	a.adm.slot, a.adm.limit = adm.slot, adm.limit
	c.mu.Unlock()
	a.afterAdmission(first)
}

// waitForLimit queues the attempt for a slot of l, up to MaxWait (or its context's deadline):
// the call that frees a slot hands it over (limitTold), or the timer ends the wait
// (limitWaitedTooLong).
func (a *asyncAttempt[T]) waitForLimit(l *AdaptiveLimitHandle, part int32, first bool) {
	c := a.c
	d := l.waitBudget(c.ctx)
	if d <= 0 {
		l.partitionRejected(part)
		a.end(zero[T](), l.reject(), endReturned)
		return
	}
	w := &limitWaiter{notify: a.limitTold, queue: queueOf(c.ctx), part: part}
	c.mu.Lock()
	if a.ended {
		c.mu.Unlock()
		return
	}
	result, others := l.enqueue(w)
	switch result {
	case enqueued:
		a.limitW = w
		a.wait = c.p.reg.clock.AfterFunc(d, a.limitWaitedTooLong)
	case admitted: // a slot was free after all
		a.adm.slot, a.adm.limit = limitSlot{start: w.start, part: part}, true
	}
	c.mu.Unlock()
	others.tell(l) // after c.mu: another attempt of this call may be among them
	switch result {
	case refused:
		l.partitionRejected(part)
		a.end(zero[T](), l.reject(), endReturned)
	case admitted:
		a.afterAdmission(first)
	}
}

// limitTold continues an attempt that waited for a slot of the adaptive limit: it was handed
// one, or displaced by a call of higher priority.
func (a *asyncAttempt[T]) limitTold(w *limitWaiter) {
	c := a.c
	l := c.p.limit
	c.mu.Lock()
	if a.limitW == w {
		a.limitW = nil
		a.stopWaitLocked()
	}
	if a.ended {
		c.mu.Unlock()
		if w.ok {
			l.release(limitSlot{start: w.start, part: w.part}, outcomeFree) // the attempt ended while the slot came: pass it on
		}
		return
	}
	if !w.ok {
		c.mu.Unlock()
		a.end(zero[T](), l.reject(), endReturned)
		return
	}
	a.adm.slot, a.adm.limit = limitSlot{start: w.start, part: w.part}, true
	c.mu.Unlock()
	a.afterAdmission(false)
}

// limitWaitedTooLong ends an attempt whose wait for a slot of the adaptive limit reached
// MaxWait (or its context's deadline).
func (a *asyncAttempt[T]) limitWaitedTooLong() {
	c := a.c
	l := c.p.limit
	c.mu.Lock()
	w := a.limitW
	if w == nil || !l.dequeue(w) {
		c.mu.Unlock()
		return // handed a slot first, or ended
	}
	a.limitW, a.wait = nil, nil
	c.mu.Unlock()
	l.waitTimeouts.Add(1)
	l.partitionRejected(w.part)
	a.end(zero[T](), l.reject(), endReturned)
}

// afterAdmission starts the timeout, takes the bulkhead's slot and calls fn.
func (a *asyncAttempt[T]) afterAdmission(first bool) {
	c := a.c
	p := c.p
	var until int64
	if t := p.timeout; t != nil {
		until = addSat(p.reg.clock.Nanotime(), int64(t.cfg.Timeout))
	}
	a.ctx.init(c.ctx, p.reg.clock, until)
	if t := p.timeout; t != nil {
		c.mu.Lock()
		if a.ended {
			c.mu.Unlock()
			return
		}
		if p.reg.systemClock {
			a.dl = startDeadline(a, t.cfg.Timeout)
		} else {
			a.timer = p.reg.clock.AfterFunc(t.cfg.Timeout, a.expire)
		}
		c.mu.Unlock()
	}
	if b := p.bulkhead; b != nil {
		ok, err := b.tryAcquire()
		if err != nil {
			a.end(zero[T](), err, endReturned)
			return
		}
		if !ok {
			w := &bulkheadWaiter{grant: a.granted}
			c.mu.Lock()
			if a.ended {
				c.mu.Unlock()
				return
			}
			if b.enqueue(w) {
				a.held = true
				c.mu.Unlock()
			} else {
				// Wait for a slot, up to MaxWait: the call that frees one hands it over
				// (granted), or the timer ends the wait.
				a.queued = w
				a.wait = p.reg.clock.AfterFunc(b.maxWait, a.waitedTooLong)
				c.mu.Unlock()
				return
			}
		} else {
			c.mu.Lock()
			if a.ended { // cancelled or timed out meanwhile
				c.mu.Unlock()
				b.release()
				return
			}
			a.held = true
			c.mu.Unlock()
		}
	}
	a.call(first)
}

// waitedTooLong ends an attempt whose wait for a bulkhead slot reached MaxWait.
func (a *asyncAttempt[T]) waitedTooLong() {
	c := a.c
	c.mu.Lock()
	w := a.queued
	if w == nil || !c.p.bulkhead.dequeue(w) {
		c.mu.Unlock()
		return // handed a slot first, or ended
	}
	a.queued, a.wait = nil, nil
	c.mu.Unlock()
	a.end(zero[T](), c.p.bulkhead.reject(), endReturned)
}

// stopWaitLocked stops the timer of a wait that ended (a slot came): c.mu must be held.
func (a *asyncAttempt[T]) stopWaitLocked() {
	if a.wait != nil {
		a.wait.Stop()
		a.wait = nil
	}
}

// granted continues an attempt handed a bulkhead slot by the call that freed it.
func (a *asyncAttempt[T]) granted() {
	c := a.c
	c.mu.Lock()
	a.queued = nil
	a.stopWaitLocked()
	if a.ended {
		c.mu.Unlock()
		c.p.bulkhead.release() // the attempt ended while the slot came: pass it on
		return
	}
	a.held = true
	c.mu.Unlock()
	a.call(false)
}

// call runs fn and listens for its future.
func (a *asyncAttempt[T]) call(first bool) {
	c := a.c
	c.mu.Lock()
	if a.ended {
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	if c.goFn != nil {
		// Go: the goroutine is the attempt, and ends it itself when fn returns.
		go a.runGo()
		return
	}
	var inner *Future[T]
	returned := false
	defer func() {
		if returned {
			return
		}
		r := recover()
		if r == nil { // runtime.Goexit: let it go on
			a.end(zero[T](), errGoexit, endPanicked)
			return
		}
		pe := newPanicError(r)
		a.end(zero[T](), pe, endPanicked)
		if first {
			panic(r)
		}
	}()
	inner = c.fn(&a.ctx)
	returned = true
	if inner == nil {
		a.end(zero[T](), fmt.Errorf("r4c: pipeline %s: %w", quote(c.p.id), errNilFuture), endReturned)
		return
	}
	c.mu.Lock()
	if a.ended {
		// Ended while fn ran (the call was cancelled, or the timeout fired).
		c.mu.Unlock()
		inner.Cancel()
		return
	}
	a.inner = inner
	c.mu.Unlock()
	inner.listen(a)
}

// futureDone ends the attempt with its function's result.
func (a *asyncAttempt[T]) futureDone(v T, err error) { a.end(v, err, endReturned) }

// isPanic reports whether err is a panic (or a Goexit) of the function, which ends the call as
// it is: not given to the fallback.
func isPanic(err error) bool {
	var pe *PanicError
	return err == errGoexit || errors.As(err, &pe)
}

// expire ends the attempt at its timeout's deadline.
func (a *asyncAttempt[T]) expire() {
	a.c.mu.Lock()
	if !a.ended {
		a.expired = true
	}
	a.c.mu.Unlock()
	a.end(zero[T](), nil, endTimedOut)
}

// end ends the attempt, once: it frees what the attempt holds, innermost first (the bulkhead
// slot or place in its queue, the timeout's timer, the limit slot with its sample, the rate
// permit it waits for, the breaker's permission with the outcome), cancels fn's context and
// future, and tells the call.
func (a *asyncAttempt[T]) end(v T, err error, how attemptEnd) {
	c := a.c
	p := c.p
	c.mu.Lock()
	if a.ended || how == endTimedOut && !a.expired {
		c.mu.Unlock()
		return
	}
	a.ended = true
	held, queued, limitW, timer, dl, wait, inner, adm := a.held, a.queued, a.limitW, a.timer, a.dl, a.wait, a.inner, a.adm
	a.held, a.queued, a.limitW, a.timer, a.dl, a.wait, a.inner = false, nil, nil, nil, nil, nil, nil
	a.adm = admission{}
	c.mu.Unlock()

	if how == endTimedOut {
		err = p.timeout.expired()
	}
	if held {
		p.bulkhead.release()
	}
	if queued != nil {
		// Out of the queue; if a slot was handed over first, granted finds the attempt
		// ended and passes it on.
		p.bulkhead.dequeue(queued)
	}
	if timer != nil {
		timer.Stop()
	}
	if dl != nil {
		dl.stop()
	}
	if limitW != nil {
		// Out of the queue; if a slot was handed over first, limitTold finds the attempt ended
		// and passes it on.
		p.limit.dequeue(limitW)
	}
	if wait != nil && wait.Stop() && queued == nil && limitW == nil {
		p.rate.endWait(a.cycle, false) // still waiting for its rate permit: it goes back
	}
	p.settleAdmission(c.ctx, &adm, err, how == endPanicked || how == endCancelled)
	if how == endTimedOut {
		a.ctx.cancel(context.DeadlineExceeded)
	} else {
		a.ctx.cancel(context.Canceled)
	}
	if inner != nil {
		inner.Cancel() // its listener (this attempt) finds it ended
	}
	if how != endCancelled {
		c.attemptEnded(a, v, err, how)
	}
}

// attemptEnded decides what an ended attempt means for the call: the hedge's other attempts,
// the retry, the fallback, the returned future.
func (c *asyncCall[T]) attemptEnded(a *asyncAttempt[T], v T, err error, how attemptEnd) {
	p := c.p
	c.mu.Lock()
	c.forget(a)
	if c.ended || a.group != c.group {
		c.mu.Unlock()
		return
	}
	h := p.hedge
	switch {
	case how == endPanicked || err == nil:
		if err == nil && h != nil && a.n > 1 {
			h.hedgeWins.Add(1)
		}
		c.decide(v, err) // unlocks
		return
	case len(c.live) > 0:
		// Another attempt of the hedge is running and may still succeed. A rejection by an
		// inner policy stops further launches: they would be rejected too.
		if c.delay != nil && hedgeRejected(err) {
			c.delay.Stop()
			c.delay = nil
		}
		c.mu.Unlock()
		return
	}
	if cerr := c.ctx.Err(); cerr != nil {
		c.decide(zero[T](), cerr)
		return
	}
	if r := p.retry; r != nil && r.retryable(err) {
		wait, final := r.failed(c.attempts, err)
		if final != nil {
			c.decide(zero[T](), final)
			return
		}
		if c.delay != nil {
			c.delay.Stop()
			c.delay = nil
		}
		g := c.group
		if wait <= 0 {
			c.mu.Unlock()
			c.retryNow(g)
			return
		}
		c.backoff = p.reg.clock.AfterFunc(wait, func() { c.retry(g) })
		c.mu.Unlock()
		return
	}
	c.decide(v, err)
}

// forget removes a from the running attempts.
func (c *asyncCall[T]) forget(a *asyncAttempt[T]) {
	for i, x := range c.live {
		if x == a {
			last := len(c.live) - 1
			c.live[i] = c.live[last]
			c.live[last] = nil
			c.live = c.live[:last]
			return
		}
	}
}

// decide ends the call with its result: the other attempts still running are abandoned (ended
// without a sample), the fallback applies, and the returned future completes. It is called
// with c.mu held, and releases it.
func (c *asyncCall[T]) decide(v T, err error) {
	c.ended = true
	others := c.takeRunning()
	attempts := c.attempts
	c.mu.Unlock()
	if r := c.p.retry; r != nil {
		r.ended(attempts, err)
	}
	for _, o := range others {
		o.end(zero[T](), errCallCancelled, endCancelled)
	}
	if f := c.p.fallback; f != nil && err != nil && c.ctx.Err() == nil && !isPanic(err) &&
		(len(f.On) == 0 || matchesAny(err, f.On)) {
		v, err = c.fallback(f, err)
	}
	c.complete(v, err)
}

// fallback runs the fallback function; a panic in it fails the call with a *PanicError (this
// may be any goroutine: one that completed an attempt, or a timer's).
func (c *asyncCall[T]) fallback(f *FallbackConfig[T], cause error) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = zero[T](), newPanicError(r)
		}
	}()
	return f.Fn(c.ctx, cause)
}

// takeRunning stops the call's timers and takes its running attempts, for the caller to end
// once c.mu is released.
func (c *asyncCall[T]) takeRunning() []*asyncAttempt[T] {
	for _, t := range []*Timer{&c.delay, &c.backoff} {
		if *t != nil {
			(*t).Stop()
			*t = nil
		}
	}
	if len(c.live) == 0 {
		return nil
	}
	others := append([]*asyncAttempt[T](nil), c.live...)
	clear(c.live)
	c.live = c.live[:0]
	return others
}

// complete completes the returned future and stops watching the caller's context.
func (c *asyncCall[T]) complete(v T, err error) {
	c.unwatch()
	c.out.finish(v, err, false)
}

// unwatch stops watching the caller's context, which may live much longer than the call.
func (c *asyncCall[T]) unwatch() {
	c.mu.Lock()
	stop := c.watch
	c.watch = nil
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// cancelCall ends the call at once: the returned future was cancelled (err is
// context.Canceled), or the caller's context is done (its error).
func (c *asyncCall[T]) cancelCall(err error) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended = true
	running := c.takeRunning()
	attempts := c.attempts
	c.mu.Unlock()
	if r := c.p.retry; r != nil {
		r.ended(attempts, err)
	}
	for _, a := range running {
		a.end(zero[T](), errCallCancelled, endCancelled)
	}
	c.unwatch()
	c.out.finish(zero[T](), err, false) // a no-op when its holder's Cancel or Complete brought us here
}

// retryNow starts the next attempt of group at once (a retry without wait), as Execute does,
// not at the clock's next tick. An attempt that fails while it starts would otherwise recurse
// into the next one, MaxAttempts deep: the attempts are started in a loop instead, by whichever
// goroutine is in it.
func (c *asyncCall[T]) retryNow(group int) {
	c.mu.Lock()
	if c.retrying {
		c.again = group
		c.mu.Unlock()
		return
	}
	c.retrying = true
	for group != 0 {
		c.mu.Unlock()
		c.retry(group)
		c.mu.Lock()
		group, c.again = c.again, 0
	}
	c.retrying = false
	c.mu.Unlock()
}

// retry starts the next attempt once the retry's wait is over.
func (c *asyncCall[T]) retry(group int) {
	c.mu.Lock()
	if c.ended || group != c.group {
		c.mu.Unlock()
		return
	}
	c.backoff = nil
	a := c.newGroup()
	c.mu.Unlock()
	if h := c.p.hedge; h != nil {
		h.calls.Add(1)
	}
	a.start(false)
}

// hedge launches another attempt of the group once the hedge's delay is over.
func (c *asyncCall[T]) hedge(group int) {
	h := c.p.hedge
	c.mu.Lock()
	if c.ended || group != c.group || c.delay == nil || c.ctx.Err() != nil {
		c.mu.Unlock()
		return
	}
	c.delay = nil
	c.launched++
	a := &asyncAttempt[T]{c: c, n: c.launched, group: group}
	c.live = append(c.live, a)
	if c.launched <= h.cfg.MaxHedges {
		c.delay = c.p.reg.clock.AfterFunc(h.cfg.Delay, func() { c.hedge(group) })
	}
	c.mu.Unlock()
	h.launched(a.n)
	a.start(false)
}

// Go runs fn through the pipeline, each attempt in a new goroutine (the goroutine is the call
// itself: no other waits for it), and returns its future at once. It is ExecuteAsync around
// fn: admission happens before Go returns (a full limit, or a ctx that is done already, returns
// an already failed future, and fn is not started), an attempt holds its slot until fn returns and is measured to then, and
// cancelling the future, or ctx, cancels fn's context and frees the slot at once without a
// sample. A panic in fn frees the slot and fails the future with a *PanicError; so does a
// function that ends its goroutine with runtime.Goexit.
func (p *Pipeline[T]) Go(ctx context.Context, fn func(context.Context) (T, error)) *Future[T] {
	if ctx == nil || fn == nil {
		return failedFuture[T](p.checkCall(ctx, fn == nil))
	}
	return p.executeAsync(ctx, nil, fn)
}

// errGoexit fails an attempt of Go whose function called runtime.Goexit.
var errGoexit = errors.New("r4c: the function exited its goroutine without returning (runtime.Goexit)")

// runGo runs one attempt of Go in its own goroutine and ends it with fn's result, its panic or
// its exit (runtime.Goexit).
func (a *asyncAttempt[T]) runGo() {
	returned := false
	defer func() {
		if returned {
			return
		}
		if r := recover(); r != nil {
			a.end(zero[T](), newPanicError(r), endPanicked)
		} else {
			a.end(zero[T](), errGoexit, endPanicked)
		}
	}()
	v, err := a.c.goFn(&a.ctx)
	returned = true
	a.end(v, err, endReturned)
}

var errNilFuture = errors.New("the function returned a nil *Future")

// zero returns T's zero value.
func zero[T any]() (z T) { return }
