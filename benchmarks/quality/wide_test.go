package quality

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The wide set's classes are named apart from the main set's (the -against files and the pages
// key their rows by class), each says what it is, and every one runs: Knee and the reference
// through each at a short scale, written to their own page with a plot per class and model, and
// without the main set's weaknesses.
func TestWideClasses(t *testing.T) {
	wide := WideClasses()
	checkNamedApart(t, wide, Classes()...)
	var contenders []Contender
	for _, c := range Contenders() {
		if c.Name == "knee" || c.Name == "at-1.2knee" {
			contenders = append(contenders, c)
		}
	}
	runs, err := RunAll(wide, contenders, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	opts := MarkdownOptions{Page: "wide.md", PlotDir: "wide", Classes: wide, Title: "Wide", Lead: "The lead.", NoWeak: true}
	if err := WriteDocs(dir, runs, opts); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "wide.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(page, []byte("# Wide\n")) || !bytes.Contains(page, []byte("\nThe lead.\n")) {
		t.Errorf("the page does not start with its title and lead:\n%.200s", page)
	}
	if bytes.Contains(page, []byte("## Where each is weak")) {
		t.Error("the page shows the main set's weaknesses")
	}
	for _, c := range wide {
		if !bytes.Contains(page, []byte("\n### "+c.Name+"\n")) {
			t.Errorf("the page has no results for %s", c.Name)
		}
	}
	files, err := os.ReadDir(filepath.Join(dir, "wide"))
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * len(wide); len(files) != want {
		t.Errorf("%d plots, want %d", len(files), want)
	}
}

// checkNamedApart checks that every class of set says what it is and is named apart from the
// others' classes and from each other (the -against files and the pages key their rows by
// class).
func checkNamedApart(t *testing.T, set []Class, others ...Class) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range others {
		seen[c.Name] = true
	}
	for _, c := range set {
		if seen[c.Name] {
			t.Errorf("class %q is named twice", c.Name)
		}
		seen[c.Name] = true
		if c.Doc == "" {
			t.Errorf("class %q has no Doc", c.Name)
		}
	}
}
