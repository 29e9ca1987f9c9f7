package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Series is one line of a chart: a value per second, drawn with Mark.
type Series struct {
	Name   string
	Mark   byte
	Values []float64
}

// overlapMark marks a cell where two series meet, unless one of them is the first series.
const overlapMark = '*'

// Chart draws the series against time as text, width columns by height rows (plus axes and a
// legend). Each column is the mean of the seconds it covers; the y axis starts at zero. The first
// series is the reference (the capacity): a later one that falls on it is drawn with its mark in
// lower case, so that it stays visible; other overlaps are drawn as overlapMark.
func Chart(w io.Writer, width, height int, series ...Series) {
	n := 0
	for _, s := range series {
		n = max(n, len(s.Values))
	}
	if n == 0 || width < 1 || height < 2 {
		return
	}
	width = min(width, n)
	cols := make([][]float64, len(series))
	top := 0.0
	for i, s := range series {
		cols[i] = make([]float64, width)
		for c := range width {
			from, to := c*n/width, (c+1)*n/width
			sum, k := 0.0, 0
			for t := from; t < to && t < len(s.Values); t++ {
				sum += s.Values[t]
				k++
			}
			if k == 0 {
				cols[i][c] = math.NaN()
				continue
			}
			cols[i][c] = sum / float64(k)
			top = max(top, cols[i][c])
		}
	}
	step := rowStep(top, height)

	grid := make([][]byte, height)
	for r := range grid {
		grid[r] = []byte(strings.Repeat(" ", width))
	}
	for i, s := range series {
		for c, v := range cols[i] {
			if math.IsNaN(v) {
				continue
			}
			r := height - 1 - min(height-1, int(math.Round(v/step)))
			switch cell := &grid[r][c]; *cell {
			case ' ':
				*cell = s.Mark
			case s.Mark:
			case series[0].Mark:
				*cell = lower(s.Mark)
			default:
				*cell = overlapMark
			}
		}
	}
	for r, row := range grid {
		label := ""
		if (height-1-r)%2 == 0 {
			label = fmt.Sprintf("%.4g", step*float64(height-1-r))
		}
		fmt.Fprintf(w, "%5s |%s\n", label, row)
	}
	fmt.Fprintf(w, "%5s +%s\n", "", strings.Repeat("-", width))
	// Time labels at the start, the end and, if it fits, the middle.
	axis := []byte(strings.Repeat(" ", 7+width+4))
	used := make([]bool, len(axis))
	put := func(col int, label string) {
		at := min(max(0, 7+col-len(label)/2), len(axis)-len(label))
		for i := max(0, at-1); i < min(len(axis), at+len(label)+1); i++ {
			if used[i] {
				return
			}
		}
		copy(axis[at:], label)
		for i := at; i < at+len(label); i++ {
			used[i] = true
		}
	}
	put(0, "0s")
	put(width-1, fmt.Sprintf("%ds", n))
	put(width/2, fmt.Sprintf("%ds", n/2))
	fmt.Fprintf(w, "%s\n", strings.TrimRight(string(axis), " "))
	var legend []string
	for _, s := range series {
		legend = append(legend, fmt.Sprintf("%c %s", s.Mark, s.Name))
	}
	if len(series) > 1 {
		var on []string
		for _, s := range series[1:] {
			on = append(on, string(lower(s.Mark)))
		}
		legend = append(legend, fmt.Sprintf("%s on %s", strings.Join(on, ","), series[0].Name),
			fmt.Sprintf("%c overlap", overlapMark))
	}
	fmt.Fprintf(w, "%5s  %s   (one column = %s)\n", "", strings.Join(legend, "   "), perColumn(n, width))
}

// rowStep returns the value of one row for a chart of rows rows (rows-1 steps) whose highest
// value is top: the smallest 1, 1.5, 2, 2.5, 3, 4, 5 or 7.5 times a power of ten that fits.
func rowStep(top float64, rows int) float64 {
	need := max(top, 10) / float64(rows-1)
	p := math.Pow(10, math.Floor(math.Log10(need)))
	for _, m := range []float64{1, 1.5, 2, 2.5, 3, 4, 5, 7.5} {
		if m*p >= need {
			return m * p
		}
	}
	return 10 * p
}

func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func perColumn(seconds, width int) string {
	if seconds%width == 0 {
		return fmt.Sprintf("%ds", seconds/width)
	}
	return fmt.Sprintf("%.1fs", float64(seconds)/float64(width))
}
