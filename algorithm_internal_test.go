package r4c

import (
	"math"
	"strconv"
	"testing"
)

// The algorithm table drives names, parsing, validity and the default smoothing.
func TestAlgorithmTable(t *testing.T) {
	for a, info := range algorithms {
		alg := LimitAlgorithm(a)
		if info.build == nil {
			if a != 0 {
				t.Errorf("algorithm %d has no row", a)
			}
			continue
		}
		if got, ok := parseAlgorithm(alg.String()); !ok || got != alg || !alg.valid() {
			t.Errorf("%v: parses as %v, %v", alg, got, ok)
		}
		if info.smoothing <= 0 || info.smoothing > 1 {
			t.Errorf("%v: default smoothing %v", alg, info.smoothing)
		}
		c := adaptiveLimitSpec.resolved(adaptiveLimitSpec.merge(adaptiveLimitSpec.defaults, AdaptiveLimitConfig{Algorithm: alg}))
		if c.Smoothing != info.smoothing {
			t.Errorf("%v: resolved smoothing %v", alg, c.Smoothing)
		}
	}
	if LimitAlgorithm(0).valid() || LimitAlgorithm(len(algorithms)).valid() || LimitAlgorithm(200).String() != "LimitAlgorithm(200)" {
		t.Error("values outside the table")
	}
	if got, ok := parseAlgorithm("VEGAS"); !ok || got != Vegas {
		t.Error("names parse in any case")
	}
	if got := smoothingDefault(); got != "0.2 (1.0 under vegas)" {
		t.Errorf("smoothing default %q", got)
	}
}

// vegasLog10 must equal floor(log10(n)), at least 1, exactly: count the digits of n instead.
func TestVegasLog10(t *testing.T) {
	want := func(n int) int { return max(1, len(strconv.Itoa(n))-1) }
	for n := -5; n <= 2_000_000; n++ {
		if n < 1 {
			if vegasLog10(n) != 1 {
				t.Fatalf("vegasLog10(%d) = %d, want 1", n, vegasLog10(n))
			}
			continue
		}
		if got := vegasLog10(n); got != want(n) {
			t.Fatalf("vegasLog10(%d) = %d, want %d", n, got, want(n))
		}
	}
	for p := 10; p <= math.MaxInt32; p *= 10 {
		for _, n := range []int{p - 1, p, p + 1} {
			if got := vegasLog10(n); got != want(n) {
				t.Fatalf("vegasLog10(%d) = %d, want %d", n, got, want(n))
			}
		}
	}
	if vegasLog10(math.MaxInt32) != 9 {
		t.Fatal("the largest Java int")
	}
}

func TestJavaInt(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want int
	}{
		{0, 0}, {1.9, 1}, {-1.9, -1}, {math.NaN(), 0}, {math.Inf(1), math.MaxInt32}, {math.Inf(-1), math.MinInt32},
		{3e9, math.MaxInt32}, {-3e9, math.MinInt32}, {2147483646.5, 2147483646},
	} {
		if got := javaInt(tc.x); got != tc.want {
			t.Errorf("javaInt(%v) = %d, want %d", tc.x, got, tc.want)
		}
	}
}

func TestVegasJitterIsInRangeAndVaries(t *testing.T) {
	seen := map[float64]bool{}
	for _, seed := range []uint64{0, 1, 20, 1 << 40, math.MaxUint64} {
		for k := uint64(0); k < 10000; k++ {
			j := vegasJitter(seed, k)
			if !(j >= 0.5 && j < 1) {
				t.Fatalf("vegasJitter(%d, %d) = %v", seed, k, j)
			}
			seen[j] = true
		}
	}
	if len(seen) < 49990 {
		t.Fatalf("only %d distinct jitters of 50000", len(seen))
	}
	// The largest value the mapping can give stays below 1.
	if j := 0.5 + float64(float64(uint64(math.MaxUint64)>>12)*0x1p-53); j >= 1 {
		t.Fatalf("largest jitter %v", j)
	}
	// No allocation.
	v := newVegas(AdaptiveLimitConfig{InitialLimit: 1, MinLimit: 1, MaxLimit: 10, ProbeMultiplier: 1, Smoothing: 1}).(*vegasLimit)
	if a := testing.AllocsPerRun(100, func() { v.Update(WindowSummary{AvgLatency: 5, MaxInFlight: 1}) }); a != 0 {
		t.Fatalf("Update allocates %v times", a)
	}
}
