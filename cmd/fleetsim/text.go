package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/scenarios/runner"
)

func printText(w io.Writer, r *runner.Report, quiet bool) {
	verdict := "PASS"
	if !r.Passed {
		verdict = "FAIL"
	}
	if quiet {
		fmt.Fprintf(w, "%s %s (%s) trace %s\n", verdict, r.Scenario, r.File, r.TraceHash)
		for _, e := range r.Expectations {
			if !e.Passed {
				fmt.Fprintf(w, "  FAIL %s:%d at %s: %s: %s\n", r.File, e.Line, e.At, e.Description, e.Detail)
			}
		}
		for _, i := range r.Invariants {
			if !i.Passed {
				fmt.Fprintf(w, "  FAIL invariant %s broke at %s: %s\n", i.Name, i.At, i.Detail)
			}
		}
		return
	}
	fmt.Fprintf(w, "Scenario %s (%s), seed %d\n\n", r.Scenario, r.File, r.Seed)

	fmt.Fprintln(w, "TIMELINE")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, e := range r.Timeline {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", e.At, e.Kind, subjects(e.Subjects, e.MoreSubjects), e.Detail)
	}
	tw.Flush()
	if r.TimelineDropped > 0 {
		fmt.Fprintf(w, "  ... %d more notable events (see --trace)\n", r.TimelineDropped)
	}

	fmt.Fprintln(w, "\nPLACEMENTS")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tSNAPSHOT\tWANTED\tCLUSTERS\tSCHEDULED\tAVAILABLE\tFIRST NOT TRUE")
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
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.PolicySnapshot, wanted, orNone(strings.Join(p.Clusters, ",")), scheduled, orNone(available), orNone(blocked))
	}
	tw.Flush()

	fmt.Fprintln(w, "\nMEMBERS")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tKIND\tJOINED\tHEALTHY\tELIGIBLE\tTAINTS\tFAILURE")
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
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, m.Kind, joined, healthy, eligible, orNone(taints(m.Taints)), orNone(m.Failure))
	}
	tw.Flush()

	fmt.Fprintln(w, "\nEXPECTATIONS")
	if len(r.Expectations) == 0 && len(r.Invariants) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, e := range r.Expectations {
		mark := "PASS"
		if !e.Passed {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s  line %d, at %s: %s\n        %s\n", mark, e.Line, e.At, e.Description, e.Detail)
	}
	for _, i := range r.Invariants {
		if i.Passed {
			fmt.Fprintf(w, "  PASS  always %s\n", i.Name)
		} else {
			fmt.Fprintf(w, "  FAIL  always %s: broke at %s: %s\n", i.Name, i.At, i.Detail)
		}
	}
	fmt.Fprintf(w, "\n%s  trace hash %s  (%d events, %s simulated)\n", verdict, r.TraceHash, r.Events, r.SimulatedTime)
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
