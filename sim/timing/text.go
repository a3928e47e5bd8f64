package timing

import (
	"fmt"
	"io"
	"maps"
	"slices"
)

// WriteText prints a result for people.
func WriteText(w io.Writer, r *Result) {
	fmt.Fprintf(w, "%s: members %d, placements %d, pick %d, concurrent %d\n", r.Source, r.Members, r.Placements, r.Pick, r.Concurrent)
	if r.JoinSeconds > 0 {
		fmt.Fprintf(w, "join (all Joined and Healthy): %.1fs\n", r.JoinSeconds)
	}
	fmt.Fprintf(w, "creation to Available: p50 %.2fs  p90 %.2fs  p99 %.2fs  max %.2fs  mean %.2fs  (phase %.1fs)\n",
		r.Available.P50, r.Available.P90, r.Available.P99, r.Available.Max, r.Available.Mean, r.PlacementPhaseSeconds)
	for _, st := range r.Steps {
		fmt.Fprintf(w, "  %-30s p50 %.2fs  p90 %.2fs  max %.2fs\n", st.Name+":", st.Seconds.P50, st.Seconds.P90, st.Seconds.Max)
	}
	fmt.Fprintf(w, "hub decisions %.0f (%.0f retried; %.0f more served inline), API calls %.0f, %.1f per decision; waits for own writes %.1fs in all\n",
		r.Decisions, r.Retries, r.ServedInline, r.APICalls, r.APICallsPerDecision, r.WaitSeconds)
	fmt.Fprintf(w, "placement decisions take %.1fms on average (read, decide, write)", 1000*r.MeanDecisionSeconds)
	for _, k := range slices.Sorted(maps.Keys(r.MeanDecisionSecondsByController)) {
		fmt.Fprintf(w, "; %s %.1fms (waited %.1fms)", k, 1000*r.MeanDecisionSecondsByController[k], 1000*r.MeanWaitSecondsByController[k])
	}
	fmt.Fprintln(w)
	if len(r.DecisionsByController) > 0 {
		fmt.Fprintf(w, "decisions by controller:")
		for _, k := range slices.Sorted(maps.Keys(r.DecisionsByController)) {
			fmt.Fprintf(w, " %s %.0f;", k, r.DecisionsByController[k])
		}
		fmt.Fprintln(w)
	}
	if len(r.Writes) > 0 {
		fmt.Fprintf(w, "hub writes: %.1f per binding:", r.WritesPerBinding)
		for _, k := range slices.Sorted(maps.Keys(r.Writes)) {
			fmt.Fprintf(w, " %s %.0f;", k, r.Writes[k])
		}
		fmt.Fprintln(w)
	}
	use := func(name string, u Usage) {
		fmt.Fprintf(w, "%-15s cpu %.2fs (%.0f%% of one core)  rss %.0f MiB\n", name, u.CPUSeconds, u.CPUPercent, u.RSSMiB)
	}
	if r.Hub != (Usage{}) {
		use("hub", r.Hub)
	}
	if r.APIServer != nil {
		use("kube-apiserver", *r.APIServer)
		use("etcd", *r.Etcd)
	}
	if r.SteadyHubCPUPercent > 0 {
		fmt.Fprintf(w, "steady state hub cpu: %.1f%% of one core\n", r.SteadyHubCPUPercent)
	}
	if r.RestartSeconds > 0 {
		fmt.Fprintf(w, "restart (SIGKILL, new hub until quiet): %.1fs (first decision after %.1fs), %.0f decisions (%.0f more served inline)\n",
			r.RestartSeconds, r.RestartFirstDecisionSeconds, r.RestartDecisions, r.RestartServedInline)
	}
}
