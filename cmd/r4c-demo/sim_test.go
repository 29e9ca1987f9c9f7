package main

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
)

const shortPattern = "40:30s,10:30s,60:30s"

var (
	shortOnce    sync.Once
	shortResults map[r4c.LimitAlgorithm]*Result
	shortErr     error
)

// shortRuns simulates the short pattern once per algorithm (all of them), shared by the tests.
func shortRuns(t *testing.T) map[r4c.LimitAlgorithm]*Result {
	t.Helper()
	shortOnce.Do(func() {
		p, err := ParsePattern(shortPattern)
		if err != nil {
			shortErr = err
			return
		}
		o := options{pattern: p, seconds: 90, seed: 1, algorithms: allAlgorithms()}
		rs, err := simulate(o)
		if err != nil {
			shortErr = err
			return
		}
		shortResults = map[r4c.LimitAlgorithm]*Result{}
		for _, r := range rs {
			shortResults[r.Config.Limit.Algorithm] = r
		}
	})
	if shortErr != nil {
		t.Fatal(shortErr)
	}
	return shortResults
}

// followsCapacity checks that the limit of res, a run of the short pattern, went down with the
// capacity and back up, and that the limit, not the load, was the bottleneck. It returns the
// phases.
func followsCapacity(t *testing.T, res *Result) []PhaseStats {
	t.Helper()
	ph := res.Phases()
	if len(ph) != 3 {
		t.Fatalf("%d phases, want 3", len(ph))
	}
	high1, low, high2 := ph[0].SettledLimit, ph[1].SettledLimit, ph[2].SettledLimit
	t.Logf("settled limits: capacity 40: %.1f, capacity 10: %.1f, capacity 60: %.1f", high1, low, high2)
	if low > 0.6*high1 {
		t.Errorf("the limit did not follow the capacity down: %.1f at capacity 10, %.1f at capacity 40 before", low, high1)
	}
	if low > 0.5*high2 {
		t.Errorf("the limit did not follow the capacity back up: %.1f at capacity 10, %.1f at capacity 60 after", low, high2)
	}
	if high2 <= high1 {
		t.Errorf("settled limit at capacity 60 (%.1f) is not above the one at capacity 40 (%.1f)", high2, high1)
	}
	// Every limit of the last phase's second half is above every one of the low phase's.
	lowMax, lastMin := 0, res.Config.Limit.MaxLimit
	for _, s := range res.Seconds[45:60] {
		lowMax = max(lowMax, s.Limit)
	}
	for _, s := range res.Seconds[75:] {
		lastMin = min(lastMin, s.Limit)
	}
	if lastMin <= lowMax {
		t.Errorf("the limit did not recover: lowest %d in the last phase, highest %d in the low phase", lastMin, lowMax)
	}
	// The limit, not the load, is the bottleneck.
	for _, p := range ph {
		if p.RejectedRate < 100 {
			t.Errorf("phase %d-%ds: %.0f rejections/s, want the limit to reject the excess load", p.Start, p.End, p.RejectedRate)
		}
	}
	return ph
}

func TestLimitFollowsCapacity(t *testing.T) {
	runs := shortRuns(t)
	for _, alg := range []r4c.LimitAlgorithm{r4c.Gradient2, r4c.AIMD} {
		t.Run(alg.String(), func(t *testing.T) {
			res := runs[alg]
			// The limit keeps the dependency busy.
			for _, p := range followsCapacity(t, res) {
				best := float64(p.Capacity) * float64(time.Second) / float64(res.Config.Base)
				if p.Throughput < 0.85*best {
					t.Errorf("phase %d-%ds: %.0f calls/s, want at least 85%% of %.0f", p.Start, p.End, p.Throughput, best)
				}
			}
		})
	}
}

// TestNewAlgorithmsFollowCapacity checks Vegas and Knee, with the library's default windows (1s,
// so 30 windows a phase). Vegas comes down after a drop by log10(limit), 1, a window: in this
// pattern it is still coming down at the end of the low phase (44 to about 15 in 30 windows, the
// calls timing out meanwhile), so for it only the direction is checked, not the throughput. Knee
// seeks the concurrency at which the dependency delivers its full throughput: the capacity.
func TestNewAlgorithmsFollowCapacity(t *testing.T) {
	runs := shortRuns(t)
	for _, alg := range []r4c.LimitAlgorithm{r4c.Vegas, r4c.Knee} {
		t.Run(alg.String(), func(t *testing.T) {
			res := runs[alg]
			ph := followsCapacity(t, res)
			// Well below: by the end of the low phase, under half the limit at capacity 40 and
			// under a third of the one at capacity 60.
			if end := float64(res.Seconds[59].Limit); 2*end >= ph[0].SettledLimit || 3*end >= ph[2].SettledLimit {
				t.Errorf("limit %.0f at the end of the low phase, settled %.1f at capacity 40 and %.1f at 60: want it well below both",
					end, ph[0].SettledLimit, ph[2].SettledLimit)
			}
			if alg != r4c.Knee {
				return
			}
			for _, p := range ph {
				ratio := p.SettledLimit / float64(p.Capacity)
				t.Logf("phase %d-%ds: capacity %d, settled limit %.1f (%.2fx), mean %.1f, %.0f calls/s, %.1f timeouts/s",
					p.Start, p.End, p.Capacity, p.SettledLimit, ratio, p.MeanLimit, p.Throughput, p.TimedOutRate)
				if ratio < 0.8 || ratio > 1.5 {
					t.Errorf("phase %d-%ds: settled limit %.1f at capacity %d (%.2fx), want 0.8x to 1.5x the capacity",
						p.Start, p.End, p.SettledLimit, p.Capacity, ratio)
				}
			}
		})
	}
}

func TestAlgorithmSignals(t *testing.T) {
	runs := shortRuns(t)
	count := func(r *Result) (rejected, timedOut int) {
		for _, s := range r.Seconds {
			rejected += s.Rejected
			timedOut += s.TimedOut
		}
		return
	}
	g2 := runs[r4c.Gradient2]
	if len(runs) != len(allAlgorithms()) {
		t.Fatalf("%d runs, want one per algorithm (%d)", len(runs), len(allAlgorithms()))
	}
	for _, r := range runs {
		rej, _ := count(r)
		if int64(rej) != r.Final.Rejected {
			t.Errorf("%s: %d rejections counted, the snapshot says %d", r.Config.Limit.Algorithm, rej, r.Final.Rejected)
		}
		if r.Final.InFlight != r.Seconds[len(r.Seconds)-1].InFlight {
			t.Errorf("%s: snapshot in flight %d, last second %d", r.Config.Limit.Algorithm, r.Final.InFlight, r.Seconds[len(r.Seconds)-1].InFlight)
		}
	}
	// Every algorithm has the same timeout inside the limit: the drop to capacity 10 (latency 4
	// times the base, above the timeout of 3 times) produces a burst of timeouts.
	for _, alg := range allAlgorithms() {
		r := runs[alg]
		if r.Config.Timeout != demoTimeout {
			t.Errorf("%s: timeout %v, want %v", alg, r.Config.Timeout, demoTimeout)
		}
		burst := 0
		for _, s := range r.Seconds[30:33] {
			burst += s.TimedOut
		}
		if burst < 50 {
			t.Errorf("%s: %d timeouts in the 3 seconds after the capacity fell, want a burst", alg, burst)
		}
	}
	// Gradient2's latency rises when the capacity falls (up to the timeout), and it is what
	// brings the limit down with the timeouts.
	if l40, l10 := g2.Seconds[29].AvgLatency, g2.Seconds[30].AvgLatency; 2*l10 < 3*l40 {
		t.Errorf("gradient2: latency %v just after the capacity fell, %v before; want it to jump by half at least", l10, l40)
	}
}

func TestRunDeterministic(t *testing.T) {
	p, _ := ParsePattern("30:5s,5:5s")
	for _, alg := range allAlgorithms() {
		cfg := DemoConfig(alg, p, 12, 42)
		a, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Seconds, b.Seconds) || !reflect.DeepEqual(a.Final, b.Final) {
			t.Errorf("%s: two runs of the same configuration differ", alg)
		}
		cfg.Seed = 43
		c, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if reflect.DeepEqual(a.Seconds, c.Seconds) {
			t.Errorf("%s: runs with different seeds are identical: the jitter is not seeded", alg)
		}
	}
}

// TestDemoConfig checks each algorithm's settings: Gradient2 and AIMD with windows of 100ms (and
// Gradient2's long-term average scaled to match), the others with the library's defaults; the
// same timeout for all.
func TestDemoConfig(t *testing.T) {
	p, _ := ParsePattern("10:1s")
	for _, alg := range allAlgorithms() {
		c := DemoConfig(alg, p, 1, 1)
		res, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		got := res.Resolved
		wantWindow, wantTimeout := time.Second, demoTimeout
		switch alg {
		case r4c.Gradient2:
			wantWindow = 100 * time.Millisecond
			if got.LongWindow != 6000 {
				t.Errorf("%s: long window %d, want 6000", alg, got.LongWindow)
			}
		case r4c.AIMD:
			wantWindow = 100 * time.Millisecond
		}
		if got.Algorithm != alg || got.Window != wantWindow || got.InitialLimit != 20 || got.MaxLimit != 200 || got.MinLimit != 1 {
			t.Errorf("%s: resolved %s, window %v, limits %d..%d from %d; want %s, window %v, limits 1..200 from 20",
				alg, got.Algorithm, got.Window, got.MinLimit, got.MaxLimit, got.InitialLimit, alg, wantWindow)
		}
		if c.Timeout != wantTimeout {
			t.Errorf("%s: timeout %v, want %v", alg, c.Timeout, wantTimeout)
		}
	}
}

func TestParsePattern(t *testing.T) {
	good := []struct {
		in   string
		want Pattern
	}{
		{"40:60s,10:60s,60:60s", Pattern{{40, 60 * time.Second}, {10, 60 * time.Second}, {60, 60 * time.Second}}},
		{" 5:1m , 100:90 ", Pattern{{5, time.Minute}, {100, 90 * time.Second}}},
		{"1:1s", Pattern{{1, time.Second}}},
		{"7:1m30s", Pattern{{7, 90 * time.Second}}},
	}
	for _, c := range good {
		got, err := ParsePattern(c.in)
		if err != nil {
			t.Errorf("ParsePattern(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParsePattern(%q) = %v, want %v", c.in, got, c.want)
		}
		if again, err := ParsePattern(got.String()); err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("ParsePattern(%q) = %v, %v: String does not round-trip", got.String(), again, err)
		}
	}
	bad := []string{
		"", " ", "40", "40:", ":60s", "x:60s", "0:60s", "-5:60s", "101:60s", "40:0s", "40:-1s",
		"40:1.5s", "40:500ms", "40:abc", "40:60s,", "40:60s,,10:5s", "40:2h", "40:40m,10:40m",
		"99999999999999999999:1s", "40:99999999999", "40:60s:10",
	}
	for _, in := range bad {
		if p, err := ParsePattern(in); err == nil {
			t.Errorf("ParsePattern(%q) = %v, want an error", in, p)
		}
	}
}

func TestSpans(t *testing.T) {
	p := Pattern{{40, 10 * time.Second}, {10, 5 * time.Second}}
	cases := []struct {
		seconds int
		want    []Span
	}{
		{15, []Span{{40, 0, 10}, {10, 10, 15}}},
		{25, []Span{{40, 0, 10}, {10, 10, 25}}}, // the last phase repeats
		{12, []Span{{40, 0, 10}, {10, 10, 12}}},
		{4, []Span{{40, 0, 4}}},
	}
	for _, c := range cases {
		if got := p.Spans(c.seconds); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Spans(%d) = %v, want %v", c.seconds, got, c.want)
		}
	}
}

func TestEventsOrder(t *testing.T) {
	var h events
	for i, at := range []int64{5, 3, 9, 3, 1, 7, 5} {
		h.push(event{at: at, seq: uint64(i)})
	}
	var prev event
	for i := 0; len(h) > 0; i++ {
		e := h.pop()
		if i > 0 && (e.at < prev.at || e.at == prev.at && e.seq < prev.seq) {
			t.Fatalf("popped %+v after %+v", e, prev)
		}
		prev = e
	}
}
