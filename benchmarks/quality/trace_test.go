package quality

import (
	"strings"
	"testing"
	"time"

	"github.com/resilience4cata/r4c/internal/sim"
)

func TestWriteTraceGivesALinePerSecond(t *testing.T) {
	res := &sim.Result{}
	for i := range 25 { // 2.5s of readings every 100ms
		res.Ticks = append(res.Ticks, sim.Tick{At: time.Duration(i) * 100 * time.Millisecond, Knee: 8, Sum: 10 + i, Load: i})
	}
	r := Run{Class: "cold", Model: sim.PS, Contender: Contender{Name: "knee"}, Seed: 2, Result: res}
	var b strings.Builder
	if err := WriteTrace(&b, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "cold on ps, knee, variant 2:") {
		t.Fatalf("trace:\n%s", b.String())
	}
	if want := "    1s knee   8: 20/10 21/11 22/12 23/13 24/14 25/15 26/16 27/17 28/18 29/19"; lines[2] != want {
		t.Errorf("second line of readings %q, want %q", lines[2], want)
	}
	if got := strings.Count(lines[3], "/"); got != 5 {
		t.Errorf("last second has %d readings, want 5: %q", got, lines[3])
	}
}

func TestWriteTraceShowsEachReplicasLimit(t *testing.T) {
	res := &sim.Result{Ticks: []sim.Tick{
		{At: 0, Knee: 30, Limits: []int{12, 15, 13}, Sum: 40, Load: 37},
		{At: 100 * time.Millisecond, Knee: 30, Limits: make([]int, traceReplicas+1), Sum: 55, Load: 30},
	}}
	r := Run{Class: "w-replicas-3", Model: sim.FIFO, Contender: Contender{Name: "knee"}, Result: res}
	var b strings.Builder
	if err := WriteTrace(&b, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if want := "    0s knee  30: 12+15+13/37 55/30"; len(lines) != 2 || lines[1] != want {
		t.Errorf("readings %q, want %q (each of three replicas' limits, then the sum of more than %d)", lines[len(lines)-1], want, traceReplicas)
	}
}
