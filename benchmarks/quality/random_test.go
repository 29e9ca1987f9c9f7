package quality

import (
	"reflect"
	"testing"
	"time"

	"github.com/resilience4cata/r4c/internal/sim"
)

// The random set is drawn from a fixed seed: the same classes every run (its page is checked for
// drift), named apart from the other sets' classes, and within the ranges its doc promises: a
// timeout of three to five mean service times, shares of three slots or more per replica, one to
// three phases. Every class runs.
func TestRandomClasses(t *testing.T) {
	classes := RandomClasses()
	if len(classes) != randomClasses {
		t.Fatalf("%d classes, want %d", len(classes), randomClasses)
	}
	checkNamedApart(t, classes, append(Classes(), WideClasses()...)...)
	checkDrawn(t, classes, RandomClasses())
	var knee []Contender
	for _, c := range Contenders() {
		if c.Name == "knee" {
			knee = append(knee, c)
		}
	}
	runs, err := RunAll(classes, knee, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * len(classes); len(runs) != want {
		t.Errorf("%d runs, want %d", len(runs), want)
	}
}

// Another draw (cmd/quality -draw) holds as many classes as asked, of the same kind and within
// the same ranges, the same every time it is drawn, and not the published ones.
func TestDrawClasses(t *testing.T) {
	classes := DrawClasses(2027, 7, 30)
	if len(classes) != 30 {
		t.Fatalf("%d classes, want 30", len(classes))
	}
	checkDrawn(t, classes, DrawClasses(2027, 7, 30))
	same := 0
	for i, c := range RandomClasses() {
		if c.Doc == classes[i].Doc {
			same++
		}
	}
	if same == randomClasses {
		t.Error("another draw gave the published classes")
	}
}

// checkDrawn checks that classes drawn at random are the same when drawn again, and within the
// ranges the random set's doc promises.
func checkDrawn(t *testing.T, classes, again []Class) {
	t.Helper()
	for i, c := range classes {
		if c.Doc != again[i].Doc {
			t.Errorf("class %q: doc %q, drawn again %q", c.Name, c.Doc, again[i].Doc)
		}
		for _, m := range []sim.Model{sim.PS, sim.FIFO} {
			sc := c.Make(m, 1)
			if !reflect.DeepEqual(sc, again[i].Make(m, 1)) {
				t.Errorf("class %q on %v: drawn again, a different scenario", c.Name, m)
			}
			if n := len(sc.Phases); n < 1 || n > 3 {
				t.Errorf("class %q: %d phases", c.Name, n)
			}
			replicas := max(1, sc.Replicas)
			for _, p := range sc.Phases {
				if to := float64(sc.Timeout) / float64(p.Service); to < 3 || to > 5 {
					t.Errorf("class %q: a timeout of %.1f service times", c.Name, to)
				}
				if p.Capacity/replicas < 3 {
					t.Errorf("class %q: a knee of %d over %d replicas", c.Name, p.Capacity, replicas)
				}
				if p.Duration < 60*time.Second {
					t.Errorf("class %q: a phase of %v", c.Name, p.Duration)
				}
			}
		}
	}
}

// ClockOffset changes nothing of a scenario but where its wall clock starts.
func TestClockOffsetShiftsOnlyTheClock(t *testing.T) {
	const d = 3700 * time.Millisecond
	classes := append(Classes(), WideClasses()...)
	shifted := ClockOffset(classes, d)
	for i, c := range classes {
		for _, m := range []sim.Model{sim.PS, sim.FIFO} {
			want := c.Make(m, 0.5)
			got := shifted[i].Make(m, 0.5)
			if got.ClockOffset != d || shifted[i].Name != c.Name {
				t.Fatalf("%s on %v: clock offset %v, want %v", c.Name, m, got.ClockOffset, d)
			}
			got.ClockOffset = 0
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s on %v: the shifted scenario differs beyond its clock:\n%+v\nwant\n%+v", c.Name, m, got, want)
			}
		}
	}
}
