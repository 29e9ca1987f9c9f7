package r4c_test

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
)

// TestConformance replays every trace produced by Netflix's Java implementation (see
// testdata/conformance/README.md) and requires the integer limit, and for Gradient2 the double
// estimate and long-term latency, to match bit for bit after every window.
func TestConformance(t *testing.T) {
	files, err := filepath.Glob("testdata/conformance/*.csv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance traces found: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".csv")
		t.Run(name, func(t *testing.T) {
			cfg := r4c.AdaptiveLimitConfig{Algorithm: r4c.Gradient2}
			if strings.HasPrefix(name, "aimd") {
				cfg.Algorithm = r4c.AIMD
			}
			alg, err := r4c.NewAdaptiveAlgorithm(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rows := readTrace(t, file)
			if len(rows) < 300 {
				t.Fatalf("only %d rows", len(rows))
			}
			for _, row := range rows {
				got := alg.Update(r4c.WindowSummary{AvgLatency: time.Duration(row.rtt), MaxInFlight: row.inflight, Dropped: row.drop})
				if got != row.limit || alg.Limit() != row.limit {
					t.Fatalf("window %d: limit %d (Limit() %d), want %d", row.window, got, alg.Limit(), row.limit)
				}
				if g, ok := alg.(*r4c.Gradient2Algorithm); ok {
					if math.Float64bits(g.Estimate()) != math.Float64bits(row.estimate) {
						t.Fatalf("window %d: estimate %v, want %v", row.window, g.Estimate(), row.estimate)
					}
					if math.Float64bits(g.LongLatency()) != math.Float64bits(row.longRTT) {
						t.Fatalf("window %d: long rtt %v, want %v", row.window, g.LongLatency(), row.longRTT)
					}
				} else if cfg.Algorithm == r4c.Gradient2 {
					t.Fatalf("Gradient2 is %T", alg)
				}
			}
		})
	}
}

type traceRow struct {
	window, inflight, limit int
	rtt                     int64
	drop                    bool
	estimate, longRTT       float64
}

func readTrace(t *testing.T, file string) []traceRow {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []traceRow
	sc := bufio.NewScanner(f)
	header := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !header {
			if line != "window,rtt_ns,inflight,did_drop,limit_int,estimated_limit_double,long_rtt_ns" {
				t.Fatalf("unexpected header %q", line)
			}
			header = true
			continue
		}
		f := strings.Split(line, ",")
		if len(f) != 7 {
			t.Fatalf("bad row %q", line)
		}
		var r traceRow
		r.window = atoi(t, f[0])
		r.rtt = int64(atoi(t, f[1]))
		r.inflight = atoi(t, f[2])
		r.drop = f[3] == "true"
		r.limit = atoi(t, f[4])
		if f[5] != "" {
			r.estimate = atof(t, f[5])
			r.longRTT = atof(t, f[6])
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestConformanceTracesMatchShared guards the copy in testdata against the shared originals,
// when they are beside the repository.
func TestConformanceTracesMatchShared(t *testing.T) {
	shared, _ := filepath.Glob("../shared/conformance/*.csv")
	for _, s := range shared {
		want, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("testdata/conformance", filepath.Base(s)))
		if err != nil {
			t.Fatalf("trace %s is not copied into testdata/conformance: %v", filepath.Base(s), err)
		}
		if string(got) != string(want) {
			t.Fatalf("testdata/conformance/%s differs from %s", filepath.Base(s), s)
		}
	}
}

func TestNewAdaptiveAlgorithmPinnedExample(t *testing.T) {
	alg, err := r4c.NewAdaptiveAlgorithm(r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD, InitialLimit: 10, MaxLimit: 100, BackoffRatio: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if got := alg.Update(r4c.WindowSummary{AvgLatency: 10 * time.Millisecond, MaxInFlight: 10}); got != 11 {
		t.Fatalf("after a full window: %d, want 11", got)
	}
	if got := alg.Update(r4c.WindowSummary{AvgLatency: 10 * time.Millisecond, MaxInFlight: 11, Dropped: true}); got != 8 {
		t.Fatalf("after a drop: %d, want int(11*0.8) = 8", got)
	}
	if alg.Limit() != 8 {
		t.Fatalf("Limit() = %d", alg.Limit())
	}
}

func TestNewAdaptiveAlgorithmRejectsBadSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  r4c.AdaptiveLimitConfig
		code string
	}{
		{"smoothing", r4c.AdaptiveLimitConfig{Smoothing: 1.5}, "R4C-REG-001"},
		{"limit below one", r4c.AdaptiveLimitConfig{MinLimit: -3}, "R4C-ATR-003"},
		{"out of order", r4c.AdaptiveLimitConfig{InitialLimit: 300}, "R4C-ATR-009"},
		{"named config", r4c.AdaptiveLimitConfig{Config: "backend"}, "R4C-REG-004"},
		{"nan", r4c.AdaptiveLimitConfig{RTTTolerance: math.NaN()}, "R4C-REG-001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r4c.NewAdaptiveAlgorithm(tc.cfg)
			if got := r4c.ErrorCode(err); got != tc.code {
				t.Fatalf("code %q (%v), want %s", got, err, tc.code)
			}
		})
	}
}
