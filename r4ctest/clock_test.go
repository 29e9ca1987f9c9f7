package r4ctest_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/resilience4cata/r4c/r4ctest"
)

func TestManualClockStartsAtEpochAndAdvances(t *testing.T) {
	c := r4ctest.NewManualClock()
	if !c.Now().Equal(r4ctest.Epoch) || c.Nanotime() != 0 {
		t.Fatalf("starts at %v / %d", c.Now(), c.Nanotime())
	}
	c.Advance(1500 * time.Millisecond)
	c.Advance(-time.Hour) // ignored
	if c.Nanotime() != int64(1500*time.Millisecond) || !c.Now().Equal(r4ctest.Epoch.Add(1500*time.Millisecond)) {
		t.Fatalf("after advancing: %v / %d", c.Now(), c.Nanotime())
	}
}

func TestTimersFireInOrderAtTheirDueTime(t *testing.T) {
	c := r4ctest.NewManualClock()
	var fired []string
	var at []time.Duration
	record := func(name string) func() {
		return func() {
			fired = append(fired, name)
			at = append(at, time.Duration(c.Nanotime()))
		}
	}
	c.AfterFunc(3*time.Second, record("c"))
	c.AfterFunc(time.Second, record("a"))
	c.AfterFunc(2*time.Second, record("b1"))
	c.AfterFunc(2*time.Second, record("b2")) // same due time: creation order
	stopped := c.AfterFunc(2*time.Second, record("stopped"))
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop should report true once")
	}
	// A timer scheduled while firing fires in the same Advance if it falls due.
	c.AfterFunc(1500*time.Millisecond, func() {
		record("chained")()
		c.AfterFunc(100*time.Millisecond, record("child"))
	})
	if c.Pending() != 5 {
		t.Fatalf("pending %d", c.Pending())
	}
	c.Advance(2 * time.Second)
	want := []string{"a", "chained", "child", "b1", "b2"}
	wantAt := []time.Duration{time.Second, 1500 * time.Millisecond, 1600 * time.Millisecond, 2 * time.Second, 2 * time.Second}
	if len(fired) != len(want) {
		t.Fatalf("fired %v, want %v", fired, want)
	}
	for i := range want {
		if fired[i] != want[i] || at[i] != wantAt[i] {
			t.Fatalf("fired %v at %v, want %v at %v", fired, at, want, wantAt)
		}
	}
	if c.Pending() != 1 {
		t.Fatalf("pending %d, want 1 (c)", c.Pending())
	}
	c.Advance(time.Second)
	if fired[len(fired)-1] != "c" || c.Pending() != 0 {
		t.Fatalf("fired %v, pending %d", fired, c.Pending())
	}
}

func TestChannelTimers(t *testing.T) {
	c := r4ctest.NewManualClock()
	tm := c.NewTimer(time.Second)
	select {
	case <-tm.C():
		t.Fatal("fired early")
	default:
	}
	c.Advance(999 * time.Millisecond)
	select {
	case <-tm.C():
		t.Fatal("fired early")
	default:
	}
	c.Advance(time.Millisecond)
	if got := <-tm.C(); !got.Equal(r4ctest.Epoch.Add(time.Second)) {
		t.Fatalf("fired with %v", got)
	}
	if tm.Stop() {
		t.Fatal("Stop of a fired timer returned true")
	}
	if tm.Reset(time.Second) {
		t.Fatal("Reset of a fired timer reported it active")
	}
	if !tm.Reset(2 * time.Second) {
		t.Fatal("Reset of an active timer reported it inactive")
	}
	c.Advance(time.Second)
	if c.Pending() != 1 {
		t.Fatal("Reset did not move the timer")
	}
	c.Advance(time.Second)
	<-tm.C()
	now := c.NewTimer(0)
	<-now.C() // due at once
	if c.AfterFunc(0, func() {}); c.Pending() != 1 {
		t.Fatal("an AfterFunc due at once should wait for the next Advance")
	}
	c.Advance(0)
	if c.Pending() != 0 {
		t.Fatal("Advance(0) did not fire a due timer")
	}
}

func TestConcurrentUse(t *testing.T) {
	c := r4ctest.NewManualClock()
	var wg sync.WaitGroup
	var mu sync.Mutex
	count := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				c.AfterFunc(time.Duration(j)*time.Millisecond, func() { mu.Lock(); count++; mu.Unlock() })
				c.Advance(time.Millisecond)
				_ = c.Now()
			}
		}()
	}
	wg.Wait()
	c.Advance(time.Hour)
	if count != 8*200 || c.Pending() != 0 {
		t.Fatalf("fired %d of %d, pending %d", count, 8*200, c.Pending())
	}
	if c.Nanotime() != int64(8*200*time.Millisecond+time.Hour) {
		t.Fatalf("time %v", time.Duration(c.Nanotime()))
	}
}

func TestWaitPending(t *testing.T) {
	c := r4ctest.NewManualClock()
	done := make(chan error, 1)
	go func() { done <- c.WaitPending(context.Background(), 2) }()
	c.AfterFunc(time.Second, func() {})
	c.NewTimer(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.WaitPending(ctx, 3); err == nil {
		t.Fatal("WaitPending returned nil with a cancelled context and too few timers")
	}
}

// The longest timer is due at the end of time: a short Advance does not fire it (the due time
// does not wrap), and Advances that add up past the end of time do not wrap either.
func TestTheLongestTimerIsDueAtTheEndOfTime(t *testing.T) {
	c := r4ctest.NewManualClock()
	fired := 0
	c.AfterFunc(time.Duration(math.MaxInt64), func() { fired++ })
	c.Advance(time.Millisecond)
	if fired != 0 {
		t.Fatal("a math.MaxInt64 timer fired on a 1ms Advance")
	}
	c.Advance(time.Duration(math.MaxInt64))
	c.Advance(time.Duration(math.MaxInt64))
	if fired != 1 || c.Nanotime() != math.MaxInt64 {
		t.Fatalf("fired %d times, clock at %d; want once, at the end of time", fired, c.Nanotime())
	}
}
