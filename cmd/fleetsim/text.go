package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/scenarios/runner"
)

// textOptions: quiet prints only verdicts and failures; width is what lines must fit
// (0: no limit, --wide).
type textOptions struct {
	quiet      bool
	width      int
	allMembers bool
}

// timelineRows is how many timeline entries text output prints (-o json has them all;
// --events and --subject narrow them), and memberRowsLimit the fleet size above which the
// MEMBERS rows are printed only with --members.
const (
	timelineRows    = 500
	memberRowsLimit = 50
)

func printText(w io.Writer, r *runner.Report, o textOptions) {
	verdict := "PASS"
	if !r.Passed {
		verdict = "FAIL"
	}
	if o.quiet {
		fmt.Fprintf(w, "%s %s (%s) trace %s\n", verdict, r.Scenario, r.File, r.TraceHash)
		for _, e := range r.Expectations {
			if !e.Passed {
				fmt.Fprintf(w, "  FAIL %s\n", wrap(fmt.Sprintf("%s:%d at %s: %s: %s", r.File, e.Line, human(e.At.String()), e.Description, e.Detail), o.width, 7))
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
	shown := r.Timeline[:min(len(r.Timeline), timelineRows)]
	rows := make([][]string, 0, len(shown))
	for _, e := range shown {
		rows = append(rows, []string{human(e.At.String()), e.Kind, subjects(e.Subjects, e.MoreSubjects), e.Detail})
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	// The subjects and the detail give way to the width; the time and the kind never do.
	table(w, o.width, []column{{}, {}, {minimum: 12}, {minimum: 16}}, rows)
	if more := len(r.Timeline) - len(shown); more > 0 {
		fmt.Fprintf(w, "  ... %d more notable events (-o json has them all; --events KIND,... and --subject PATTERN narrow the timeline)\n", more)
	}
	fmt.Fprintln(w, "\nPLACEMENTS")
	rows = [][]string{{"NAME", "POLICY SNAPSHOT", "RESOURCE SNAPSHOT", "WANTED", "CLUSTERS", "SCHEDULED", "AVAILABLE", "FIRST NOT TRUE"}}
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
		rows = append(rows, []string{p.Name, orNone(p.PolicySnapshot), orNone(p.ResourceSnapshot), wanted, clusters(p.Clusters), scheduled, orNone(available), orNone(blocked)})
	}
	table(w, o.width, []column{{}, {minimum: 7}, {minimum: 7}, {}, {minimum: 8}, {}, {}, {minimum: 14}}, rows)
	fmt.Fprintf(w, "\nMEMBERS  %s\n", memberSummary(r.MemberGroups))
	if len(r.MemberGroups) > 1 {
		grows := [][]string{{"GROUP", "MEMBERS", "JOINED", "HEALTHY", "TAINTED", "FAILED"}}
		for _, g := range r.MemberGroups {
			grows = append(grows, []string{g.Group, fmt.Sprint(g.Members), fmt.Sprint(g.Joined), fmt.Sprint(g.Healthy), fmt.Sprint(g.Tainted), fmt.Sprint(g.Failed)})
		}
		table(w, o.width, []column{{minimum: 16}, {}, {}, {}, {}, {}}, grows)
	}
	rows = [][]string{{"NAME", "KIND", "JOINED", "HEALTHY", "ELIGIBLE", "TAINTS", "FAILURE"}}
	members := r.Members
	if len(members) > memberRowsLimit && !o.allMembers {
		fmt.Fprintf(w, "  (%d member rows left out: --members prints them, -o json has them)\n", len(members))
		members = nil
	}
	for _, m := range members {
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
	if len(members) > 0 {
		table(w, o.width, []column{{}, {}, {}, {}, {}, {minimum: 12}, {minimum: 9}}, rows)
	}
	if r.Measures != nil {
		printMeasures(w, r.Measures, o)
	}
	fmt.Fprintln(w, "\nEXPECTATIONS")
	if len(r.Expectations) == 0 && len(r.Invariants) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, e := range r.Expectations {
		mark := "PASS"
		if !e.Passed {
			mark = "FAIL"
		}
		when := "at " + human(e.At.String())
		if e.Measured {
			when = "over the run"
		}
		fmt.Fprintf(w, "  %s  %s\n        %s\n", mark, wrap(fmt.Sprintf("line %d, %s: %s", e.Line, when, e.Description), o.width, 8), wrap(e.Detail, o.width, 8))
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
	fmt.Fprintf(w, "\n%s  trace hash %s  (%d events, %s simulated)\n", verdict, r.TraceHash, r.Events, human(r.SimulatedTime.String()))
}

// skipped says what a run shortened by --until left out, or "".
func skipped(r *runner.Report) string {
	if r.SkippedSteps == 0 && r.SkippedExpectations == 0 {
		return ""
	}
	return fmt.Sprintf("SKIPPED  --until %s: %s and %s after it were not run", human(r.SimulatedTime.String()), plural(r.SkippedSteps, "timeline step"), plural(r.SkippedExpectations, "expectation"))
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

// printMeasures prints the run's measures: rollouts, peaks of unavailable clusters and
// unhealthy member groups.
func printMeasures(w io.Writer, m *runner.Measures, o textOptions) {
	fmt.Fprintln(w, "\nMEASURES")
	if len(m.Rollouts) == 0 && len(m.Peaks) == 0 && len(m.Groups) == 0 {
		fmt.Fprintln(w, "  (none)")
		return
	}
	if len(m.Rollouts) > 0 {
		rows := [][]string{{"ROLLOUT OF", "RESOURCE SNAPSHOT", "TAKEN AT", "COMPLETED AT", "TOOK"}}
		for _, ro := range m.Rollouts {
			done, took := "not by the end", "-"
			if ro.Completed != nil {
				done, took = seconds(*ro.Completed), seconds(*ro.Duration)
			}
			rows = append(rows, []string{ro.Placement, ro.Snapshot, seconds(ro.Started), done, took})
		}
		table(w, o.width, []column{{minimum: 12}, {minimum: 12}, {}, {}, {}}, rows)
	}
	if len(m.Peaks) > 0 {
		fmt.Fprintln(w)
		rows := [][]string{{"PEAK UNAVAILABLE IN", "CLUSTERS", "OF", "%", "FIRST AT", "FOR"}}
		for _, p := range m.Peaks {
			rows = append(rows, []string{p.Scope, fmt.Sprint(p.Peak), fmt.Sprint(p.Of), fmt.Sprintf("%.1f", p.Percent), seconds(p.At), seconds(p.For)})
		}
		table(w, o.width, []column{{minimum: 16}, {}, {}, {}, {}, {}}, rows)
	}
	if len(m.Groups) > 0 {
		fmt.Fprintln(w)
		rows := [][]string{{"MEMBER GROUP", "MEMBERS", "UNHEALTHY FOR", "FIRST AT", "MOST AT ONCE"}}
		for _, g := range m.Groups {
			first := "-"
			if g.FirstUnhealthy != nil {
				first = seconds(*g.FirstUnhealthy)
			}
			rows = append(rows, []string{g.Group, fmt.Sprint(g.Members), seconds(g.Unhealthy), first, fmt.Sprint(g.PeakUnhealthy)})
		}
		table(w, o.width, []column{{minimum: 16}, {}, {}, {}, {}}, rows)
	}
}

// seconds writes a time in seconds (as JSON has it) as a duration for people, to the
// millisecond.
func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

// memberSummary is the MEMBERS line: counts over the fleet (the group table follows when
// there are several groups).
func memberSummary(groups []runner.MemberGroupSummary) string {
	var all runner.MemberGroupSummary
	for _, g := range groups {
		all.Members += g.Members
		all.Joined += g.Joined
		all.Healthy += g.Healthy
		all.Tainted += g.Tainted
		all.Failed += g.Failed
	}
	return counts(all)
}

func counts(g runner.MemberGroupSummary) string {
	return fmt.Sprintf("%d members, %d joined, %d healthy, %d tainted, %d failed", g.Members, g.Joined, g.Healthy, g.Tainted, g.Failed)
}

// clusters lists a placement's clusters, or counts them when there are many.
func clusters(cs []string) string {
	const listed = 20
	if len(cs) <= listed {
		return orNone(strings.Join(cs, ","))
	}
	return fmt.Sprintf("%d clusters: %s,...", len(cs), strings.Join(cs[:3], ","))
}
