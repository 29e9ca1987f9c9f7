package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files testdata/<case>/want_r4c.go")

// r4cRoot is the library's directory (the replace target of the temporary modules).
func r4cRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// tempModule makes a module example.com/<name> that requires r4c from this work tree.
func tempModule(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	gomod := "module example.com/" + name + "\n\ngo 1.26.0\n\nrequire github.com/resilience4cata/r4c v0.0.0\n\nreplace github.com/resilience4cata/r4c => " + r4cRoot(t) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

var typeFlag = regexp.MustCompile(`(?m)^//go:generate .*-type ([A-Za-z0-9_,]+)`)

func goCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
}

// TestGolden generates every testdata case in one temporary module, compares each output with
// its want_r4c.go, then vets the module (which compiles every generated file).
func TestGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/*/input.go")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	mod := tempModule(t, "golden")
	for _, in := range cases {
		name := filepath.Base(filepath.Dir(in))
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			m := typeFlag.FindSubmatch(src)
			if m == nil {
				t.Fatalf("%s has no //go:generate ... -type line", in)
			}
			dir := filepath.Join(mod, name)
			writeFile(t, filepath.Join(dir, "input.go"), string(src))
			var stderr bytes.Buffer
			if code := run([]string{"-type", string(m[1]), "-dir", dir}, &stderr); code != 0 {
				t.Fatalf("exit status %d:\n%s", code, stderr.String())
			}
			got, err := os.ReadFile(filepath.Join(dir, "input_r4c.go"))
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join(filepath.Dir(in), "want_r4c.go")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("generated code differs from %s (go test -update rewrites it):\n%s", golden, got)
			}
			// A second run over its own output gives the same file.
			if code := run([]string{"-type", string(m[1]), "-dir", dir}, &stderr); code != 0 {
				t.Fatalf("second run: exit status %d:\n%s", code, stderr.String())
			}
			again, _ := os.ReadFile(filepath.Join(dir, "input_r4c.go"))
			if !bytes.Equal(got, again) {
				t.Errorf("second run differs")
			}
		})
	}
	goCmd(t, mod, "vet", "./...")
}
