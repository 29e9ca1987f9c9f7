package realtime

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// The committed page (docs/quality-realtime.md) holds measurements of the wall clock, which no
// test can repeat; it must still name every scenario and contender the command runs, with a row
// for each in every phase, so that a change of either shows up as a stale page.
func TestPageCoversEveryScenarioAndContender(t *testing.T) {
	b, err := os.ReadFile("../../docs/quality-realtime.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	contenders := Contenders()
	for _, sc := range Scenarios(1) {
		i := strings.Index(page, "\n## "+sc.Name+"\n")
		if i < 0 {
			t.Errorf("no section for scenario %s: run the command with -write ../docs (see its doc)", sc.Name)
			continue
		}
		section := page[i:]
		if j := strings.Index(section[4:], "\n## "); j >= 0 {
			section = section[:j+4]
		}
		for p, ph := range sc.Phases {
			for _, c := range contenders {
				row := "| " + strconv.Itoa(p+1) + " | " + strconv.Itoa(ph.Workers) + " | " + c.Name + " |"
				if !strings.Contains(section, row) {
					t.Errorf("scenario %s: no row %q: run the command with -write ../docs", sc.Name, row)
				}
			}
		}
	}
	for _, c := range contenders {
		if !strings.Contains(page, "- **"+c.Name+"**: "+c.Doc+".") {
			t.Errorf("the page describes %s otherwise than Contenders does: run the command with -write ../docs", c.Name)
		}
	}
}
