package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
)

// style is how a system's line is drawn.
type style struct{ color, dash string }

var styles = map[string]style{
	"naive":                 {"#d62728", ""},
	"failsafe_retry_budget": {"#9467bd", ""},
	"grpc_throttling":       {"#8c564b", "6 3"},
	"aws_standard":          {"#ff7f0e", "6 3"},
	"toolmw_fixed":          {"#17becf", "2 3"},
	"toolmw_adaptive":       {"#1f77b4", ""},
	"toolmw":                {"#2ca02c", ""},
}

// The charts' geometry, in pixels.
const (
	chartWidth  = 860
	panelHeight = 230
	marginLeft  = 60
	marginRight = 20
	legendRow   = 22
	plotTop     = 30 // within a panel
	plotHeight  = 160
	yMax        = 320 // attempts per window
)

// svgWriter writes an SVG document.
type svgWriter struct{ *bufio.Writer }

func (s svgWriter) p(format string, args ...any) { fmt.Fprintf(s, format, args...) }

func (s svgWriter) open(height int) {
	s.p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartWidth, height, chartWidth, height)
	s.p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
}

// legend draws one entry per system, wrapping into rows, and returns the
// height it took.
func (s svgWriter) legend() int {
	x, y := float64(marginLeft), legendRow
	for _, sys := range systems {
		width := 44 + 7.5*float64(len(sys.name))
		if x+width > chartWidth-marginRight {
			x, y = marginLeft, y+legendRow
		}
		st := styles[sys.name]
		s.p(`<line x1="%.0f" y1="%d" x2="%.0f" y2="%d" stroke="%s" stroke-width="2.5"%s/>`+"\n", x, y-4, x+28, y-4, st.color, dash(st.dash))
		s.p(`<text x="%.0f" y="%d">%s</text>`+"\n", x+34, y, sys.name)
		x += width
	}
	return y + legendRow/2
}

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
	plotWidth := float64(chartWidth - marginLeft - marginRight)

	s := svgWriter{bufio.NewWriter(w)}
	s.open(legendHeight() + len(outages)*panelHeight)
	legendSpace := s.legend()

	for i, panel := range outages {
		sc := panel[0].sc
		top := float64(legendSpace + i*panelHeight + plotTop)
		bottom := top + plotHeight
		windows := (sc.calls + window - 1) / window
		xOf := func(k float64) float64 { return marginLeft + k/float64(windows)*plotWidth }
		yOf := func(v int) float64 { return bottom - float64(min(v, yMax))/yMax*plotHeight }

		s.p(`<text x="%d" y="%.0f" font-weight="bold">%s calls/s: dependency down for calls %d–%d (%s of virtual time)</text>`+"\n",
			marginLeft, top-10, rate(sc.rate), sc.down[0], sc.down[1]-1, sc.arrival(sc.down[1])-sc.arrival(sc.down[0]))
		s.p(`<rect x="%.1f" y="%.0f" width="%.1f" height="%d" fill="#eeeeee"/>`+"\n",
			xOf(float64(sc.down[0]/window)), top, xOf(float64(sc.down[1]/window))-xOf(float64(sc.down[0]/window)), plotHeight)
		for _, v := range []int{0, 100, 200, 300} {
			s.p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#cccccc"/>`+"\n", marginLeft, yOf(v), chartWidth-marginRight, yOf(v))
			s.p(`<text x="%d" y="%.1f" text-anchor="end">%d</text>`+"\n", marginLeft-6, yOf(v)+4, v)
		}
		s.p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#2ca02c" stroke-dasharray="3 3"/>`+"\n",
			marginLeft, yOf(windowMax), chartWidth-marginRight, yOf(windowMax))
		s.p(`<text x="%d" y="%.1f" text-anchor="end" fill="#2ca02c">target %d</text>`+"\n", chartWidth-marginRight, yOf(windowMax)-4, windowMax)
		for k := 0; k <= windows; k += 5 {
			s.p(`<text x="%.1f" y="%.0f" text-anchor="middle">%d</text>`+"\n", xOf(float64(k)), bottom+16, k*window)
		}
		s.p(`<text x="%.1f" y="%.0f" text-anchor="middle">call (by arrival)</text>`+"\n", xOf(float64(windows)/2), bottom+32)
		s.p(`<text x="14" y="%.0f" transform="rotate(-90 14 %.0f)" text-anchor="middle">attempts per %d calls</text>`+"\n",
			top+plotHeight/2, top+plotHeight/2, window)

		// Solid lines first, so that a dashed one on the same values shows.
		for _, dashed := range []bool{false, true} {
			for _, r := range panel {
				st := styles[r.system]
				if (st.dash != "") != dashed {
					continue
				}
				var pts strings.Builder
				for k, v := range r.windows() {
					fmt.Fprintf(&pts, "%.1f,%.1f ", xOf(float64(k)+0.5), yOf(v))
				}
				s.p(`<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n",
					st.color, dash(st.dash), strings.TrimSpace(pts.String()))
			}
		}
	}
	s.p("</svg>\n")
	return s.Flush()
}

// legendHeight is the height legend will take.
func legendHeight() int {
	rows, x := 1, float64(marginLeft)
	for _, sys := range systems {
		width := 44 + 7.5*float64(len(sys.name))
		if x+width > chartWidth-marginRight {
			rows, x = rows+1, marginLeft
		}
		x += width
	}
	return rows*legendRow + legendRow/2
}

// The metastable chart's geometry.
const (
	metaPanel  = 175 // height of one system's panel
	metaPlot   = 120
	metaTop    = 26
	metaYMax   = 250 // per second
	loadColor  = "#d62728"
	goodColor  = "#2ca02c"
	guideColor = "#888888"
)

// metastableChart writes an SVG chart of the metastable scenario: a panel
// per system with, second by second, the attempts reaching the dependency
// and the calls that succeeded (by arrival), against the offered load and
// the dependency's capacity, the trigger shaded.
func metastableChart(w io.Writer, results []result) error {
	var runs []result
	for _, r := range results {
		if r.sc.metastable() {
			runs = append(runs, r)
		}
	}
	s := svgWriter{bufio.NewWriter(w)}
	const head = 44
	s.open(head + len(runs)*metaPanel)
	s.p(`<line x1="%d" y1="18" x2="%d" y2="18" stroke="%s" stroke-width="2.5"/><text x="%d" y="22">dependency load: attempts reaching it per second</text>`+"\n",
		marginLeft, marginLeft+28, loadColor, marginLeft+34)
	s.p(`<line x1="%d" y1="18" x2="%d" y2="18" stroke="%s" stroke-width="2.5"/><text x="%d" y="22">goodput: calls per second that succeed (by arrival)</text>`+"\n",
		marginLeft+370, marginLeft+398, goodColor, marginLeft+404)
	s.p(`<line x1="%d" y1="36" x2="%d" y2="36" stroke="%s" stroke-dasharray="4 3"/><text x="%d" y="40">offered calls per second; dotted: the dependency's capacity; shaded: the trigger</text>`+"\n",
		marginLeft, marginLeft+28, guideColor, marginLeft+34)

	plotWidth := float64(chartWidth - marginLeft - marginRight)
	for i, r := range runs {
		sc, o := r.sc, r.sc.overload
		end := float64(sc.calls) / sc.rate // seconds of arrivals
		top := float64(head + i*metaPanel + metaTop)
		bottom := top + metaPlot
		xOf := func(sec float64) float64 { return marginLeft + sec/end*plotWidth }
		yOf := func(v float64) float64 { return bottom - min(v, metaYMax)/metaYMax*metaPlot }
		st := r.metastable()

		s.p(`<text x="%d" y="%.0f" font-weight="bold">%s: peak load during the trigger %.2f× offered; goodput ≥ 95%% again %s</text>`+"\n",
			marginLeft, top-8, r.system, st.peak, recoveredText(st))
		t0, t1 := o.trigger[0].Seconds(), o.trigger[1].Seconds()
		s.p(`<rect x="%.1f" y="%.0f" width="%.1f" height="%d" fill="#eeeeee"/>`+"\n", xOf(t0), top, xOf(t1)-xOf(t0), metaPlot)
		for _, v := range []float64{0, 100, 200} {
			s.p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#dddddd"/>`+"\n", marginLeft, yOf(v), chartWidth-marginRight, yOf(v))
			s.p(`<text x="%d" y="%.1f" text-anchor="end">%.0f</text>`+"\n", marginLeft-6, yOf(v)+4, v)
		}
		for sec := 0.0; sec <= end; sec += 20 {
			s.p(`<text x="%.1f" y="%.0f" text-anchor="middle">%.0f s</text>`+"\n", xOf(sec), bottom+17, sec)
		}
		s.p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-dasharray="4 3"/>`+"\n",
			marginLeft, yOf(sc.rate), chartWidth-marginRight, yOf(sc.rate), guideColor)
		capY, trigY := yOf(o.capacity()), yOf(o.capacity()/o.slowdown)
		s.p(`<polyline fill="none" stroke="%s" stroke-dasharray="1 3" points="%d,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f %d,%.1f"/>`+"\n",
			guideColor, marginLeft, capY, xOf(t0), capY, xOf(t0), trigY, xOf(t1), trigY, xOf(t1), capY, chartWidth-marginRight, capY)

		_, succeeded := r.goodput()
		// The load is drawn wider, under the goodput, so both show where
		// they are equal.
		s.series(r.load, xOf, yOf, end, loadColor, 3.5)
		s.series(succeeded, xOf, yOf, end, goodColor, 1.5)
	}
	s.p("</svg>\n")
	return s.Flush()
}

// series draws per-second values as a line, up to end seconds.
func (s svgWriter) series(v []int, xOf, yOf func(float64) float64, end float64, color string, width float64) {
	var pts strings.Builder
	for sec, n := range v {
		if float64(sec) >= end {
			break
		}
		fmt.Fprintf(&pts, "%.1f,%.1f ", xOf(float64(sec)+0.5), yOf(float64(n)))
	}
	s.p(`<polyline fill="none" stroke="%s" stroke-width="%.1f" points="%s"/>`+"\n", color, width, strings.TrimSpace(pts.String()))
}

func recoveredText(st metaStats) string {
	if !st.recovered {
		return "never"
	}
	return fmt.Sprintf("%d s after the trigger", int(st.recovery/time.Second))
}

func dash(d string) string {
	if d == "" {
		return ""
	}
	return fmt.Sprintf(` stroke-dasharray="%s"`, d)
}
