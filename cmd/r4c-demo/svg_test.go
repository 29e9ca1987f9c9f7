package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSVGChart writes the chart with -svg and reads it back as XML: it must be well-formed, with
// a line for the capacity and one for each algorithm, whose points follow the run's seconds,
// axes with their units, and a legend.
func TestSVGChart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "limits.svg")
	code, out, stderr := runDemo(t, "-pattern", "40:20s,10:20s", "-algorithm", "knee,gradient2,aimd", "-quiet", "-svg", path)
	if code != 0 || stderr != "" || !strings.Contains(out, "wrote the chart to "+path) {
		t.Fatalf("exit %d, stderr %q, stdout %.300q", code, stderr, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]int{} // data-series -> number of points
	var texts []string
	dec := xml.NewDecoder(bytes.NewReader(data))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = e.Name.Local
				if e.Name.Space != "http://www.w3.org/2000/svg" {
					t.Fatalf("root element in namespace %q", e.Name.Space)
				}
			}
			if e.Name.Local == "polyline" {
				var name, points string
				for _, a := range e.Attr {
					switch a.Name.Local {
					case "data-series":
						name = a.Value
					case "points":
						points = a.Value
					}
				}
				for _, p := range strings.Fields(points) {
					x, y, ok := strings.Cut(p, ",")
					if _, err := strconv.ParseFloat(x, 64); !ok || err != nil {
						t.Fatalf("%s: bad point %q", name, p)
					}
					if _, err := strconv.ParseFloat(y, 64); err != nil {
						t.Fatalf("%s: bad point %q", name, p)
					}
				}
				series[name] = len(strings.Fields(points))
			}
		case xml.CharData:
			texts = append(texts, string(e))
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q", root)
	}
	// The capacity is a step per second (two points each); each limit a point per second and its
	// start.
	want := map[string]int{"capacity": 80, "knee": 41, "gradient2": 41, "aimd": 41}
	if len(series) != len(want) {
		t.Fatalf("lines %v, want %v", series, want)
	}
	for name, n := range want {
		if series[name] != n {
			t.Errorf("%s: %d points, want %d", name, series[name], n)
		}
	}
	all := strings.Join(texts, "|")
	for _, label := range []string{"time (s)", "concurrent calls", "capacity", "knee limit", "gradient2 limit", "aimd limit"} {
		if !strings.Contains(all, label) {
			t.Errorf("no %q in the chart's text", label)
		}
	}
}
