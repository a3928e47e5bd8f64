package plan

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	htmltemplate "html/template"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/scenarios/input"
)

// WriteJSON writes the report, with the raw results, as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

// WriteJSON writes a shard's results as indented JSON, as `fleetsim plan merge` reads them.
func (r *Results) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

// writeJSON encodes v as indented JSON whose text is safe on a terminal: encoding/json
// escapes control characters below U+0020 but writes DEL, the C1 controls (U+0080 to
// U+009F, which some terminals obey as escape sequences) and the bidirectional overrides
// as they are, and a plan's name, question and labels reach the report from its file. Those
// runes are written as \uXXXX escapes: the same JSON, only spelled safely.
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(terminalSafeJSON(b.Bytes()))
	return err
}

// terminalSafeJSON escapes, in encoded JSON, the runes a terminal may act on that
// encoding/json leaves raw. They can only be inside strings, where \uXXXX means them.
func terminalSafeJSON(b []byte) []byte {
	unsafe := func(r rune) bool {
		return r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x2028 || r == 0x2029 || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
	}
	if bytes.IndexFunc(b, unsafe) < 0 {
		return b
	}
	var out bytes.Buffer
	for _, r := range string(b) {
		if unsafe(r) {
			fmt.Fprintf(&out, "\\u%04x", r)
		} else {
			out.WriteRune(r)
		}
	}
	return out.Bytes()
}

// tables renders the report's tables as rows of cells: the caller formats them.
type table struct {
	title  string
	header []string
	rows   [][]string
}

func (r *Report) tables() []table {
	var out []table
	for _, m := range r.metricNames {
		t := table{title: Describe(m) + " (" + m + ")", header: []string{"point", "samples", "p50", "p90", "p99", "max"}}
		for _, p := range r.Points {
			st, ok := p.Metrics[m]
			if !ok {
				continue
			}
			t.rows = append(t.rows, []string{p.Label, fmt.Sprint(st.Samples), quantileText(st.P50, 0.5), quantileText(st.P90, 0.9), quantileText(st.P99, 0.99), Seconds(st.Max)})
		}
		if len(t.rows) > 0 {
			out = append(out, t)
		}
	}
	t := table{title: "Hub load (means over seeds, 95% intervals)", header: []string{"point", "decisions/s", "API writes/s", "peak writes/s", "hub client requests/s", "peak unavailable members"}}
	for _, p := range r.Points {
		rq := "–"
		if p.Load.RequestsPerSecond.Value > 0 {
			rq = EstimateText(p.Load.RequestsPerSecond, Rate)
		}
		t.rows = append(t.rows, []string{p.Label, EstimateText(p.Load.DecisionsPerSecond, Rate), EstimateText(p.Load.WritesPerSecond, Rate),
			EstimateText(p.Load.PeakWritesPerSecond, Rate), rq, fmt.Sprint(p.Load.PeakUnavailableMembers)})
	}
	out = append(out, t)
	ctrls := map[string]bool{}
	for _, p := range r.Points {
		for k, v := range p.Load.DecisionsByController {
			if v > 0 {
				ctrls[k] = true
			}
		}
	}
	names := slices.Sorted(maps.Keys(ctrls))
	t = table{title: "Hub decisions per second by controller (means over seeds)", header: append([]string{"point"}, names...)}
	for _, p := range r.Points {
		row := []string{p.Label}
		for _, n := range names {
			row = append(row, Rate(p.Load.DecisionsByController[n]))
		}
		t.rows = append(t.rows, row)
	}
	out = append(out, t)
	kinds := map[string]bool{}
	for _, p := range r.Points {
		for k := range p.Load.PeakObjects {
			kinds[k] = true
		}
	}
	names = slices.Sorted(maps.Keys(kinds))
	t = table{title: "Objects the hub's API server holds (peak over the run)", header: append([]string{"point"}, names...)}
	for _, p := range r.Points {
		row := []string{p.Label}
		for _, n := range names {
			row = append(row, fmt.Sprint(p.Load.PeakObjects[n]))
		}
		t.rows = append(t.rows, row)
	}
	out = append(out, t)
	if len(r.Fits) > 0 {
		t = table{title: "Growth laws against " + r.X + " (fits with R² ≥ 0.9)", header: []string{"group", "statistic", "law"}}
		for _, f := range r.Fits {
			t.rows = append(t.rows, []string{orAll(f.Group), f.Stat + " of " + f.Metric, FitText(f, r.X, r.XDuration)})
		}
		out = append(out, t)
	}
	return out
}

func orAll(g string) string {
	if g == "" {
		return "all"
	}
	return g
}

func (r *Report) setup() []string {
	s := []string{fmt.Sprintf("Plan `%s` (%s), seed %d, %d repetition(s) per point, %d run(s).", r.Plan, r.File, r.Seed, r.Repetitions, r.Runs)}
	if h := r.Hub; h != nil && h.Model == Calibrated && r.Calibration != nil {
		c := r.Calibration
		a := c.APIServer
		s = append(s, fmt.Sprintf("Hub model: calibrated (sim/timing), calibration of %s measured %s (load %s): %d workers; the API server %g cores, %g–%g ms of CPU a write by kind × %g with the informers watching, %g ms round trip; the hub %g ms a decision and %g ms a binding on the same cores.",
			c.Machine, c.MeasuredAt, c.Load, h.Workers, a.Cores.Value, min(a.BindingCreate.Value, a.WorkCreate.Value), max(a.BindingStatus.Value, a.WorkStatus.Value),
			a.Watched.Value, a.RoundTrip.Value, c.Hub.CPUPerDecision.Value, c.Hub.CPUPerBinding.Value))
		if len(h.Set) > 0 {
			var set []string
			for _, k := range slices.Sorted(maps.Keys(h.Set)) {
				set = append(set, fmt.Sprintf("%s %g", k, h.Set[k]))
			}
			s = append(s, "The plan sets "+strings.Join(set, ", ")+" (swept values override these).")
		}
	} else if h := r.Hub; h != nil {
		s = append(s, fmt.Sprintf("Hub model: %d workers; client limit %g requests/s, burst %d; %d API requests per decision at %s each (swept values override these).",
			h.Workers, h.QPS, h.Burst, h.CallsPerDecision, h.APILatency))
	} else {
		s = append(s, "Hub model: the simulator's fixed 100 ms per decision, no client rate limit (the plan sets no hub).")
	}
	s = append(s, "Quantiles pool every seed's samples; intervals are 95% percentile bootstraps over seeds (order-statistic intervals with one seed). Writes count each object create, update or status update once per instant, heartbeats included.")
	return s
}

// WriteMarkdown writes the report as Markdown; images are referenced by file name, so
// the caller writes the figures next to it.
func (r *Report) WriteMarkdown(w io.Writer, figs []Figure) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", r.title())
	for _, s := range r.setup() {
		b.WriteString(s + "\n")
	}
	b.WriteString("\n## Summary\n\n")
	for _, s := range r.Summary {
		b.WriteString("- " + s + "\n")
	}
	for _, f := range figs {
		fmt.Fprintf(&b, "\n![%s](%s)\n", f.Title, f.Name)
	}
	for _, t := range r.tables() {
		fmt.Fprintf(&b, "\n## %s\n\n| %s |\n|%s\n", t.title, strings.Join(t.header, " | "), strings.Repeat("---|", len(t.header)))
		for _, row := range t.rows {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
		}
	}
	// The plan's name, question and labels come from its file: no control characters.
	_, err := io.WriteString(w, input.Printable(b.String()))
	return err
}

// reportPage is the HTML report's template: html/template escapes every text for its
// context (the plan's name, question and labels come from its file).
var reportPage = htmltemplate.Must(htmltemplate.New("report").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>body{font-family:sans-serif;max-width:70em;margin:auto}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child{text-align:left}</style></head><body>
<h1>{{.Title}}</h1>
{{range .Setup}}<p>{{.}}</p>
{{end}}<h2>Summary</h2>
<ul>
{{range .Summary}}<li>{{.}}</li>
{{end}}</ul>
{{range .Figures}}<figure><img alt="{{.Title}}" src="{{.Src}}"><figcaption>{{.Title}}</figcaption></figure>
{{end}}{{range .Tables}}<h2>{{.Title}}</h2>
<table><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}</body></html>
`))

// title is the report's title; a --small run says so.
func (r *Report) title() string {
	t := "Capacity plan: " + r.Plan
	if r.Small {
		t += " (small run: a smoke test, not the full plan)"
	}
	return t
}

// WriteHTML writes the report as one HTML page with the figures embedded.
func (r *Report) WriteHTML(w io.Writer, figs []Figure) error {
	type figure struct {
		Title string
		Src   htmltemplate.URL // a data: URL the page builds itself, not text from the plan
	}
	type tbl struct {
		Title  string
		Header []string
		Rows   [][]string
	}
	data := struct {
		Title          string
		Setup, Summary []string
		Figures        []figure
		Tables         []tbl
	}{Title: r.title(), Summary: r.Summary}
	for _, s := range r.setup() {
		data.Setup = append(data.Setup, strings.ReplaceAll(s, "`", ""))
	}
	for _, f := range figs {
		data.Figures = append(data.Figures, figure{Title: f.Title, Src: htmltemplate.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(f.PNG))})
	}
	for _, t := range r.tables() {
		data.Tables = append(data.Tables, tbl{Title: t.title, Header: t.header, Rows: t.rows})
	}
	var b strings.Builder
	if err := reportPage.Execute(&b, data); err != nil {
		return err
	}
	// The plan's name, question and labels come from its file: no control characters.
	_, err := io.WriteString(w, input.Printable(b.String()))
	return err
}

// quantileText renders a quantile, or says how many samples it would need.
func quantileText(e *Estimate, q float64) string {
	if e == nil {
		return fmt.Sprintf("– (needs %d samples)", MinSamples(q))
	}
	return EstimateText(*e, Seconds)
}
