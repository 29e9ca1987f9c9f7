package metrics

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the metric reference in docs/metrics.md")

const (
	referenceFile = "../../docs/metrics.md"
	beginMarker   = "<!-- BEGIN metric reference"
	endMarker     = "<!-- END metric reference -->"
)

// TestReference keeps the reference table of docs/metrics.md what the code says: go generate
// rewrites it (-update), and the test fails when it drifts.
func TestReference(t *testing.T) {
	doc, err := os.ReadFile(referenceFile)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(beginMarker)), bytes.Index(doc, []byte(endMarker))
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers of its reference table", referenceFile)
	}
	k := i + bytes.IndexByte(doc[i:], '\n') + 1
	got := append(append(append([]byte{}, doc[:k]...), renderReference()...), doc[j:]...)
	if *update {
		if err := os.WriteFile(referenceFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, doc) {
		t.Fatalf("%s is stale: run go generate ./internal/metrics", referenceFile)
	}
}

func renderReference() []byte {
	var b bytes.Buffer
	b.WriteString("| Prometheus | OpenTelemetry | type | unit | labels | meaning |\n|---|---|---|---|---|---|\n")
	for _, m := range All {
		labels := "`" + strings.Join(m.Labels, "`, `") + "`"
		if len(m.Labels) == 0 {
			labels = "(none)"
		}
		unit := "`" + m.Unit + "`"
		if m.Unit == "" {
			unit = "(none)"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %s | %s |\n", m.Prom, m.Name, m.Type, unit, labels, m.Help)
	}
	return b.Bytes()
}

func TestPromNames(t *testing.T) {
	for _, c := range []struct {
		name, unit string
		typ        Type
		want       string
	}{
		{"r4c.calls.rejected", "{call}", Counter, "r4c_calls_rejected_total"},
		{"r4c.adaptivelimit.limit", "{call}", Gauge, "r4c_adaptivelimit_limit"},
		{"r4c.adaptivelimit.window.latency", "s", Gauge, "r4c_adaptivelimit_window_latency_seconds"},
		{"r4c.circuitbreaker.failure.ratio", "1", Gauge, "r4c_circuitbreaker_failure_ratio"},
		{"a.total.b", "", Counter, "a_b_total"},
		{"a.seconds.b", "s", Gauge, "a_b_seconds"},
	} {
		if got := PromName(c.name, c.unit, c.typ); got != c.want {
			t.Errorf("PromName(%q, %q, %v) = %q, want %q", c.name, c.unit, c.typ, got, c.want)
		}
	}
	seen := map[string]bool{}
	for _, m := range All {
		if seen[m.Prom] {
			t.Errorf("two metrics named %s", m.Prom)
		}
		seen[m.Prom] = true
	}
}
