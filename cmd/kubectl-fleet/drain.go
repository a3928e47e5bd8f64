package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
)

// cordonTaint keeps new placements off a drained member; KubeFleet's plugin uses the same
// key, value and effect, so either tool uncordons what the other cordoned.
var cordonTaint = clusterv1beta1.Taint{Key: "cordon-key", Value: "cordon-value", Effect: "NoSchedule"}

// evictionLabel marks the evictions drain makes, with the member's name.
const evictionLabel = "fleetsim.io/drained-cluster"

// evicted is one placement's eviction as drain reports it.
type evicted struct {
	Placement string `json:"placement"`
	Eviction  string `json:"eviction"`
	Executed  string `json:"executed"` // True, False or Unknown (not decided within --timeout)
	Message   string `json:"message,omitempty"`
}

type drained struct {
	Cluster   string    `json:"cluster"`
	Tainted   bool      `json:"tainted"`
	Evictions []evicted `json:"evictions"`
}

func newDrainCommand(g *globals, stdout io.Writer) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "drain CLUSTER",
		Short: "Taint a member so nothing new is placed on it, and evict every placement from it",
		Long: `drain adds the taint cordon-key=cordon-value:NoSchedule to the MemberCluster, so that no
placement without a matching toleration picks it any more, then creates a
ClusterResourcePlacementEviction for every placement bound to it and waits up to --timeout
for each to be executed. A disruption budget may refuse an eviction: its message says why,
and running drain again retries (an executed eviction is replaced by a new one).
PickFixed placements are not evicted by the hub (the eviction is reported not executed).
uncordon removes the taint.`,
		Example: `  kubectl fleet drain member-1
  kubectl fleet drain member-1 -o json --timeout 5m`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.hubClient()
			if err != nil {
				return err
			}
			out, err := drain(cmd.Context(), c, args[0], timeout)
			if err != nil {
				return err
			}
			if perr := g.print(stdout, out, func() error { return printDrained(stdout, out) }); perr != nil {
				return perr
			}
			for _, e := range out.Evictions {
				if e.Executed != "True" {
					return fmt.Errorf("%s is tainted but not drained: the eviction of %s was not executed", out.Cluster, e.Placement)
				}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "how long to wait for the evictions to be executed")
	return cmd
}

func drain(ctx context.Context, c client.Client, cluster string, timeout time.Duration) (*drained, error) {
	out := &drained{Cluster: cluster, Evictions: []evicted{}}
	if err := setTaint(ctx, c, cluster, true); err != nil {
		return nil, err
	}
	out.Tainted = true
	var bindings v1beta1.ClusterResourceBindingList
	if err := c.List(ctx, &bindings); err != nil {
		return nil, fmt.Errorf("list bindings: %w", err)
	}
	var placements []string
	for _, b := range bindings.Items {
		if p := b.Labels[v1beta1.CRPTrackingLabel]; b.Spec.TargetCluster == cluster && p != "" && !slices.Contains(placements, p) {
			placements = append(placements, p)
		}
	}
	slices.Sort(placements)
	for _, p := range placements {
		name := evictionName(cluster, p)
		ev := &v1beta1.ClusterResourcePlacementEviction{}
		// An eviction is a one-shot request: an old one of the same name is replaced.
		if err := c.Get(ctx, client.ObjectKey{Name: name}, ev); err == nil {
			if err := c.Delete(ctx, ev); err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("replace eviction %s: %w", name, err)
			}
			_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: name}, &v1beta1.ClusterResourcePlacementEviction{})), nil
			})
		}
		ev = &v1beta1.ClusterResourcePlacementEviction{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{evictionLabel: cluster}},
			Spec:       v1beta1.PlacementEvictionSpec{PlacementName: p, ClusterName: cluster}}
		if err := c.Create(ctx, ev); err != nil {
			return nil, fmt.Errorf("evict %s from %s: %w", p, cluster, err)
		}
		out.Evictions = append(out.Evictions, evicted{Placement: p, Eviction: name, Executed: "Unknown"})
	}
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		done := true
		for i := range out.Evictions {
			e := &out.Evictions[i]
			ev := &v1beta1.ClusterResourcePlacementEviction{}
			if err := c.Get(ctx, client.ObjectKey{Name: e.Eviction}, ev); err != nil {
				done = false
				continue
			}
			if cond := meta.FindStatusCondition(ev.Status.Conditions, v1beta1.EvictionConditionExecuted); cond != nil {
				e.Executed, e.Message = string(cond.Status), cond.Message
			} else if cond := meta.FindStatusCondition(ev.Status.Conditions, v1beta1.EvictionConditionValid); cond != nil && cond.Status == metav1.ConditionFalse {
				e.Executed, e.Message = "False", cond.Message
			}
			done = done && e.Executed != "Unknown"
		}
		return done, nil
	})
	return out, nil
}

// evictionName is drain-<cluster>-<placement>, or a hash of the two when that is too long
// for an object name.
func evictionName(cluster, placement string) string {
	n := "drain-" + cluster + "-" + placement
	if len(n) <= 253 {
		return n
	}
	h := sha256.Sum256([]byte(cluster + "/" + placement))
	return "drain-" + hex.EncodeToString(h[:8])
}

// setTaint adds (on) or removes the cordon taint, retrying on conflicts.
func setTaint(ctx context.Context, c client.Client, cluster string, on bool) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return err
		}
		has := slices.ContainsFunc(mc.Spec.Taints, isCordon)
		switch {
		case on && !has:
			mc.Spec.Taints = append(mc.Spec.Taints, cordonTaint)
		case !on && has:
			mc.Spec.Taints = slices.DeleteFunc(mc.Spec.Taints, isCordon)
		default:
			return nil
		}
		return c.Update(ctx, mc)
	})
	if err != nil {
		return fmt.Errorf("MemberCluster %s: %w", cluster, err)
	}
	return nil
}

func isCordon(t clusterv1beta1.Taint) bool {
	return t.Key == cordonTaint.Key && t.Value == cordonTaint.Value && t.Effect == cordonTaint.Effect
}

func printDrained(w io.Writer, d *drained) error {
	fmt.Fprintf(w, "membercluster/%s tainted %s=%s:%s\n", d.Cluster, cordonTaint.Key, cordonTaint.Value, cordonTaint.Effect)
	if len(d.Evictions) == 0 {
		_, err := fmt.Fprintln(w, "no placement is bound to it")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLACEMENT\tEVICTION\tEXECUTED\tMESSAGE")
	for _, e := range d.Evictions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Placement, e.Eviction, e.Executed, e.Message)
	}
	return tw.Flush()
}

func newUncordonCommand(g *globals, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:     "uncordon CLUSTER",
		Short:   "Remove the taint drain added, so placements may pick the member again",
		Example: `  kubectl fleet uncordon member-1`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.hubClient()
			if err != nil {
				return err
			}
			if err := setTaint(cmd.Context(), c, args[0], false); err != nil {
				return err
			}
			out := map[string]any{"cluster": args[0], "tainted": false}
			return g.print(stdout, out, func() error {
				_, err := fmt.Fprintf(stdout, "membercluster/%s uncordoned\n", args[0])
				return err
			})
		},
	}
}
