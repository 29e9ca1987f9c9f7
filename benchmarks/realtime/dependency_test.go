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

// waitInFlight waits until d holds n calls.
func waitInFlight(t *testing.T, d *Dependency, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for d.InFlight() != n {
		if time.Now().After(deadline) {
			t.Fatalf("in flight %d, want %d", d.InFlight(), n)
		}
		time.Sleep(time.Millisecond) // polls a count, not a race on time: the clock is manual
	}
}

func TestDependencyServesInOrderOfArrival(t *testing.T) {
	ctx := context.Background()
	clock := r4ctest.NewManualClock()
	d := NewDependency(clock, 1)
	never := make(chan struct{})
	first := started(d, never, 50*time.Millisecond)
	if err := clock.WaitPending(ctx, 1); err != nil { // the first call works
		t.Fatal(err)
	}
	second := started(d, never, 30*time.Millisecond)
	waitInFlight(t, d, 2) // the second waits: one worker
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
	d := NewDependency(clock, 1)
	working, queued := make(chan struct{}), make(chan struct{})
	never := make(chan struct{})
	a := started(d, working, time.Second)
	if err := clock.WaitPending(ctx, 1); err != nil {
		t.Fatal(err)
	}
	b := started(d, queued, time.Second)
	waitInFlight(t, d, 2)
	close(queued) // gives up while waiting
	if <-b {
		t.Fatal("a call that gave up in the queue was served")
	}
	waitInFlight(t, d, 1)
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
	d := NewDependency(clock, 2)
	never := make(chan struct{})
	a := started(d, never, 10*time.Millisecond)
	b := started(d, never, 10*time.Millisecond)
	if err := clock.WaitPending(ctx, 2); err != nil {
		t.Fatal(err)
	}
	d.SetWorkers(1)
	c := started(d, never, 10*time.Millisecond)
	waitInFlight(t, d, 3)
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
