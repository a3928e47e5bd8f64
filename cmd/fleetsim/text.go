package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/scenarios/runner"
)

// textOptions: quiet prints only verdicts and failures; width is what lines must fit
// (0: no limit, --wide).
type textOptions struct {
	quiet bool
	width int
}

func printText(w io.Writer, r *runner.Report, o textOptions) {
	verdict := "PASS"
	if !r.Passed {
		verdict = "FAIL"
	}
	if o.quiet {
		fmt.Fprintf(w, "%s %s (%s) trace %s\n", verdict, r.Scenario, r.File, r.TraceHash)
		for _, e := range r.Expectations {
			if !e.Passed {
				fmt.Fprintf(w, "  FAIL %s\n", wrap(fmt.Sprintf("%s:%d at %s: %s: %s", r.File, e.Line, human(e.At), e.Description, e.Detail), o.width, 7))
			}
		}
		for _, i := range r.Invariants {
			if !i.Passed {
				fmt.Fprintf(w, "  FAIL %s\n", wrap(fmt.Sprintf("invariant %s broke at %s: %s", i.Name, human(i.At), i.Detail), o.width, 7))
			}
		}
		if s := skipped(r); s != "" {
			fmt.Fprintf(w, "  %s\n", s)
		}
		return
	}
	fmt.Fprintf(w, "Scenario %s (%s), seed %d\n\n", r.Scenario, r.File, r.Seed)
	fmt.Fprintln(w, "TIMELINE")
	rows := make([][]string, 0, len(r.Timeline))
	for _, e := range r.Timeline {
		rows = append(rows, []string{human(e.At), e.Kind, subjects(e.Subjects, e.MoreSubjects), e.Detail})
	}
	// The subjects and the detail give way to the width; the time and the kind never do.
	table(w, o.width, []column{{}, {}, {minimum: 12}, {minimum: 16}}, rows)
	if r.TimelineDropped > 0 {
		fmt.Fprintf(w, "  ... %d more notable events (see --trace)\n", r.TimelineDropped)
	}
	fmt.Fprintln(w, "\nPLACEMENTS")
	rows = [][]string{{"NAME", "SNAPSHOT", "WANTED", "CLUSTERS", "SCHEDULED", "AVAILABLE", "FIRST NOT TRUE"}}
	for _, p := range r.Placements {
		wanted := "all"
		if p.Wanted >= 0 {
			wanted = fmt.Sprint(p.Wanted)
		}
		var scheduled, available, blocked string
		for _, c := range p.Conditions {
			short := strings.TrimPrefix(c.Type, "ClusterResourcePlacement")
			switch short {
			case "Scheduled":
				scheduled = c.Status
			case "Available":
				available = c.Status
			}
			if c.Status != "True" && blocked == "" {
				blocked = short + "=" + c.Status + " " + c.Reason
			}
		}
		rows = append(rows, []string{p.Name, p.PolicySnapshot, wanted, orNone(strings.Join(p.Clusters, ",")), scheduled, orNone(available), orNone(blocked)})
	}
	table(w, o.width, []column{{}, {}, {}, {minimum: 8}, {}, {}, {minimum: 14}}, rows)
	fmt.Fprintln(w, "\nMEMBERS")
	rows = [][]string{{"NAME", "KIND", "JOINED", "HEALTHY", "ELIGIBLE", "TAINTS", "FAILURE"}}
	for _, m := range r.Members {
		joined, healthy := "Unknown", "Unknown"
		for _, c := range m.Conditions {
			switch c.Type {
			case "Joined":
				joined = c.Status
			case "Healthy":
				healthy = c.Status
			}
		}
		eligible := "yes"
		if !m.Eligible {
			eligible = "no"
		}
		rows = append(rows, []string{m.Name, string(m.Kind), joined, healthy, eligible, orNone(taints(m.Taints)), orNone(m.Failure)})
	}
	table(w, o.width, []column{{}, {}, {}, {}, {}, {minimum: 12}, {minimum: 9}}, rows)
	fmt.Fprintln(w, "\nEXPECTATIONS")
	if len(r.Expectations) == 0 && len(r.Invariants) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, e := range r.Expectations {
		mark := "PASS"
		if !e.Passed {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %s\n        %s\n", mark, wrap(fmt.Sprintf("line %d, at %s: %s", e.Line, human(e.At), e.Description), o.width, 8), wrap(e.Detail, o.width, 8))
	}
	for _, i := range r.Invariants {
		if i.Passed {
			fmt.Fprintf(w, "  PASS  always %s\n", i.Name)
		} else {
			fmt.Fprintf(w, "  FAIL  %s\n", wrap(fmt.Sprintf("always %s: broke at %s: %s", i.Name, human(i.At), i.Detail), o.width, 8))
		}
	}
	if s := skipped(r); s != "" {
		fmt.Fprintf(w, "  %s\n", s)
	}
	fmt.Fprintf(w, "\n%s  trace hash %s  (%d events, %s simulated)\n", verdict, r.TraceHash, r.Events, human(r.SimulatedTime))
}

// skipped says what a run shortened by --until left out, or "".
func skipped(r *runner.Report) string {
	if r.SkippedSteps == 0 && r.SkippedExpectations == 0 {
		return ""
	}
	return fmt.Sprintf("SKIPPED  --until %s: %s and %s after it were not run", human(r.SimulatedTime), plural(r.SkippedSteps, "timeline step"), plural(r.SkippedExpectations, "expectation"))
}

func taints(ts []member.Taint) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.String())
	}
	return strings.Join(s, ",")
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// subjects shows up to three names, then a count (more: names left out of the report).
func subjects(names []string, more int) string {
	const shown = 3
	if len(names) <= shown+1 && more == 0 {
		return strings.Join(names, ", ")
	}
	n := min(shown, len(names))
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n+more)
}
