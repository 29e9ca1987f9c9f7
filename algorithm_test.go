package r4c_test

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resilience4cata/r4c"
)

// The conformance configurations, by trace file-name prefix (testdata/conformance/README.md),
// and the header of their traces: the last column is Gradient2's long-term latency or Vegas's
// no-load latency.
type conformanceConfig struct {
	prefix string
	cfg    r4c.AdaptiveLimitConfig
	header string
}

var conformanceConfigs = []conformanceConfig{
	{"gradient2_cfg1_", r4c.AdaptiveLimitConfig{Algorithm: r4c.Gradient2}, headerLong},
	{"aimd_cfg1_", r4c.AdaptiveLimitConfig{Algorithm: r4c.AIMD}, headerLong},
	{"vegas_cfg1_", r4c.AdaptiveLimitConfig{Algorithm: r4c.Vegas, InitialLimit: 20, MaxLimit: 200}, headerNoLoad},
	{"vegas_cfg3_", r4c.AdaptiveLimitConfig{Algorithm: r4c.Vegas, InitialLimit: 20, MaxLimit: 200, Alpha: 3, Beta: 6, Smoothing: 0.2}, headerNoLoad},
	{"vegas_cfg5_", r4c.AdaptiveLimitConfig{Algorithm: r4c.Vegas, InitialLimit: 20, MaxLimit: 200, ProbeMultiplier: 1000000}, headerNoLoad},
}

const (
	headerLong   = "window,rtt_ns,inflight,did_drop,limit_int,estimated_limit_double,long_rtt_ns"
	headerNoLoad = "window,rtt_ns,inflight,did_drop,limit_int,estimated_limit_double,rtt_noload_ns"
)

// TestConformance replays every trace produced by Netflix's Java implementation (see
// testdata/conformance/README.md) and requires the integer limit, and for Gradient2 and Vegas
// the double estimate and the long-term (Gradient2) or no-load (Vegas) latency, to match bit for
// bit after every window.
func TestConformance(t *testing.T) {
	files, err := filepath.Glob("testdata/conformance/*.csv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance traces found: %v", err)
	}
	seen := map[r4c.LimitAlgorithm]bool{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".csv")
		t.Run(name, func(t *testing.T) {
			i := slices.IndexFunc(conformanceConfigs, func(c conformanceConfig) bool { return strings.HasPrefix(name, c.prefix) })
			if i < 0 {
				t.Fatalf("no configuration for the prefix of %s: add it to conformanceConfigs", name)
			}
			cfg, header := conformanceConfigs[i].cfg, conformanceConfigs[i].header
			seen[cfg.Algorithm] = true
			alg, err := r4c.NewAdaptiveAlgorithm(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rows := readTrace(t, file, header)
			if len(rows) < 300 {
				t.Fatalf("only %d rows", len(rows))
			}
			for _, row := range rows {
				got := alg.Update(r4c.WindowSummary{AvgLatency: time.Duration(row.rtt), MaxInFlight: row.inflight, Dropped: row.drop})
				if got != row.limit || alg.Limit() != row.limit {
					t.Fatalf("window %d: limit %d (Limit() %d), want %d", row.window, got, alg.Limit(), row.limit)
				}
				switch a := alg.(type) {
				case gradient2Alg:
					if math.Float64bits(a.Estimate()) != math.Float64bits(row.estimate) {
						t.Fatalf("window %d: estimate %v, want %v", row.window, a.Estimate(), row.estimate)
					}
					if long := atof(t, row.last); math.Float64bits(a.LongLatency()) != math.Float64bits(long) {
						t.Fatalf("window %d: long rtt %v, want %v", row.window, a.LongLatency(), long)
					}
				case vegasAlg:
					if math.Float64bits(a.Estimate()) != math.Float64bits(row.estimate) {
						t.Fatalf("window %d: estimate %v, want %v", row.window, a.Estimate(), row.estimate)
					}
					if noLoad := int64(atoi(t, row.last)); int64(a.NoLoadLatency()) != noLoad {
						t.Fatalf("window %d: no-load latency %d, want %d", row.window, int64(a.NoLoadLatency()), noLoad)
					}
				default:
					if cfg.Algorithm != r4c.AIMD {
						t.Fatalf("%v is %T", cfg.Algorithm, alg)
					}
				}
			}
		})
	}
	for _, a := range []r4c.LimitAlgorithm{r4c.Gradient2, r4c.AIMD, r4c.Vegas} {
		if !seen[a] {
			t.Errorf("no trace of %v", a)
		}
	}
}

type traceRow struct {
	window, inflight, limit int
	rtt                     int64
	drop                    bool
	estimate                float64
	last                    string // the last column: Gradient2's long rtt, Vegas's no-load rtt
}

func readTrace(t *testing.T, file, header string) []traceRow {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []traceRow
	sc := bufio.NewScanner(f)
	seenHeader := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !seenHeader {
			if line != header {
				t.Fatalf("unexpected header %q, want %q", line, header)
			}
			seenHeader = true
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
			r.last = f[6]
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
