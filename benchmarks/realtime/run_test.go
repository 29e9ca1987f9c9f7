package realtime

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestFinishMeasuresAgainstTheMostThePhaseAllows(t *testing.T) {
	sc := Scenario{Service: 50 * time.Millisecond, Phases: []Phase{{Duration: 10 * time.Second, Workers: 4}}}
	// Overloaded: 4 workers serve 800 calls of 50ms in 10s, fewer than the 1000 that arrived.
	p := PhaseResult{Knee: 4, Offered: 1000, Rejected: 180, Succeeded: 780, TimedOut: 40,
		latencies: 780 * float64(60*time.Millisecond), services: 820 * float64(50*time.Millisecond), settled: 10 * 5, settledN: 10}
	finish(&p, sc, 0)
	if p.Best != 800 || p.Goodput != 780.0/800 {
		t.Errorf("overloaded: best %v goodput %v, want 800 and %v", p.Best, p.Goodput, 780.0/800)
	}
	if p.Settled != 1.25 || p.MeanLatency != 60*time.Millisecond || p.MeanService != 50*time.Millisecond {
		t.Errorf("settled %v, latency %v, service %v", p.Settled, p.MeanLatency, p.MeanService)
	}
	// Light: the calls that arrived are the most.
	q := PhaseResult{Knee: 4, Offered: 300, Succeeded: 297}
	finish(&q, sc, 0)
	if q.Best != 300 || q.Goodput != 0.99 {
		t.Errorf("light: best %v goodput %v, want 300 and 0.99", q.Best, q.Goodput)
	}
}

// A short run on the wall clock: every offered call is rejected, served or timed out, in every
// phase and for every contender, whatever the timing. (What the run measures is in the page it
// writes; no figure of it is asserted here.)
func TestRunAccountsForEveryCall(t *testing.T) {
	sc := Scenario{Name: "short", Doc: "a short run", Service: 5 * time.Millisecond, Timeout: 15 * time.Millisecond,
		Phases: []Phase{{Duration: 200 * time.Millisecond, Workers: 4, Rate: 1600}, {Duration: 200 * time.Millisecond, Workers: 2, Rate: 1600}}}
	contenders := Contenders()
	results := Run(context.Background(), sc, contenders, 7)
	if len(results) != len(contenders) {
		t.Fatalf("%d results for %d contenders", len(results), len(contenders))
	}
	for i, r := range results {
		if r.Contender != contenders[i].Name || len(r.Phases) != 2 {
			t.Fatalf("result %d: %s with %d phases", i, r.Contender, len(r.Phases))
		}
		for j, p := range r.Phases {
			if p.Offered == 0 || p.Offered != p.Rejected+p.Succeeded+p.TimedOut {
				t.Errorf("%s phase %d: offered %d, rejected %d, served %d, timed out %d", r.Contender, j+1, p.Offered, p.Rejected, p.Succeeded, p.TimedOut)
			}
			if p.Knee != sc.Phases[j].Workers {
				t.Errorf("%s phase %d: knee %d", r.Contender, j+1, p.Knee)
			}
		}
	}
	var b bytes.Buffer
	Page(&b, "go run ./realtime/cmd/realtime", []Scenario{sc}, contenders, [][]Result{results})
	for _, c := range contenders {
		if !strings.Contains(b.String(), "| 2 | 2 | "+c.Name+" |") {
			t.Errorf("the page has no row of %s's second phase:\n%s", c.Name, b.String())
		}
	}
}

func TestRunStopsWhenContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sc := Scenario{Service: 5 * time.Millisecond, Timeout: 15 * time.Millisecond,
		Phases: []Phase{{Duration: time.Hour, Workers: 4, Rate: 1000}}}
	begun := time.Now()
	results := Run(ctx, sc, Contenders()[:1], 1)
	if d := time.Since(begun); d > time.Minute {
		t.Fatalf("a run whose context was done took %v", d)
	}
	if p := results[0].Phases[0]; p.Offered != 0 {
		t.Fatalf("a run whose context was done offered %d calls", p.Offered)
	}
}

func TestFixedReferenceHoldsItsMultipleOfTheKnee(t *testing.T) {
	l := &fixedLimiter{factor: 1.2}
	l.setKnee(8) // 9.6: a limit of 10
	var permits []Permit
	for range 10 {
		p, ok := l.Acquire()
		if !ok {
			t.Fatalf("rejected at %d in flight under a limit of %d", len(permits), l.Limit())
		}
		permits = append(permits, p)
	}
	if _, ok := l.Acquire(); ok {
		t.Fatal("admitted an eleventh call under a limit of 10")
	}
	permits[0].Success()
	permits[1].Timeout()
	l.setKnee(1) // a limit of 1: the 8 still in flight finish, nothing new starts
	if _, ok := l.Acquire(); ok || l.Limit() != 1 {
		t.Fatalf("limit %d: admitted a call with 8 in flight", l.Limit())
	}
}
