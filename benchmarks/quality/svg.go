package quality

import (
	"fmt"
	"github.com/resilience4cata/r4c/internal/sim"
	"io"
	"math"
	"strings"
)

// palette colours the contenders in plots, in the order of Contenders: a colour each for up to
// ten (a full run has nine). References are drawn dashed too.
var palette = []string{"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f", "#bcbd22", "#e377c2"}

// WriteSVG plots the sum of the limits of each run against the knee over time. The runs are
// those of one scenario on one model; the y axis stops at yMax times the highest knee, and a
// line above it is drawn along the top.
func WriteSVG(w io.Writer, title string, runs []Run, yMax float64) {
	const (
		width, height        = 760, 300
		left, right, top, bo = 48, 150, 28, 36
	)
	pw, ph := float64(width-left-right), float64(height-top-bo)
	ticks := runs[0].Result.Ticks
	if len(ticks) == 0 {
		return
	}
	tEnd := ticks[len(ticks)-1].At.Seconds()
	knee := 0
	for _, t := range ticks {
		knee = max(knee, t.Knee)
	}
	ymax := yMax * float64(knee)
	x := func(sec float64) float64 { return float64(left) + pw*sec/tEnd }
	y := func(v float64) float64 { return float64(top) + ph*(1-min(v, ymax)/ymax) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="16" font-size="13">%s</text>`+"\n", left, escape(title))
	// Axes and grid.
	for _, f := range niceTicks(ymax) {
		fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%g</text>`+"\n",
			left, float64(left)+pw, y(f), y(f), left-4, y(f)+4, f)
	}
	for _, s := range niceTicks(tEnd) {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" stroke="#eee"/><text x="%.1f" y="%.1f" text-anchor="middle">%gs</text>`+"\n",
			x(s), x(s), top, float64(top)+ph, x(s), float64(top)+ph+14, s)
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#888"/>`+"\n", left, top, pw, ph)
	// The start of every phase but the first.
	for i := 1; i < len(ticks); i++ {
		if ticks[i].Phase != ticks[i-1].Phase {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" stroke="#888" stroke-dasharray="2 3"/>`+"\n",
				x(ticks[i].At.Seconds()), x(ticks[i].At.Seconds()), top, float64(top)+ph)
		}
	}
	// The knee, then each contender's limit.
	fmt.Fprintf(&b, `<polyline fill="none" stroke="black" stroke-width="2" stroke-dasharray="6 3" points="%s"/>`+"\n",
		points(ticks, x, y, func(i int) float64 { return float64(ticks[i].Knee) }))
	legend := func(i int, name, colour, dash string) {
		ly := float64(top + 14 + 18*i)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="%s"/><text x="%.1f" y="%.1f">%s</text>`+"\n",
			float64(left)+pw+10, float64(left)+pw+34, ly, ly, colour, dash, float64(left)+pw+40, ly+4, escape(name))
	}
	legend(0, "capacity (knee)", "black", "6 3") // not "knee": a contender has that name
	for i, r := range runs {
		colour, dash := palette[i%len(palette)], "none"
		if r.Contender.Reference {
			dash = "5 3"
		}
		ts := r.Result.Ticks
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" stroke-opacity="0.9" stroke-dasharray="%s" points="%s"/>`+"\n",
			colour, dash, points(ts, x, y, func(i int) float64 { return float64(ts[i].Sum) }))
		legend(i+1, r.Contender.Name, colour, dash)
	}
	fmt.Fprintf(&b, `<text x="12" y="%.1f" transform="rotate(-90 12 %.1f)" text-anchor="middle">limit (sum over replicas)</text>`+"\n",
		float64(top)+ph/2, float64(top)+ph/2)
	b.WriteString("</svg>\n")
	io.WriteString(w, b.String())
}

// points returns the polyline of v over ticks (the time in seconds), one point per tick but
// for those inside a level stretch: a point with the same printed height as the points before
// and after it lies on the line between them, and is left out. The line drawn is the same.
func points(ticks []sim.Tick, x, y func(float64) float64, v func(int) float64) string {
	ys := make([]string, len(ticks))
	for i := range ticks {
		ys[i] = fmt.Sprintf("%.1f", y(v(i)))
	}
	var b strings.Builder
	for i, t := range ticks {
		if i > 0 && i < len(ticks)-1 && ys[i] == ys[i-1] && ys[i] == ys[i+1] {
			continue
		}
		fmt.Fprintf(&b, "%.1f,%s ", x(t.At.Seconds()), ys[i])
	}
	return strings.TrimSpace(b.String())
}

// niceTicks returns four to eight round values from 0 to max.
func niceTicks(max float64) []float64 {
	step := math.Pow(10, math.Floor(math.Log10(max)))
	for max/step < 4 {
		step /= 2
	}
	for max/step > 8 {
		step *= 2
	}
	var ts []float64
	for v := 0.0; v <= max+1e-9; v += step {
		ts = append(ts, v)
	}
	return ts
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
