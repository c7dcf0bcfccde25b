package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// style is how a system's line is drawn.
type style struct{ color, dash string }

var styles = map[string]style{
	"naive":                 {"#d62728", ""},
	"failsafe_retry":        {"#ff7f0e", "6 4"},
	"failsafe_retry_budget": {"#9467bd", ""},
	"toolmw_retry":          {"#1f77b4", "2 3"},
	"toolmw":                {"#2ca02c", ""},
}

// The chart's geometry, in pixels.
const (
	chartWidth  = 860
	panelHeight = 230
	marginLeft  = 60
	marginRight = 20
	legendSpace = 40
	plotTop     = 30 // within a panel
	plotHeight  = 160
	yMax        = 320 // attempts per window
)

// chart writes an SVG chart of the outage scenarios: for each call rate, a
// panel with the attempts reaching the dependency in each window of calls,
// one line per system, the outage shaded.
func chart(w io.Writer, results []result) error {
	var outages [][]result // by rate, in the order of rates
	for _, r := range results {
		if !r.sc.outage() {
			continue
		}
		if n := len(outages); n == 0 || outages[n-1][0].sc.rate != r.sc.rate {
			outages = append(outages, nil)
		}
		outages[len(outages)-1] = append(outages[len(outages)-1], r)
	}
	height := legendSpace + len(outages)*panelHeight
	plotWidth := float64(chartWidth - marginLeft - marginRight)

	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartWidth, height, chartWidth, height)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")

	// The legend.
	x := float64(marginLeft)
	for _, sys := range systems {
		st := styles[sys.name]
		p(`<line x1="%.0f" y1="20" x2="%.0f" y2="20" stroke="%s" stroke-width="2.5"%s/>`+"\n", x, x+28, st.color, dash(st.dash))
		p(`<text x="%.0f" y="24">%s</text>`+"\n", x+34, sys.name)
		x += 44 + 7.5*float64(len(sys.name))
	}

	for i, panel := range outages {
		sc := panel[0].sc
		top := float64(legendSpace + i*panelHeight + plotTop)
		bottom := top + plotHeight
		windows := (sc.calls + window - 1) / window
		xOf := func(k float64) float64 { return marginLeft + k/float64(windows)*plotWidth }
		yOf := func(v int) float64 { return bottom - float64(min(v, yMax))/yMax*plotHeight }

		p(`<text x="%d" y="%.0f" font-weight="bold">%s calls/s: dependency down for calls %d–%d (%s of virtual time)</text>`+"\n",
			marginLeft, top-10, rate(sc.rate), sc.down[0], sc.down[1]-1, sc.arrival(sc.down[1])-sc.arrival(sc.down[0]))
		p(`<rect x="%.1f" y="%.0f" width="%.1f" height="%d" fill="#eeeeee"/>`+"\n",
			xOf(float64(sc.down[0]/window)), top, xOf(float64(sc.down[1]/window))-xOf(float64(sc.down[0]/window)), plotHeight)
		for _, v := range []int{0, 100, 200, 300} {
			p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#cccccc"/>`+"\n", marginLeft, yOf(v), chartWidth-marginRight, yOf(v))
			p(`<text x="%d" y="%.1f" text-anchor="end">%d</text>`+"\n", marginLeft-6, yOf(v)+4, v)
		}
		p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#2ca02c" stroke-dasharray="3 3"/>`+"\n",
			marginLeft, yOf(windowMax), chartWidth-marginRight, yOf(windowMax))
		p(`<text x="%d" y="%.1f" text-anchor="end" fill="#2ca02c">target %d</text>`+"\n", chartWidth-marginRight, yOf(windowMax)-4, windowMax)
		for k := 0; k <= windows; k += 5 {
			p(`<text x="%.1f" y="%.0f" text-anchor="middle">%d</text>`+"\n", xOf(float64(k)), bottom+16, k*window)
		}
		p(`<text x="%.1f" y="%.0f" text-anchor="middle">call (by arrival)</text>`+"\n", xOf(float64(windows)/2), bottom+32)
		p(`<text x="14" y="%.0f" transform="rotate(-90 14 %.0f)" text-anchor="middle">attempts per %d calls</text>`+"\n",
			top+plotHeight/2, top+plotHeight/2, window)

		for _, r := range panel {
			st := styles[r.system]
			var pts strings.Builder
			for k, v := range r.windows() {
				fmt.Fprintf(&pts, "%.1f,%.1f ", xOf(float64(k)+0.5), yOf(v))
			}
			p(`<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n",
				st.color, dash(st.dash), strings.TrimSpace(pts.String()))
		}
	}
	p("</svg>\n")
	return bw.Flush()
}

func dash(d string) string {
	if d == "" {
		return ""
	}
	return fmt.Sprintf(` stroke-dasharray="%s"`, d)
}
