package plan

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/scenarios/input"
)

// where is the part of a *scenarios.Error the bound tests compare with cmp.Diff, and a
// piece of its reason.
type where struct {
	Line   int
	Field  string
	Reason string // a substring of the reason
}

// refused parses text as a plan (path "p.yaml") and returns where it was refused.
func refused(t *testing.T, text string, o ParseOptions) where {
	t.Helper()
	start := time.Now()
	_, err := ParseWith("p.yaml", []byte(text), o)
	// A bound against hanging, not a performance figure (a loaded CI machine is slow).
	if d := time.Since(start); d > time.Minute {
		t.Errorf("refusing took %s: a bound is not bounding", d)
	}
	var se *scenarios.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a *scenarios.Error", err)
	}
	return where{Line: se.Line, Field: se.Field, Reason: se.Reason}
}

// checkRefused compares got with want: line and field exactly, want.Reason a substring.
func checkRefused(t *testing.T, want, got where) {
	t.Helper()
	if !strings.Contains(got.Reason, want.Reason) {
		t.Errorf("reason %q lacks %q", got.Reason, want.Reason)
	}
	got.Reason = want.Reason
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("refused at (-want +got):\n%s", d)
	}
}

// scenarioPlan is a plan whose inline template is body (lines from line 4 of the plan).
func scenarioPlan(body string) string {
	return "name: p\nscenario: |\n  name: s\n" + indent(body)
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// TestTemplateBounds: a template that would loop forever, recurse without end, overflow
// or render gigabytes is stopped and refused at its line, quickly.
func TestTemplateBounds(t *testing.T) {
	low := ParseOptions{maxSteps: 1000}
	for _, tc := range []struct {
		name string
		body string
		opts ParseOptions
		want where
	}{
		{"seq over the whole int range overflows no size check", "duration: 1m\n# {{range seq -9223372036854775807 9223372036854775807}}{{.}}{{end}}",
			ParseOptions{}, where{5, "scenario", "seq -9223372036854775807 9223372036854775807: 1.84e+19 values, more than the 999,999 steps left"}},
		{"seq from the least int", "duration: 1m\n# {{range seq -9223372036854775808 9223372036854775807}}{{.}}{{end}}",
			ParseOptions{}, where{5, "scenario", "1.84e+19 values"}},
		{"seq over the budget", "duration: 1m\n# {{range seq 1 2000000}}{{end}}",
			ParseOptions{}, where{5, "scenario", "seq 1 2000000: 2,000,000 values, more than the 999,999 steps left of the 1,000,000 a render may take (MaxTemplateSteps)"}},
		{"nested ranges that write nothing", "duration: 1m\n{{- range 1000000}}\n{{- range 1000000}}{{end}}{{end}}",
			low, where{6, "scenario", "takes more than 1,000 steps (MaxTemplateSteps"}},
		{"a template calling itself twice", "duration: 1m\n{{- define \"x\"}}{{if lt . 60}}{{template \"x\" (add . 1)}}{{template \"x\" (add . 1)}}{{end}}{{end}}\n{{- template \"x\" 0}}",
			low, where{5, "scenario", "takes more than 1,000 steps"}},
		{"the scenario template calling itself", "{{- if eq (printf \"%T\" .) \"int\"}}{{template \"scenario\" .}}{{template \"scenario\" .}}{{else}}duration: 1m{{template \"scenario\" 0}}{{end}}",
			low, where{3, "scenario", "takes more than 1,000 steps"}},
		{"a loop that renders gigabytes", "duration: 1m\n# {{range 1000000}}{{\"" + strings.Repeat("x", 1000) + "\"}}{{end}}",
			ParseOptions{}, where{3, "scenario", "renders more than 8,388,608 bytes (MaxRenderedBytes)"}},
		{"printf widths of gigabytes", "duration: 1m\n# {{printf \"" + strings.Repeat("%1000000d", 1000) + "\" 1}}",
			ParseOptions{}, where{5, "scenario", "printf: the result could be 1,000,009,032 bytes or more, over the 8,388,608 a rendered scenario may have (MaxRenderedBytes)"}},
		{"straight-line doubling", "duration: 1m\n{{- $x := \"xxxxxxxx\"}}" + strings.Repeat("{{$x = printf \"%s%s\" $x $x}}", 64) + "\n# {{$x}}",
			ParseOptions{}, where{5, "scenario", "printf: the result could be"}},
		{"straight-line doubling by print", "duration: 1m\n{{- $x := \"xxxxxxxx\"}}" + strings.Repeat("{{$x = print $x $x}}", 64) + "\n# {{$x}}",
			ParseOptions{}, where{5, "scenario", "print: the result could be"}},
		{"add overflows", "duration: 1m\n# {{add 9223372036854775807 1}}", ParseOptions{}, where{5, "scenario", "add 9223372036854775807 1: overflows an integer"}},
		{"sub overflows", "duration: 1m\n# {{sub -9223372036854775807 2}}", ParseOptions{}, where{5, "scenario", "overflows an integer"}},
		{"mul overflows", "duration: 1m\n# {{mul 4294967296 4294967296}}", ParseOptions{}, where{5, "scenario", "mul 4294967296 4294967296: overflows an integer"}},
		{"div overflows", "duration: 1m\n# {{div (sub -9223372036854775807 1) -1}}", ParseOptions{}, where{5, "scenario", "overflows an integer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRefused(t, tc.want, refused(t, scenarioPlan(tc.body), tc.opts))
		})
	}
}

// TestTemplateWithinBounds: what the bounds allow renders as before: seq at the largest
// int ends (it looped for ever when i++ wrapped), loops and helpers count without changing
// the text, and the checked arithmetic gives Go's results.
func TestTemplateWithinBounds(t *testing.T) {
	body := `duration: 1m
# {{range seq 9223372036854775807 9223372036854775807}}{{.}}{{end}}
# {{range seq -9223372036854775808 -9223372036854775808}}{{.}}{{end}}
# {{range $i := seq 1 3}}{{$i}},{{end}}{{range 2}}r{{end}}{{range seq 3 1}}never{{else}}empty{{end}}
{{- define "x"}}[{{.}}]{{end}}
# {{template "x" 7}} {{add 2 3}} {{sub 2 3}} {{mul -3 4}} {{div -7 2}} {{mod -7 2}} {{mul -1 -9223372036854775807}} {{printf "%03d|%s" 7 "a"}} {{print 1 "b"}} {{html "<&>"}} {{urlquery "a b"}} {{js "'"}}
`
	pl, err := Parse("p.yaml", []byte(scenarioPlan(body)))
	if err != nil {
		t.Fatal(err)
	}
	text, _, reason := pl.render(map[string]any{"hub": map[string]any{}})
	if reason != "" {
		t.Fatal(reason)
	}
	want := `name: s
duration: 1m
# 9223372036854775807
# -9223372036854775808
# 1,2,3,rrempty
# [7] 5 -1 -12 -3 -1 9223372036854775807 007|a 1b &lt;&amp;&gt; a+b \'
`
	if d := cmp.Diff(want, string(text)); d != "" {
		t.Errorf("rendered (-want +got):\n%s", d)
	}
}

// TestSeqCount: seq counts its values without overflow before making them.
func TestSeqCount(t *testing.T) {
	for _, tc := range []struct {
		a, b, left int
		want       int // values; -1: refused
	}{
		{1, 3, 10, 3},
		{3, 1, 10, 0},
		{5, 5, 1, 1},
		{5, 5, 0, -1},
		{1, 10, 10, 10},
		{1, 11, 10, -1},
		{math.MaxInt, math.MaxInt, 10, 1},
		{math.MinInt, math.MinInt, 10, 1},
		{-math.MaxInt, math.MaxInt, 10, -1},
		{math.MinInt, math.MaxInt, math.MaxInt, -1},
		{math.MaxInt - 2, math.MaxInt, 10, 3},
	} {
		st := &renderState{left: tc.left, limit: tc.left}
		got, err := st.seq(tc.a, tc.b)
		n := len(got)
		if err != nil {
			n = -1
		}
		if n != tc.want || (err == nil && st.left != tc.left-n) {
			t.Errorf("seq %d %d with %d steps left: %d values (%v), %d left; want %d values", tc.a, tc.b, tc.left, n, err, st.left, tc.want)
		}
		if n > 0 && (got[0] != tc.a || got[n-1] != tc.b) {
			t.Errorf("seq %d %d = %d..%d", tc.a, tc.b, got[0], got[n-1])
		}
	}
}

// sweepPlan is a plan sweeping n parameters of k values each.
func sweepPlan(n, k int, extra string) string {
	var b strings.Builder
	b.WriteString("name: p\nsweep:\n")
	vals := make([]string, k)
	for i := range vals {
		vals[i] = fmt.Sprint(i + 1)
	}
	uses := ""
	for i := range n {
		fmt.Fprintf(&b, "  p%d: [%s]\n", i, strings.Join(vals, ", "))
		uses += fmt.Sprintf(" {{.p%d}}", i)
	}
	// The template reads every parameter (a plan sweeping one it never reads is refused).
	return b.String() + extra + "scenario: |\n  name: s\n  duration: 1m\n  #" + uses + "\n"
}

// TestSweepBounds: a sweep's points are counted without overflow and refused over
// MaxPoints before any point is made, at the parameter that crosses it: a 10^9-point sweep
// allocated 32 GB, 2^64 points wrapped to none (and exited 0 with an empty report), 3^41
// failed in a make with no field.
func TestSweepBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want where
	}{
		{"10^9 points", sweepPlan(9, 10, ""), where{7, "sweep.p4", "the sweep has more than 10,000 points so far (p0 10 × p1 10 × p2 10 × p3 10 × p4 10); a plan may have at most 10,000 (MaxPoints)"}},
		{"2^64 points", sweepPlan(64, 2, ""), where{16, "sweep.p13", "more than 10,000 points"}},
		{"3^41 points", sweepPlan(41, 3, ""), where{11, "sweep.p8", "more than 10,000 points"}},
		{"one long axis", sweepPlan(1, 10001, ""), where{3, "sweep.p0", "(p0 10001)"}},
		{"small gives more", sweepPlan(2, 2, "small:\n  sweep: {p0: ["+strings.Repeat("1, ", 5000)+"1], p1: [1, 2]}\n"), where{6, "small.sweep", "gives more than 10,000 points (p0 5001 × p1 2)"}},
		{"repetitions", "name: p\nrepetitions: 10001\nscenario: x\n", where{2, "repetitions", "from 1 to 10,000 (MaxRepetitions)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRefused(t, tc.want, refused(t, tc.text, ParseOptions{}))
		})
	}
}

// TestValidationLinear: validating a plan renders each point once, and rendering point i
// costs the same whatever i and the number of points (it listed every point per call, so
// 10^4 points took over 10 s before the first run). MaxPoints points parse.
func TestValidationLinear(t *testing.T) {
	start := time.Now()
	pl, err := Parse("p.yaml", []byte(sweepPlan(2, 100, "")))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d points validated in %s", pl.NumPoints(), time.Since(start))
	if pl.NumPoints() != MaxPoints || pl.RunCount() != 5*MaxPoints {
		t.Fatalf("%d points, %d runs", pl.NumPoints(), pl.RunCount())
	}
	one, err := Parse("p.yaml", []byte(sweepPlan(2, 1, "")))
	if err != nil {
		t.Fatal(err)
	}
	last := testing.AllocsPerRun(5, func() { _, _ = pl.Scenario(MaxPoints - 1) })
	single := testing.AllocsPerRun(5, func() { _, _ = one.Scenario(0) })
	if last > single+20 {
		t.Errorf("rendering the last of %d points allocates %.0f times, one point's plan %.0f", MaxPoints, last, single)
	}
	if a := testing.AllocsPerRun(5, func() { _ = pl.RunCount() }); a != 0 {
		t.Errorf("RunCount allocates %.0f times", a)
	}
	if d := cmp.Diff([]Value{pl.Sweep[0].Values[99], pl.Sweep[1].Values[98]}, pl.Point(MaxPoints-2).Values); d != "" {
		t.Errorf("the last point but one (-want +got):\n%s", d)
	}
}

// TestSampleBound: a run takes at most MaxSamplesPerRun samples; sample: 1s over a
// 2,000,000 h scenario scheduled 7.2 × 10^9 of them before the run.
func TestSampleBound(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       where
	}{
		{"sample 1s", "name: p\nsample: 1s\nscenario: |\n  name: s\n  duration: 2000000h\n",
			where{2, "sample", "the scenario rendered for default lasts 2000000h0m0s: sampling every 1s takes 7,200,000,000 samples per run, more than 10,000 (MaxSamplesPerRun)"}},
		{"the default sample", "name: p\nscenario: |\n  name: s\n  duration: 28h\n", where{1, "sample", "sampling every 10s takes 10,080 samples"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRefused(t, tc.want, refused(t, tc.text, ParseOptions{}))
		})
	}
	pl, err := Parse("p.yaml", []byte("name: p\nsample: 1s\nscenario: |\n  name: s\n  duration: 10000s\n"))
	if err != nil {
		t.Fatalf("exactly MaxSamplesPerRun samples: %v", err)
	}
	r, err := pl.RunOne(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Series) != MaxSamplesPerRun || r.Series[len(r.Series)-1].T != 10000 {
		t.Errorf("%d samples, the last at %gs; want %d, the last at 10000s", len(r.Series), r.Series[len(r.Series)-1].T, MaxSamplesPerRun)
	}
}

// TestHubBounds: every number of the hub model is bounded, so nothing prints wrapped
// around (burst 9223372036854775807 printed as negative) and callsPerDecision × apiLatency
// cannot overflow.
func TestHubBounds(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       where
	}{
		{"burst at the largest int", "name: p\nhub: {burst: 9223372036854775807}\nscenario: x\n", where{2, "hub.burst", `must be an integer from 1 to 1,000,000 (MaxBurst), not "9223372036854775807"`}},
		{"burst swept", "name: p\nsweep:\n  hub.burst: [100, 9223372036854775807]\nscenario: x\n", where{3, "sweep.hub.burst[1]", "(MaxBurst)"}},
		{"no workers", "name: p\nhub: {workers: 0}\nscenario: x\n", where{2, "hub.workers", "from 1 to 10,000 (MaxWorkers)"}},
		{"too many workers", "name: p\nhub: {workers: 1000000000}\nscenario: x\n", where{2, "hub.workers", "(MaxWorkers)"}},
		{"a fractional worker", "name: p\nhub: {workers: 1.5}\nscenario: x\n", where{2, "hub.workers", `not "1.5"`}},
		{"calls per decision", "name: p\nhub: {callsPerDecision: 9223372036854775807}\nscenario: x\n", where{2, "hub.callsPerDecision", "from 0 to 1,000 (MaxCallsPerDecision)"}},
		{"api latency", "name: p\nhub: {apiLatency: 2562047h}\nscenario: x\n", where{2, "hub.apiLatency", "from 0s to 1m0s (MaxAPILatency)"}},
		{"negative api latency", "name: p\nsweep:\n  hub.apiLatency: [-1ms]\nscenario: x\n", where{3, "sweep.hub.apiLatency[0]", "(MaxAPILatency)"}},
		{"qps too small", "name: p\nhub: {qps: 1e-300}\nscenario: x\n", where{2, "hub.qps", "from 0.01 to 1,000,000 (MinQPS, MaxQPS)"}},
		{"qps too large", "name: p\nhub: {qps: 1e300}\nscenario: x\n", where{2, "hub.qps", "(MinQPS, MaxQPS)"}},
		{"qps not a number", "name: p\nhub: {qps: .nan}\nscenario: x\n", where{2, "hub.qps", ""}},
		{"qps a duration", "name: p\nhub: {qps: 5s}\nscenario: x\n", where{2, "hub.qps", `not "5s"`}},
		{"small sweep", "name: p\nsweep:\n  hub.workers: [1]\nsmall:\n  sweep: {hub.workers: [10001]}\nscenario: x\n", where{5, "small.sweep.hub.workers[0]", "(MaxWorkers)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRefused(t, tc.want, refused(t, tc.text, ParseOptions{}))
		})
	}
	// At every bound at once, the decision time is exact.
	pl, err := Parse("p.yaml", []byte("name: p\nhub: {workers: 10000, qps: 0.01, burst: 1000000, callsPerDecision: 1000, apiLatency: 1m}\nscenario: |\n  name: s\n  duration: 1m\n"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := pl.Scenario(0)
	if err != nil {
		t.Fatal(err)
	}
	want := scenarios.Hub{Line: 2, Workers: MaxWorkers, QPS: MinQPS, Burst: MaxBurst, CallsPerDecision: MaxCallsPerDecision, DecisionTime: 1000 * time.Minute}
	if d := cmp.Diff(want, *sc.Hub); d != "" {
		t.Errorf("hub (-want +got):\n%s", d)
	}
}

// TestPlanFileBounds: a plan file and its template are read with input.ReadFile's bound
// and refused over MaxPlanBytes; /dev/zero as either ends at once with its name.
func TestPlanFileBounds(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := write("big.tmpl", "name: s\nduration: 1m\n#"+strings.Repeat("x", MaxPlanBytes))
	for _, tc := range []struct {
		name, text string
		want       where
	}{
		{"scenarioFile /dev/zero", "name: p\nscenarioFile: /dev/zero\n", where{2, "scenarioFile", "/dev/zero: larger than 1 MiB"}},
		{"a large template", "name: p\nscenarioFile: " + big + "\n", where{2, "scenarioFile", "big.tmpl: larger than 1 MiB, the most fleetsim reads from such a file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(write("plan.yaml", tc.text))
			var se *scenarios.Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *scenarios.Error", err)
			}
			checkRefused(t, tc.want, where{se.Line, se.Field, se.Reason})
		})
	}
	t.Run("a large plan", func(t *testing.T) {
		checkRefused(t, where{0, "", "1,048,577 bytes, larger than the 1,048,576 a plan file may have (MaxPlanBytes)"},
			refused(t, "name: p\n#"+strings.Repeat("x", MaxPlanBytes-9)+"\n", ParseOptions{}))
	})
	t.Run("plan /dev/zero", func(t *testing.T) {
		_, err := Load("/dev/zero")
		if !errors.As(err, new(*input.TooLargeError)) {
			t.Errorf("Load(/dev/zero) = %v, want an *input.TooLargeError", err)
		}
	})
}
