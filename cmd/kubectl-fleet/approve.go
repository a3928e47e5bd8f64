package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
)

// approved is what approve reports.
type approved struct {
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Run      string `json:"updateRun"`
	Stage    string `json:"stage"`
	Approved bool   `json:"approved"`
	// Already is true when the request was approved before this command.
	Already bool `json:"alreadyApproved"`
}

func newApproveCommand(g *globals, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "approve clusterapprovalrequest NAME",
		Short: "Approve a stage of a staged update run (its ClusterApprovalRequest)",
		Long: `approve sets the Approved condition of a ClusterApprovalRequest to True, which lets its
staged update run go on past the stage's approval task. The request's kind may be written
clusterapprovalrequest, clusterapprovalrequests or car. Approving an approved request
changes nothing.`,
		Example: `  kubectl get clusterapprovalrequests
  kubectl fleet approve clusterapprovalrequest example-run-after-canary`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch args[0] {
			case "clusterapprovalrequest", "clusterapprovalrequests", "car":
			default:
				return &usageError{fmt.Errorf("kind %q: must be clusterapprovalrequest (or car)", args[0])}
			}
			c, err := g.hubClient()
			if err != nil {
				return err
			}
			out := approved{Kind: "ClusterApprovalRequest", Name: args[1], Approved: true}
			err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				ar := &v1beta1.ClusterApprovalRequest{}
				if err := c.Get(cmd.Context(), client.ObjectKey{Name: args[1]}, ar); err != nil {
					return err
				}
				out.Run, out.Stage = ar.Spec.ParentStageRollout, ar.Spec.TargetStage
				if meta.IsStatusConditionTrue(ar.Status.Conditions, v1beta1.ApprovalRequestConditionApproved) {
					out.Already = true
					return nil
				}
				meta.SetStatusCondition(&ar.Status.Conditions, metav1.Condition{Type: v1beta1.ApprovalRequestConditionApproved,
					Status: metav1.ConditionTrue, Reason: "ApprovedByKubectlFleet", ObservedGeneration: ar.Generation,
					Message: "approved with kubectl fleet approve"})
				return c.Status().Update(cmd.Context(), ar)
			})
			if err != nil {
				return fmt.Errorf("approve ClusterApprovalRequest %s: %w", args[1], err)
			}
			return g.print(stdout, out, func() error {
				what := "approved"
				if out.Already {
					what = "was already approved"
				}
				_, err := fmt.Fprintf(stdout, "clusterapprovalrequest/%s %s (update run %s, stage %s)\n", out.Name, what, out.Run, out.Stage)
				return err
			})
		},
	}
}
