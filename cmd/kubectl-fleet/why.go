package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
)

// decision is one cluster's line of `why`.
type decision struct {
	Cluster  string `json:"cluster"`
	Selected bool   `json:"selected"`
	Score    string `json:"score,omitempty"`
	Reason   string `json:"reason"`
}

type whyResult struct {
	Placement string     `json:"placement"`
	Snapshot  string     `json:"policySnapshot"`
	Decisions []decision `json:"decisions"`
	// Note explains a cluster asked about that the snapshot does not list.
	Note string `json:"note,omitempty"`
}

func newWhyCommand(g *globals, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "why PLACEMENT [CLUSTER]",
		Short: "Why a placement picked, or did not pick, each cluster (or CLUSTER)",
		Long: `why reads the latest scheduling policy snapshot of a ClusterResourcePlacement and prints
the scheduler's decision per cluster: selected or not, the score, and the reason. The
snapshot lists every selected cluster and then unselected ones up to the hub's
--max-cluster-decisions; a cluster it does not list is said so.`,
		Example: `  kubectl fleet why web
  kubectl fleet why web member-3 -o json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.hubClient()
			if err != nil {
				return err
			}
			var snaps v1beta1.ClusterSchedulingPolicySnapshotList
			if err := c.List(cmd.Context(), &snaps, client.MatchingLabels{v1beta1.CRPTrackingLabel: args[0], v1beta1.IsLatestSnapshotLabel: "true"}); err != nil {
				return fmt.Errorf("policy snapshots of %s: %w", args[0], err)
			}
			if len(snaps.Items) == 0 {
				return fmt.Errorf("placement %s has no scheduling policy snapshot (does it exist? has the hub seen it?)", args[0])
			}
			snap := snaps.Items[0]
			out := whyResult{Placement: args[0], Snapshot: snap.Name, Decisions: []decision{}}
			for _, d := range snap.Status.ClusterDecisions {
				if len(args) == 2 && d.ClusterName != args[1] {
					continue
				}
				out.Decisions = append(out.Decisions, decision{Cluster: d.ClusterName, Selected: d.Selected, Score: score(d.ClusterScore), Reason: d.Reason})
			}
			if len(args) == 2 && len(out.Decisions) == 0 {
				out.Note = fmt.Sprintf("%s is not among the %d clusters the snapshot lists: it was not selected, and the hub keeps reasons for at most --max-cluster-decisions clusters", args[1], len(snap.Status.ClusterDecisions))
			}
			return g.print(stdout, out, func() error {
				tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintf(tw, "placement %s, policy snapshot %s\n", out.Placement, out.Snapshot)
				fmt.Fprintln(tw, "CLUSTER\tSELECTED\tSCORE\tREASON")
				for _, d := range out.Decisions {
					fmt.Fprintf(tw, "%s\t%v\t%s\t%s\n", d.Cluster, d.Selected, orDash(d.Score), d.Reason)
				}
				if out.Note != "" {
					fmt.Fprintln(tw, out.Note)
				}
				return tw.Flush()
			})
		},
	}
}

// score is "affinity/topology-spread", or "" without a score.
func score(s *v1beta1.ClusterScore) string {
	if s == nil {
		return ""
	}
	n := func(p *int32) string {
		if p == nil {
			return "0"
		}
		return strconv.Itoa(int(*p))
	}
	return "affinity " + n(s.AffinityScore) + ", spread " + n(s.TopologySpreadScore)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
