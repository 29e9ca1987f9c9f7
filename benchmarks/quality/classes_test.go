package quality

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
	"github.com/resilience4cata/r4c/r4ctest"
)

// The class scenario: an interactive class and a batch class share one adaptive limit (Knee,
// MaxLimit 200, the defaults otherwise) in front of a dependency that serves 40 calls at once
// by processor sharing (base latency 50ms; n > 40 calls each take base x n/40), behind a timeout
// of 150ms inside the limit. Interactive calls arrive at 40% of the dependency's capacity, batch
// calls at 3x it: together they overload it. Each setup runs 60 simulated seconds on the manual
// clock, deterministic; the first 10 seconds (the limit finding the knee) are not counted.
//
// Without partitions the batch flood takes the slots as they free and interactive calls are
// rejected in proportion; with a guaranteed share (or with MaxWait and a higher priority) the
// interactive class keeps its goodput.

// classSetup is one way to configure the shared limit.
type classSetup struct {
	name        string
	cfg         r4c.AdaptiveLimitConfig
	interactive func(context.Context) context.Context // how an interactive call is tagged
	batch       func(context.Context) context.Context
}

// classResult is what one setup gave each class.
type classResult struct {
	offered, ok, rejected, timedOut [2]int
}

func (r classResult) goodput(c int) float64 { return float64(r.ok[c]) / float64(r.offered[c]) }

const (
	classCapacity = 40
	classBase     = 50 * time.Millisecond
	classTimeout  = 150 * time.Millisecond
	classSeconds  = 60
	classWarmup   = 10
)

// classCall is one call in the dependency.
type classCall struct {
	class    int
	start    int64
	work     float64 // base-latency units of work left
	end      int64   // when it completes at the current load
	timedOut int64   // when its timeout fires
	f        *r4c.Future[string]
}

// runClasses simulates a setup.
func runClasses(t testing.TB, s classSetup) classResult {
	clock := r4ctest.NewManualClock()
	reg, err := r4c.NewRegistry(r4c.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	p, err := r4c.NewPipeline[string](reg, "shared", s.cfg)
	if err != nil {
		t.Fatal(err)
	}
	var res classResult
	errTimeout := fmt.Errorf("dependency: %w", r4c.ErrCallTimeout)
	// The dependency: processor sharing among the calls in it. Each call's remaining work is
	// served at a rate of min(1, capacity/n) units per base latency.
	var calls []*classCall
	now := func() int64 { return clock.Nanotime() }
	last := int64(0)
	serve := func(t int64) { // advance the work of every call to time t
		if n := len(calls); n > 0 {
			rate := min(1, float64(classCapacity)/float64(n)) / float64(classBase)
			for _, c := range calls {
				c.work -= float64(t-last) * rate
			}
		}
		last = t
	}
	nextEvent := func() (int64, *classCall, bool) { // the next completion or timeout
		var best int64 = -1
		var who *classCall
		timeout := false
		if n := len(calls); n > 0 {
			rate := min(1, float64(classCapacity)/float64(n)) / float64(classBase)
			for _, c := range calls {
				end := last + int64(max(c.work, 0)/rate)
				if best < 0 || end < best {
					best, who, timeout = end, c, false
				}
				if c.timedOut < best {
					best, who, timeout = c.timedOut, c, true
				}
			}
		}
		return best, who, timeout
	}
	remove := func(c *classCall) {
		for i, x := range calls {
			if x == c {
				calls = append(calls[:i], calls[i+1:]...)
				return
			}
		}
	}
	counted := func(t int64) bool { return t >= int64(classWarmup)*int64(time.Second) }
	call := func(class int) func(context.Context) *r4c.Future[string] {
		return func(context.Context) *r4c.Future[string] {
			serve(now())
			c := &classCall{class: class, start: now(), work: 1, timedOut: now() + int64(classTimeout), f: r4c.NewFuture[string]()}
			calls = append(calls, c)
			return c.f
		}
	}
	interactiveCall, batchCall := call(0), call(1)
	intervals := [2]int64{
		int64(time.Second) / int64(0.4*classCapacity*float64(time.Second/classBase)),
		int64(time.Second) / int64(3*classCapacity*float64(time.Second/classBase)),
	}
	next := [2]int64{0, intervals[1] / 2}
	end := int64(classSeconds) * int64(time.Second)
	ctx := context.Background()
	var waited []pending
	for {
		arrival := min(next[0], next[1])
		at, who, timeout := nextEvent()
		if who != nil && at <= arrival {
			clock.Advance(time.Duration(at - now()))
			serve(at)
			remove(who)
			if counted(who.start) {
				if timeout {
					res.timedOut[who.class]++
				} else {
					res.ok[who.class]++
				}
			}
			if timeout {
				who.f.Complete("", errTimeout)
			} else {
				who.f.Complete("ok", nil)
			}
			continue
		}
		if arrival >= end {
			break
		}
		clock.Advance(time.Duration(arrival - now()))
		class := 0
		if next[1] < next[0] {
			class = 1
		}
		next[class] += intervals[class]
		tag, fn := s.interactive, interactiveCall
		if class == 1 {
			tag, fn = s.batch, batchCall
		}
		start := now()
		f := p.ExecuteAsync(tag(ctx), fn)
		if counted(start) {
			res.offered[class]++
		}
		select {
		case <-f.Done():
			if _, err := f.Get(ctx); errors.Is(err, r4c.ErrLimitExceeded) && counted(start) {
				res.rejected[class]++
			}
		default:
			if counted(start) {
				waited = append(waited, pending{f, class})
			}
		}
	}
	for _, w := range waited { // calls that waited and were rejected at the end of their wait
		select {
		case <-w.f.Done():
			if _, err := w.f.Get(ctx); errors.Is(err, r4c.ErrLimitExceeded) {
				res.rejected[w.class]++
			}
		default:
		}
	}
	return res
}

// pending is a call that did not end at once: admitted, or waiting for a slot.
type pending struct {
	f     *r4c.Future[string]
	class int
}

func classSetups() []classSetup {
	plain := func(ctx context.Context) context.Context { return ctx }
	knee := r4c.AdaptiveLimitConfig{Algorithm: r4c.Knee, MaxLimit: 200}
	partitioned := knee
	partitioned.Partitions = map[string]float64{"interactive": 0.5}
	waiting := knee
	waiting.MaxWait = 100 * time.Millisecond
	return []classSetup{
		{"one pool", knee, plain, plain},
		{"partitions (interactive 0.5)", partitioned,
			func(ctx context.Context) context.Context { return r4c.WithPartition(ctx, "interactive") }, plain},
		{"priorities (MaxWait 100ms, interactive high, batch low)", waiting,
			func(ctx context.Context) context.Context { return r4c.WithPriority(ctx, r4c.PriorityHigh) },
			func(ctx context.Context) context.Context { return r4c.WithPriority(ctx, r4c.PriorityLow) }},
	}
}

// TestClassesKeepInteractiveGoodput: behind one pool the batch flood costs interactive calls a
// large share of their goodput; a guaranteed share, or priorities with a wait, keep it above 99%.
func TestClassesKeepInteractiveGoodput(t *testing.T) {
	for _, s := range classSetups() {
		r := runClasses(t, s)
		t.Logf("%-55s interactive goodput %5.1f%% (%d offered, %d rejected, %d timed out); batch %5.1f%%",
			s.name, 100*r.goodput(0), r.offered[0], r.rejected[0], r.timedOut[0], 100*r.goodput(1))
		if s.name == "one pool" {
			if r.goodput(0) > 0.9 {
				t.Errorf("%s: interactive goodput %.1f%%: the batch flood does not hurt it, the scenario shows nothing", s.name, 100*r.goodput(0))
			}
			continue
		}
		if r.goodput(0) < 0.99 {
			t.Errorf("%s: interactive goodput %.2f%%, want at least 99%%", s.name, 100*r.goodput(0))
		}
	}
}
