package realtime

import (
	"context"
	"testing"
	"time"

	"github.com/resilience4cata/r4c/r4ctest"
)

// started calls work on d in a goroutine and returns the channel its outcome arrives on.
func started(d *Dependency, done <-chan struct{}, work time.Duration) <-chan bool {
	out := make(chan bool, 1)
	go func() { out <- d.Call(done, work) }()
	return out
}

// watched returns a dependency of workers workers on clock whose callers that join the queue
// are announced on the channel returned (the queue's length then), so that a test knows a call
// waits before it advances the clock.
func watched(clock *r4ctest.ManualClock, workers int) (*Dependency, <-chan int) {
	d := NewDependency(clock, workers)
	q := make(chan int, 8)
	d.queued = q
	return d, q
}

// joins waits for a caller to join d's queue, and checks the queue's length then.
func joins(t *testing.T, queued <-chan int, want int) {
	t.Helper()
	if n := <-queued; n != want {
		t.Fatalf("a caller joined a queue of %d, want %d", n, want)
	}
}

func TestDependencyServesInOrderOfArrival(t *testing.T) {
	ctx := context.Background()
	clock := r4ctest.NewManualClock()
	d, queued := watched(clock, 1)
	never := make(chan struct{})
	first := started(d, never, 50*time.Millisecond)
	if err := clock.WaitPending(ctx, 1); err != nil { // the first call works
		t.Fatal(err)
	}
	second := started(d, never, 30*time.Millisecond)
	joins(t, queued, 1) // the second waits: one worker
	clock.Advance(49 * time.Millisecond)
	if clock.Pending() != 1 {
		t.Fatalf("the second call started before a worker was free: %d timers", clock.Pending())
	}
	clock.Advance(time.Millisecond)
	if !<-first {
		t.Fatal("first call: not served")
	}
	if err := clock.WaitPending(ctx, 1); err != nil { // the second call works
		t.Fatal(err)
	}
	clock.Advance(30 * time.Millisecond)
	if !<-second {
		t.Fatal("second call: not served")
	}
	if n := d.InFlight(); n != 0 {
		t.Fatalf("in flight after both: %d", n)
	}
}

func TestDependencyCallerThatGivesUpLeavesQueueAndWorker(t *testing.T) {
	ctx := context.Background()
	clock := r4ctest.NewManualClock()
	d, joined := watched(clock, 1)
	working, queued := make(chan struct{}), make(chan struct{})
	never := make(chan struct{})
	a := started(d, working, time.Second)
	if err := clock.WaitPending(ctx, 1); err != nil {
		t.Fatal(err)
	}
	b := started(d, queued, time.Second)
	joins(t, joined, 1)
	close(queued) // gives up while waiting
	if <-b {
		t.Fatal("a call that gave up in the queue was served")
	}
	if n := d.InFlight(); n != 1 {
		t.Fatalf("in flight %d after the waiting call gave up, want the working one alone", n)
	}
	close(working) // gives up while working: its worker is free at once
	if <-a {
		t.Fatal("a call that gave up while working was served")
	}
	c := started(d, never, 10*time.Millisecond)
	if err := clock.WaitPending(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(10 * time.Millisecond)
	if !<-c {
		t.Fatal("the next call did not get the freed worker")
	}
}

func TestDependencyFewerWorkersHoldNewCalls(t *testing.T) {
	ctx := context.Background()
	clock := r4ctest.NewManualClock()
	d, queued := watched(clock, 2)
	never := make(chan struct{})
	a := started(d, never, 10*time.Millisecond)
	b := started(d, never, 10*time.Millisecond)
	if err := clock.WaitPending(ctx, 2); err != nil {
		t.Fatal(err)
	}
	d.SetWorkers(1)
	c := started(d, never, 10*time.Millisecond)
	joins(t, queued, 1) // two busy, one worker: it waits
	clock.Advance(10 * time.Millisecond)
	if !<-a || !<-b {
		t.Fatal("calls working when the workers fell were not served")
	}
	if err := clock.WaitPending(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n := d.InFlight(); n != 1 {
		t.Fatalf("in flight %d after the two ended, want the third alone", n)
	}
	clock.Advance(10 * time.Millisecond)
	if !<-c {
		t.Fatal("third call: not served")
	}
}
