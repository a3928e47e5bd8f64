package plan

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is one rendered plot.
type Figure struct {
	// Name is the image's file name (name.png), Title what it shows.
	Name  string
	Title string
	PNG   []byte
}

// Plot sizes: small enough that a report's images stay a few tens of kilobytes.
const (
	plotWidth  = 6.5 * vg.Inch
	plotHeight = 3.6 * vg.Inch
	// maxCurves is the most lines one plot draws (points of a sweep beyond it are thinned).
	maxCurves = 8
)

// Figures draws the report's plots: latency against X (p50 and p90 with intervals), the
// CDF of the per-cluster latency at each point, hub load against X, and available
// clusters and unavailable members over time.
func (r *Report) Figures() ([]Figure, error) {
	var out []Figure
	add := func(name, title string, p *plot.Plot, err error) error {
		if err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		if p == nil {
			return nil
		}
		wt, err := p.WriterTo(plotWidth, plotHeight, "png")
		if err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		var b bytes.Buffer
		if _, err := wt.WriteTo(&b); err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		out = append(out, Figure{Name: name + ".png", Title: title, PNG: b.Bytes()})
		return nil
	}
	if r.X != "" {
		p, err := r.latencyPlot()
		if err := add("latency", "Latency against "+r.X+" (p90 solid, p50 dashed; bars: 95% interval of p90)", p, err); err != nil {
			return nil, err
		}
		p, err = r.loadPlot()
		if err := add("hub-load", "Hub load against "+r.X+" (means over seeds; bars: 95% interval)", p, err); err != nil {
			return nil, err
		}
	}
	p, err := r.cdfPlot()
	if err := add("cdf", "CDF of the per-sample latency at each point (all seeds pooled)", p, err); err != nil {
		return nil, err
	}
	p, err = r.seriesPlot()
	if err := add("availability", "Available placement-clusters (solid) and unavailable members (dashed) over time, first seed", p, err); err != nil {
		return nil, err
	}
	return out, nil
}

func (r *Report) xLabel() string {
	if r.XDuration {
		return r.X + " (seconds)"
	}
	return r.X
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p
}

func lineStyle(i int, dashed bool) draw.LineStyle {
	ls := draw.LineStyle{Color: plotutil.Color(i), Width: vg.Points(1.5)}
	if dashed {
		ls.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	return ls
}

// addCurve draws a line through xs, ys with error bars lo..hi when given.
func addCurve(p *plot.Plot, label string, i int, dashed bool, xs, ys, lo, hi []float64) error {
	pts := make(plotter.XYs, 0, len(xs))
	errs := plotter.YErrors{}
	for k := range xs {
		if math.IsNaN(ys[k]) {
			continue
		}
		pts = append(pts, plotter.XY{X: xs[k], Y: ys[k]})
		if lo != nil {
			errs = append(errs, struct{ Low, High float64 }{ys[k] - lo[k], hi[k] - ys[k]})
		}
	}
	if len(pts) == 0 {
		return nil
	}
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	l.LineStyle = lineStyle(i, dashed)
	s.GlyphStyle.Color = plotutil.Color(i)
	s.GlyphStyle.Radius = vg.Points(2)
	p.Add(l, s)
	if label != "" {
		p.Legend.Add(label, l)
	}
	if lo != nil {
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{pts, errs})
		if err != nil {
			return err
		}
		eb.LineStyle.Color = plotutil.Color(i)
		p.Add(eb)
	}
	return nil
}

func (r *Report) latencyPlot() (*plot.Plot, error) {
	gs := r.groups()
	var metrics []string
	for _, m := range r.metricNames {
		base, _, _ := strings.Cut(m, "@")
		if base == ClusterScheduled || base == PlacementScheduled || base == PlacementApplied || base == ClusterApplied || base == ClusterAvailable {
			continue // shown in the tables; the plot keeps to what planners ask first
		}
		for _, ps := range gs {
			if _, ok := ps[len(ps)-1].Metrics[m]; ok && !slices.Contains(metrics, m) {
				metrics = append(metrics, m)
			}
		}
	}
	if len(metrics) == 0 {
		return nil, nil
	}
	p := newPlot("Latency against "+r.X, r.xLabel(), "seconds")
	i := 0
	for _, ps := range gs {
		for _, m := range metrics {
			if i >= maxCurves {
				break
			}
			var xs, p50, p90, lo, hi []float64
			for _, pt := range ps {
				st, ok := pt.Metrics[m]
				if !ok || st.P50 == nil || st.P90 == nil {
					continue
				}
				xs = append(xs, pt.X)
				p50, p90 = append(p50, st.P50.Value), append(p90, st.P90.Value)
				lo, hi = append(lo, st.P90.Lo), append(hi, st.P90.Hi)
			}
			label := m
			if ps[0].Group != "" {
				label += " (" + ps[0].Group + ")"
			}
			if err := addCurve(p, label, i, false, xs, p90, lo, hi); err != nil {
				return nil, err
			}
			if err := addCurve(p, "", i, true, xs, p50, nil, nil); err != nil {
				return nil, err
			}
			i++
		}
	}
	return p, nil
}

func (r *Report) loadPlot() (*plot.Plot, error) {
	p := newPlot("Hub load against "+r.X, r.xLabel(), "per second")
	i := 0
	for _, ps := range r.groups() {
		for _, m := range []string{"decisionsPerSecond", "writesPerSecond"} {
			if i >= maxCurves {
				break
			}
			var xs, ys, lo, hi []float64
			for _, pt := range ps {
				e := pt.Load.DecisionsPerSecond
				if m == "writesPerSecond" {
					e = pt.Load.WritesPerSecond
				}
				xs, ys, lo, hi = append(xs, pt.X), append(ys, e.Value), append(lo, e.Lo), append(hi, e.Hi)
			}
			label := map[string]string{"decisionsPerSecond": "hub decisions/s", "writesPerSecond": "API writes/s"}[m]
			if ps[0].Group != "" {
				label += " (" + ps[0].Group + ")"
			}
			if err := addCurve(p, label, i, false, xs, ys, lo, hi); err != nil {
				return nil, err
			}
			i++
		}
	}
	return p, nil
}

// thin picks at most n points, evenly, always keeping the first and the last.
func thin[T any](xs []T, n int) []T {
	if len(xs) <= n {
		return xs
	}
	out := make([]T, 0, n)
	for k := range n {
		out = append(out, xs[k*(len(xs)-1)/(n-1)])
	}
	return out
}

func (r *Report) cdfPlot() (*plot.Plot, error) {
	metric := ""
	for _, m := range []string{ClusterAvailable, PlacementAvailable, StagedRunDuration, RolloutDuration, ClusterApplied, HubResync, MemberDetect} {
		for _, pt := range r.Points {
			if _, ok := pt.Metrics[m]; ok && metric == "" {
				metric = m
			}
		}
	}
	if metric == "" {
		return nil, nil
	}
	p := newPlot("CDF: "+Describe(metric), "seconds", "fraction")
	pts := make([]*PointReport, 0, len(r.Points))
	for i := range r.Points {
		if _, ok := r.Points[i].Metrics[metric]; ok {
			pts = append(pts, &r.Points[i])
		}
	}
	for i, pt := range thin(pts, maxCurves) {
		sks := pt.Load.samples[metric]
		var xy plotter.XYs
		for k := 0; k <= 100; k++ {
			q := float64(k) / 100
			xy = append(xy, plotter.XY{X: pooledQuantile(sks, nil, q), Y: q})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.LineStyle = lineStyle(i, false)
		p.Add(l)
		p.Legend.Add(pt.Label, l)
	}
	p.Legend.Left = false
	p.Legend.Top = false
	return p, nil
}

func (r *Report) seriesPlot() (*plot.Plot, error) {
	pts := make([]*PointReport, 0, len(r.Points))
	for i := range r.Points {
		if len(r.Points[i].Load.series) > 0 {
			pts = append(pts, &r.Points[i])
		}
	}
	if len(pts) == 0 {
		return nil, nil
	}
	p := newPlot("Availability over time", "minutes", "count")
	for i, pt := range thin(pts, maxCurves) {
		var av, un plotter.XYs
		for _, s := range thin(pt.Load.series, 400) {
			av = append(av, plotter.XY{X: s.T / 60, Y: float64(s.AvailableClusters)})
			un = append(un, plotter.XY{X: s.T / 60, Y: float64(s.UnavailableMembers)})
		}
		la, err := plotter.NewLine(av)
		if err != nil {
			return nil, err
		}
		la.LineStyle = lineStyle(i, false)
		lu, err := plotter.NewLine(un)
		if err != nil {
			return nil, err
		}
		lu.LineStyle = lineStyle(i, true)
		p.Add(la, lu)
		p.Legend.Add(pt.Label, la)
	}
	p.Legend.Left = false
	p.Legend.Top = false
	return p, nil
}
