package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestEndToEnd generates testdata/e2e into a temporary module that requires r4c, then builds
// and tests it: instances and settings by their generated ids, rejection at the limit (fast
// path and pipeline), the fallback, a timeout and the seed's async example on a manual clock.
func TestEndToEnd(t *testing.T) {
	mod := tempModule(t, "e2e")
	dir := filepath.Join(mod, "shop")
	for _, f := range []string{"shop.go", "shop_test.go"} {
		src, err := os.ReadFile(filepath.Join("testdata", "e2e", f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, f), string(src))
	}
	var stderr bytes.Buffer
	if code := run([]string{"-type", "OrderClient", "-dir", dir}, &stderr); code != 0 {
		t.Fatalf("exit status %d:\n%s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "shop_r4c.go")); err != nil {
		t.Fatal(err)
	}
	goCmd(t, mod, "vet", "./...")
	goCmd(t, mod, "test", "-count=1", "./...")
}
