package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const badSource = `package bad

import "context"

type A interface {
	//r4c:adaptivelimit window=5x
	M1(ctx context.Context) error
	//r4c:adaptivelimit maxLimt=10
	M2(ctx context.Context) error
}

type B interface {
	//r4c:adaptivelimit maxLimit=0
	M3(ctx context.Context) error
	//r4c:adaptivelimit initialLimit=300 maxLimit=100
	M4(ctx context.Context) error
	//r4c:timeout 1s
	M5(ctx context.Context)
	//r4c:adaptivelimt
	//r4c:fallback method=Nope
	M6(ctx context.Context) error
	//r4c:bulkhead 2
	//r4c:bulkhead 3
	M7(ctx context.Context) error
}

// Fine has no problem, but shares the package: nothing is written for it either.
type Fine interface {
	//r4c:adaptivelimit
	M(ctx context.Context) error
}
`

// TestErrors checks every ATR code and the shape errors with their file.go:LINE:COL, all in
// one run, the exit status, and that nothing is written.
func TestErrors(t *testing.T) {
	mod := tempModule(t, "bad")
	dir := filepath.Join(mod, "bad")
	writeFile(t, filepath.Join(dir, "bad.go"), badSource)
	var stderr bytes.Buffer
	code := run([]string{"-type", "A,B,Fine,Missing", "-dir", dir}, &stderr)
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	got := strings.ReplaceAll(stderr.String(), dir+string(filepath.Separator), "")
	want := `r4cgen: type Missing not found in package example.com/bad/bad
bad.go:6:29: R4C-ATR-001: //r4c:adaptivelimit: window=5x is invalid: want a duration in Go syntax, such as 500ms, 2s or 1m30s
bad.go:8:22: R4C-ATR-002: unknown attribute maxLimt for //r4c:adaptivelimit: did you mean maxLimit?
bad.go:13:31: R4C-ATR-003: //r4c:adaptivelimit: maxLimit=0 is invalid: want at least 1, and at least minLimit
bad.go:15:22: R4C-ATR-009: //r4c:adaptivelimit: limits out of order: initialLimit=300 is above maxLimit=100
bad.go:18:2: r4cgen: method M5 has no error result: the policies' rejections could not be returned
bad.go:19:8: R4C-ATR-002: unknown directive //r4c:adaptivelimt: did you mean //r4c:adaptivelimit?
bad.go:20:17: r4cgen: //r4c:fallback: B has no method Nope
bad.go:23:8: R4C-ATR-002: //r4c:bulkhead is given twice: write one directive per policy
`
	if got != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files written: %v", entries)
	}
}

func TestFallbackSignatureAndTypeLevelFallback(t *testing.T) {
	mod := tempModule(t, "fb")
	dir := filepath.Join(mod, "fb")
	writeFile(t, filepath.Join(dir, "fb.go"), `package fb

import "context"

//r4c:fallback method=X
type T interface {
	//r4c:fallback method=Wrong on=net.ErrClosed
	M(ctx context.Context, s string) (int, error)
	Wrong(ctx context.Context, s string) (int, error)
	X(ctx context.Context, s string, err error) (int, error)
}
`)
	var stderr bytes.Buffer
	if code := run([]string{"-type", "T", "-dir", dir}, &stderr); code != 1 {
		t.Errorf("exit status %d", code)
	}
	got := strings.ReplaceAll(stderr.String(), dir+string(filepath.Separator), "")
	for _, want := range []string{
		"fb.go:5:1: r4cgen: //r4c:fallback names a method of the same signature: put it on a method, not on the type\n",
		"fb.go:7:17: r4cgen: //r4c:fallback: T.Wrong must be func(ctx context.Context, s string, err error) (int, error) to be M's fallback\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr:\n%s\nwant a line:\n%s", got, want)
		}
	}
}

func TestUsage(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(nil, &stderr); code != 2 || !strings.Contains(stderr.String(), "Usage: r4cgen -type") {
		t.Errorf("exit status %d, stderr %q", code, stderr.String())
	}
}
