package main

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// svgColors are the lines' colours: the capacity, then each algorithm in turn.
var svgColors = []string{"#1f5fbf", "#d2691e", "#2e8b57", "#8e44ad", "#b3261e", "#5f6b7a"}

// writeSVG draws the limits of results against the dependency's capacity over time: one line per
// algorithm, the capacity as a grey step, axes with their units and a legend. The drawing is a
// function of the results only, so that the same run writes the same file.
func writeSVG(w io.Writer, results []*Result) error {
	const (
		W, H          = 960, 440
		left, right   = 64, 170
		top, bottom   = 40, 56
		plotW, plotH  = W - left - right, H - top - bottom
		capacityColor = "#7a7f87"
	)
	seconds := len(results[0].Seconds)
	maxY := 1
	for _, s := range results[0].Seconds {
		maxY = max(maxY, s.Capacity)
	}
	for _, r := range results {
		for _, s := range r.Seconds {
			maxY = max(maxY, s.Limit)
		}
	}
	yStep := niceStep(maxY)
	maxY = (maxY + yStep - 1) / yStep * yStep
	x := func(t float64) float64 { return left + plotW*t/float64(seconds) }
	y := func(v float64) float64 { return top + plotH*(1-v/float64(maxY)) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" font-family="sans-serif" font-size="13" role="img" aria-labelledby="title desc">`+"\n", W, H, W, H)
	names := make([]string, len(results))
	for i, r := range results {
		names[i] = r.Config.Limit.Algorithm.String()
	}
	fmt.Fprintf(&b, `<title id="title">Adaptive limits against the dependency's capacity</title>`+"\n")
	fmt.Fprintf(&b, `<desc id="desc">The limit of each algorithm (%s) and the capacity of the dependency, in concurrent calls, over %d simulated seconds (pattern %s).</desc>`+"\n",
		html.EscapeString(strings.Join(names, ", ")), seconds, html.EscapeString(results[0].Config.Pattern.String()))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", W, H)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="16" font-weight="bold">Adaptive limits against the dependency's capacity</text>`+"\n", left)

	// Axes, grid and ticks.
	for v := 0; v <= maxY; v += yStep {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e3e6ea"/>`+"\n", left, left+plotW, y(float64(v)), y(float64(v)))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%d</text>`+"\n", left-8, y(float64(v))+4, v)
	}
	xStep := niceStep(seconds)
	for t := 0; t <= seconds; t += xStep {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#9aa0a8"/>`+"\n", x(float64(t)), x(float64(t)), top+plotH, top+plotH+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", x(float64(t)), top+plotH+20, t)
	}
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#5f6b7a"/>`+"\n", left, left+plotW, top+plotH, top+plotH)
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#5f6b7a"/>`+"\n", left, left, top, top+plotH)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">time (s)</text>`+"\n", left+plotW/2, H-14)
	fmt.Fprintf(&b, `<text transform="translate(18 %d) rotate(-90)" text-anchor="middle">concurrent calls</text>`+"\n", top+plotH/2)

	// The capacity, as steps: it holds for each whole second.
	var pts []string
	for i, s := range results[0].Seconds {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(float64(i)), y(float64(s.Capacity)), x(float64(i+1)), y(float64(s.Capacity))))
	}
	fmt.Fprintf(&b, `<polyline data-series="capacity" fill="none" stroke="%s" stroke-width="3" stroke-dasharray="7 4" points="%s"/>`+"\n", capacityColor, strings.Join(pts, " "))
	// Each limit, read at the end of each second.
	for i, r := range results {
		pts = pts[:0]
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(0), y(float64(r.Resolved.InitialLimit))))
		for j, s := range r.Seconds {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(float64(j+1)), y(float64(s.Limit))))
		}
		fmt.Fprintf(&b, `<polyline data-series="%s" fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n",
			html.EscapeString(names[i]), svgColors[i%len(svgColors)], strings.Join(pts, " "))
	}

	// The legend.
	lx, ly := left+plotW+20, top+10
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="3" stroke-dasharray="7 4"/>`+"\n", lx, lx+28, ly, ly, capacityColor)
	fmt.Fprintf(&b, `<text x="%d" y="%d">capacity</text>`+"\n", lx+36, ly+4)
	for i, name := range names {
		yy := ly + 24*(i+1)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", lx, lx+28, yy, yy, svgColors[i%len(svgColors)])
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s limit</text>`+"\n", lx+36, yy+4, html.EscapeString(name))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// niceStep returns a step of 1, 2 or 5 times a power of ten that cuts 0..span into 4 to 10 parts.
func niceStep(span int) int {
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if span/(m*p) <= 8 {
				return m * p
			}
		}
	}
}
