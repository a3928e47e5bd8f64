package plan

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/sim/timing"
)

// Report is a plan's answer: statistics per point, fitted growth laws, knees and a summary.
// It is what `fleetsim plan -o json` prints; Results holds the raw runs, which
// `fleetsim plan merge` combines.
type Report struct {
	Plan     string `json:"plan"`
	File     string `json:"file"`
	Question string `json:"question,omitempty"`
	// Small: a --small run (a smoke test at the small: key's size); SmallQuestion: the
	// question is the plan's small.question, scaled to it.
	Small         bool `json:"small,omitempty"`
	SmallQuestion bool `json:"smallQuestion,omitempty"`
	// Warnings say what the numbers cannot show (seeds that change nothing).
	Warnings    []string  `json:"warnings,omitempty"`
	Seed        uint64    `json:"seed"`
	Repetitions int       `json:"repetitions"`
	Runs        int       `json:"runs"`
	Hub         *HubModel `json:"hub,omitempty"`
	// Calibration is the calibrated hub model's base calibration, before the plan's and the
	// sweep's constants (nil for the token bucket or no hub).
	Calibration *timing.Calibration `json:"calibration,omitempty"`
	X           string              `json:"x,omitempty"`
	// XDuration: the x values are durations (in seconds in fits and plots).
	XDuration bool          `json:"xDuration,omitempty"`
	Level     float64       `json:"confidenceLevel"`
	Points    []PointReport `json:"points"`
	Fits      []FitReport   `json:"fits,omitempty"`
	Knees     []KneeReport  `json:"knees,omitempty"`
	Summary   []string      `json:"summary"`
	// Seconds is the wall time the runs took (the longest shard's when merged).
	Seconds float64  `json:"seconds"`
	Results *Results `json:"results,omitempty"`

	metricNames []string
}

// PointReport is one point of the sweep.
type PointReport struct {
	Index  int               `json:"index"`
	Label  string            `json:"label"`
	Params map[string]string `json:"params"`
	// Group names the point's other parameters (all but X): fits run within a group.
	Group   string                `json:"group"`
	X       float64               `json:"x"`
	Runs    int                   `json:"runs"`
	Events  uint64                `json:"events"`
	Metrics map[string]MetricStat `json:"metrics"`
	Load    HubLoad               `json:"load"`
}

// MetricStat is a latency's quantiles over the pooled samples of a point's runs, in
// seconds, each with its confidence interval. A quantile is given only from enough samples
// (MinSamples): absent otherwise, since from fewer it is only the largest sample.
type MetricStat struct {
	Samples int       `json:"samples"`
	P50     *Estimate `json:"p50,omitempty"`
	P90     *Estimate `json:"p90,omitempty"`
	P99     *Estimate `json:"p99,omitempty"`
	Max     float64   `json:"max"`
}

// MinSamples is how many samples a q-quantile needs: 1/(1−q), rounded up (2 for the
// median, 10 for p90, 100 for p99), so that at least one sample lies above it.
func MinSamples(q float64) int { return int(math.Ceil(1/(1-q) - 1e-9)) }

// MinFitPoints is how many points a growth law or a knee is fitted from, at least: from
// fewer, any two-parameter curve fits and a knee is noise.
const MinFitPoints = 5

// HubLoad is the hub's load at a point: means over runs with confidence intervals.
type HubLoad struct {
	DecisionsPerSecond     Estimate            `json:"decisionsPerSecond"`
	DecisionsByController  map[string]float64  `json:"decisionsByController"`
	WritesPerSecond        Estimate            `json:"writesPerSecond"`
	PeakWritesPerSecond    Estimate            `json:"peakWritesPerSecond"`
	RequestsPerSecond      Estimate            `json:"requestsPerSecond"`
	PeakObjects            map[string]int      `json:"peakObjects"`
	PeakUnavailableMembers int                 `json:"peakUnavailableMembers"`
	Writes                 map[string]float64  `json:"writesByKind"`
	series                 []Sample            // repetition 0's series, for plots
	samples                map[string][]Sketch // per metric, per run
}

// FitReport is a growth law of a statistic against X within a group.
type FitReport struct {
	Group  string `json:"group"`
	Metric string `json:"metric"`
	Stat   string `json:"stat"`
	Fit    Fit    `json:"fit"`
}

// KneeReport is where a statistic starts growing faster.
type KneeReport struct {
	Group  string  `json:"group"`
	Metric string  `json:"metric"`
	X      float64 `json:"x"`
}

// metricNames lists the metrics in report order, each followed by its phases.
func metricNames(pl *Plan) []string {
	var out []string
	for _, m := range MetricOrder {
		out = append(out, m)
		for _, ph := range pl.Phases {
			out = append(out, m+"@"+ph.Name)
		}
	}
	return out
}

// Describe says what a metric measures (a phase's metric: within that phase).
func Describe(m string) string {
	base, phase, ok := strings.Cut(m, "@")
	if !ok {
		return MetricInfo[m]
	}
	return MetricInfo[base] + ", in phase " + phase
}

// LoadMetrics are the load statistics fitted and plotted against X.
var LoadMetrics = []string{"decisionsPerSecond", "writesPerSecond", "peakWritesPerSecond"}

// Build computes the report of a plan from its (merged) results.
func Build(pl *Plan, res *Results) (*Report, error) {
	if res.Plan != pl.Name || res.Seed != pl.Seed || res.Runs != pl.RunCount() {
		return nil, fmt.Errorf("the results are of plan %q (seed %d, %d runs), not of %s (seed %d, %d runs)", res.Plan, res.Seed, res.Runs, pl.Name, pl.Seed, pl.RunCount())
	}
	rep := &Report{Plan: pl.Name, File: pl.Path, Question: pl.Question, Small: pl.Small, SmallQuestion: pl.SmallQuestion, Seed: pl.Seed, Repetitions: pl.Repetitions, Runs: len(res.Results),
		Hub: pl.Hub, X: pl.X, Level: Level, Seconds: res.Seconds, Results: res, metricNames: metricNames(pl)}
	if pl.Hub != nil && pl.Hub.Model == Calibrated {
		rep.Calibration = pl.Calibration
		if rep.Calibration == nil {
			rep.Calibration = timing.Reference()
		}
	}
	byPoint := map[int][]RunResult{}
	for _, r := range res.Results {
		byPoint[r.Point] = append(byPoint[r.Point], r)
	}
	xi := -1
	for j, a := range pl.Sweep {
		if a.Name == pl.X {
			xi = j
			rep.XDuration = a.Values[0].Go == a.Values[0].Text && a.Values[0].IsNum
		}
	}
	for _, pt := range pl.Points() {
		runs := byPoint[pt.Index]
		if len(runs) == 0 {
			continue
		}
		pr := PointReport{Index: pt.Index, Label: pl.Label(pt), Params: map[string]string{}, Runs: len(runs), Metrics: map[string]MetricStat{}}
		var group []string
		for j, a := range pl.Sweep {
			pr.Params[a.Name] = pt.Values[j].Text
			if j == xi {
				pr.X = pt.Values[j].Num
			} else {
				group = append(group, a.Name+"="+pt.Values[j].Text)
			}
		}
		pr.Group = strings.Join(group, ", ")
		pr.Load = load(runs)
		for _, r := range runs {
			pr.Events += r.Events
		}
		for _, m := range metricNames(pl) {
			sks := pr.Load.samples[m]
			n := 0
			mx := math.Inf(-1)
			for _, s := range sks {
				n += s.N
				if len(s.Values) > 0 {
					mx = max(mx, s.Values[len(s.Values)-1])
				}
			}
			if n == 0 {
				continue
			}
			seed := pl.Seed + uint64(pt.Index)
			q := func(p float64) *Estimate {
				if n < MinSamples(p) {
					return nil
				}
				e := QuantileOverRuns(sks, p, seed)
				return &e
			}
			pr.Metrics[m] = MetricStat{Samples: n, P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: mx}
		}
		rep.Points = append(rep.Points, pr)
	}
	if w := sameRuns(byPoint, pl.Repetitions); w != "" {
		rep.Warnings = append(rep.Warnings, w)
	}
	if pl.X != "" {
		rep.fit()
	}
	rep.summarise(pl)
	return rep, nil
}

func load(runs []RunResult) HubLoad {
	l := HubLoad{DecisionsByController: map[string]float64{}, PeakObjects: map[string]int{}, Writes: map[string]float64{}, samples: map[string][]Sketch{}}
	var dec, wr, pk, rq []float64
	for _, r := range runs {
		dec = append(dec, r.DecisionsPerSecond["total"])
		wr = append(wr, r.WritesPerSecond)
		pk = append(pk, r.PeakWritesPerSecond)
		rq = append(rq, r.RequestsPerSecond)
		for k, v := range r.DecisionsPerSecond {
			if k != "total" {
				l.DecisionsByController[k] += v / float64(len(runs))
			}
		}
		for k, v := range r.PeakObjects {
			l.PeakObjects[k] = max(l.PeakObjects[k], v)
		}
		for k, v := range r.Writes {
			l.Writes[k] += float64(v) / float64(len(runs))
		}
		for _, s := range r.Series {
			l.PeakUnavailableMembers = max(l.PeakUnavailableMembers, s.UnavailableMembers)
		}
		if r.Rep == 0 {
			l.series = r.Series
		}
		for m, s := range r.Metrics {
			l.samples[m] = append(l.samples[m], s)
		}
	}
	l.DecisionsPerSecond, l.WritesPerSecond = MeanCI(dec, Level), MeanCI(wr, Level)
	l.PeakWritesPerSecond, l.RequestsPerSecond = MeanCI(pk, Level), MeanCI(rq, Level)
	return l
}

// groups lists the point groups in order, each with its points sorted by X.
func (r *Report) groups() [][]*PointReport {
	var order []string
	by := map[string][]*PointReport{}
	for i := range r.Points {
		p := &r.Points[i]
		if _, ok := by[p.Group]; !ok {
			order = append(order, p.Group)
		}
		by[p.Group] = append(by[p.Group], p)
	}
	var out [][]*PointReport
	for _, g := range order {
		ps := by[g]
		sort.SliceStable(ps, func(a, b int) bool { return ps[a].X < ps[b].X })
		out = append(out, ps)
	}
	return out
}

// loadValue reads a load statistic of a point.
func loadValue(p *PointReport, name string) float64 {
	switch name {
	case "decisionsPerSecond":
		return p.Load.DecisionsPerSecond.Value
	case "writesPerSecond":
		return p.Load.WritesPerSecond.Value
	case "peakWritesPerSecond":
		return p.Load.PeakWritesPerSecond.Value
	}
	return math.NaN()
}

func (r *Report) fit() {
	for _, ps := range r.groups() {
		if len(ps) < MinFitPoints {
			continue
		}
		series := map[string][]float64{}
		var names []string
		for _, m := range r.metricNames {
			ok := true
			for _, p := range ps {
				if st, has := p.Metrics[m]; !has || st.P90 == nil {
					ok = false
				}
			}
			if ok {
				names = append(names, m)
				for _, p := range ps {
					series[m] = append(series[m], p.Metrics[m].P90.Value)
				}
			}
		}
		for _, m := range LoadMetrics {
			names = append(names, m)
			for _, p := range ps {
				series[m] = append(series[m], loadValue(p, m))
			}
		}
		x := make([]float64, len(ps))
		for i, p := range ps {
			x[i] = p.X
		}
		for _, m := range names {
			stat := "p90"
			if slices.Contains(LoadMetrics, m) {
				stat = "mean"
			}
			if f, ok := BestFit(x, series[m]); ok {
				r.Fits = append(r.Fits, FitReport{Group: ps[0].Group, Metric: m, Stat: stat, Fit: f})
			}
			if k, ok := Knee(x, series[m]); ok {
				r.Knees = append(r.Knees, KneeReport{Group: ps[0].Group, Metric: m, X: k})
			}
		}
	}
}

// Seconds renders a duration in seconds for people.
func Seconds(s float64) string {
	switch {
	case s < 0:
		return "-" + Seconds(-s)
	case math.IsNaN(s):
		return "–"
	case s >= 3600:
		m := math.Round(s / 60)
		return fmt.Sprintf("%.0fh%02.0fm", math.Floor(m/60), math.Mod(m, 60))
	case s >= 120:
		s = math.Round(s)
		return fmt.Sprintf("%.0fm%02.0fs", math.Floor(s/60), math.Mod(s, 60))
	case s >= 10:
		return fmt.Sprintf("%.1fs", s)
	case s >= 1:
		return fmt.Sprintf("%.2fs", s)
	default:
		return fmt.Sprintf("%.0fms", s*1000)
	}
}

// EstimateText renders "31.2s (31.1s–31.4s)".
func EstimateText(e Estimate, unit func(float64) string) string {
	if e.Lo == e.Hi {
		return unit(e.Value)
	}
	return fmt.Sprintf("%s (%s–%s)", unit(e.Value), unit(e.Lo), unit(e.Hi))
}

// Rate renders a per-second rate.
func Rate(v float64) string {
	switch {
	case math.Abs(v) < 0.0005:
		return "0/s"
	case v < 0:
		return "-" + Rate(-v)
	case math.IsNaN(v):
		return "–"
	case v >= 100:
		return fmt.Sprintf("%.0f/s", v)
	case v >= 1:
		return fmt.Sprintf("%.1f/s", v)
	default:
		return fmt.Sprintf("%.3f/s", v)
	}
}

func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// FitText renders a fit in words: "linear law 21.8s + 0.063 s × members (R² 0.972)".
func FitText(f FitReport, x string, xDuration bool) string {
	unit, per := Seconds, " s"
	if slices.Contains(LoadMetrics, f.Metric) {
		unit, per = Rate, "/s"
	}
	xs := x
	if xDuration {
		xs = x + " (s)"
	}
	switch f.Fit.Law {
	case "power":
		return fmt.Sprintf("power law %.3g%s × %s^%.2f (R² %.3f)", f.Fit.A, per, xs, f.Fit.B, f.Fit.R2)
	case "constant":
		return fmt.Sprintf("constant %s (within 2%%)", unit(f.Fit.A))
	}
	sign, b := "+", f.Fit.B
	if b < 0 {
		sign, b = "−", -b
	}
	return fmt.Sprintf("linear law %s %s %.3g%s × %s (R² %.3f)", unit(f.Fit.A), sign, b, per, xs, f.Fit.R2)
}

// hubCapacity is the most decisions per second the plan's hub model allows (0 without a
// model, or when the sweep changes it): the client's qps over the calls per decision, and
// the workers over one decision's time.
func (r *Report) hubCapacity(pl *Plan) float64 {
	h := pl.Hub
	if h == nil || h.Model == Calibrated {
		return 0 // the calibrated model has no fixed rate: it follows the writes
	}
	for _, a := range pl.Sweep {
		if strings.HasPrefix(a.Name, "hub.") {
			return 0
		}
	}
	c := math.Inf(1)
	if h.CallsPerDecision > 0 {
		c = h.QPS / float64(h.CallsPerDecision)
	}
	if d := time.Duration(h.CallsPerDecision) * h.APILatency; d > 0 {
		c = min(c, float64(h.Workers)/d.Seconds())
	}
	if math.IsInf(c, 1) {
		return 0
	}
	return c
}

// headline are the metrics the summary speaks of, when measured.
var headline = []string{PlacementAvailable, RolloutDuration, StagedRunDuration, HubResync, MemberDetect, MemberMoved}

func (r *Report) summarise(pl *Plan) {
	var s []string
	switch {
	case r.Small:
		s = append(s, "SMALL RUN (--small, a smoke test): the sweep and repetitions of the plan's small: key, not its own; these numbers do not answer the plan's question at full size.")
		if r.Question != "" && r.SmallQuestion {
			s = append(s, "Question (scaled to the small run): "+r.Question)
		} else if r.Question != "" {
			s = append(s, "Question (asked of the full plan, not answered by this small run): "+r.Question)
		}
	case r.Question != "":
		s = append(s, "Question: "+r.Question)
	}
	for _, w := range r.Warnings {
		s = append(s, "WARNING: "+w)
	}
	for _, ps := range r.groups() {
		prefix := ""
		if ps[0].Group != "" {
			prefix = "With " + ps[0].Group + ": "
		}
		first, last := ps[0], ps[len(ps)-1]
		var heads []string
		for _, h := range headline {
			for _, m := range r.metricNames {
				if m == h || strings.HasPrefix(m, h+"@") {
					heads = append(heads, m)
				}
			}
		}
		for _, m := range heads {
			lm, ok := last.Metrics[m]
			if !ok {
				continue
			}
			if lm.P90 == nil {
				s = append(s, fmt.Sprintf("%s%s: %d sample(s) at %s, too few for a p90 (it needs %d); the largest is %s.", prefix, Describe(m), lm.Samples, last.Label, MinSamples(0.9), Seconds(lm.Max)))
				continue
			}
			text := fmt.Sprintf("%s%s: p90 %s", prefix, Describe(m), EstimateText(*lm.P90, Seconds))
			if len(ps) > 1 {
				if fm, ok := first.Metrics[m]; ok && fm.P90 != nil {
					text = fmt.Sprintf("%s%s: p90 %s at %s, %s at %s", prefix, Describe(m), Seconds(fm.P90.Value), first.Label, EstimateText(*lm.P90, Seconds), last.Label)
				}
			} else {
				text += " (" + last.Label + ")"
			}
			text += "."
			for _, f := range r.Fits {
				if f.Group == ps[0].Group && f.Metric == m {
					text += " Against " + r.X + " it follows a " + FitText(f, r.X, r.XDuration) + "."
				}
			}
			for _, k := range r.Knees {
				if k.Group == ps[0].Group && k.Metric == m {
					text += fmt.Sprintf(" Knee at %s=%s: beyond it, it grows faster.", r.X, num(k.X))
				}
			}
			s = append(s, text)
		}
		text := fmt.Sprintf("%sHub load: %s decisions and %s API writes on average (peak %s) at %s", prefix,
			Rate(first.Load.DecisionsPerSecond.Value), Rate(first.Load.WritesPerSecond.Value), Rate(first.Load.PeakWritesPerSecond.Value), first.Label)
		if len(ps) > 1 {
			text += fmt.Sprintf("; %s, %s (peak %s) at %s", Rate(last.Load.DecisionsPerSecond.Value), Rate(last.Load.WritesPerSecond.Value), Rate(last.Load.PeakWritesPerSecond.Value), last.Label)
		}
		text += "."
		if c := r.hubCapacity(pl); c > 0 {
			text += fmt.Sprintf(" The hub model decides at most %s; the busiest point uses %.0f%% of that on average.", Rate(c), 100*last.Load.DecisionsPerSecond.Value/c)
		}
		for _, f := range r.Fits {
			if f.Group == ps[0].Group && f.Metric == "writesPerSecond" {
				text += " API writes follow a " + FitText(f, r.X, r.XDuration) + "."
			}
		}
		s = append(s, text)
		if r.X != "" && len(ps) < MinFitPoints && len(ps) > 1 {
			s = append(s, fmt.Sprintf("%s%d points against %s: too few for a growth law or a knee (they need %d).", prefix, len(ps), r.X, MinFitPoints))
		}
		if r.X != "" && len(ps) >= MinFitPoints {
			kneeFound := false
			for _, k := range r.Knees {
				kneeFound = kneeFound || k.Group == ps[0].Group
			}
			if !kneeFound {
				s = append(s, fmt.Sprintf("%sNo knee in the range swept (%s from %s to %s): growth stays steady.", prefix, r.X, num(first.X), num(last.X)))
			}
		}
	}
	r.Summary = s
}

// sameRuns warns when the seeds change nothing: every point with several runs had them
// all alike (one trace hash), so the intervals over seeds are a point that says nothing
// of the spread. "" otherwise.
func sameRuns(byPoint map[int][]RunResult, reps int) string {
	if reps < 2 {
		return ""
	}
	multi := 0
	for _, runs := range byPoint {
		if len(runs) < 2 {
			continue
		}
		multi++
		for _, r := range runs[1:] {
			if r.TraceHash != runs[0].TraceHash {
				return ""
			}
		}
	}
	if multi == 0 {
		return ""
	}
	return fmt.Sprintf("the %d repetitions of every point are the same run (one trace hash per point): the seed changes nothing in this scenario (only a network model and random faults draw from it), so every interval collapses to a point and says nothing about the spread; use repetitions: 1, or give the scenario a network: model or faults:", reps)
}
