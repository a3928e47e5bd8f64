package hub_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// withT is the fleet with t as the test its helpers report to, for subtests.
func (f *fleetHub) withT(t *testing.T) *fleetHub {
	g := *f
	g.t = t
	return &g
}

// works returns a placement's Works by the member whose reserved namespace holds them.
func (f *fleetHub) works(crp string) (map[string]*placementv1beta1.Work, error) {
	var list placementv1beta1.WorkList
	if err := f.admin.List(context.Background(), &list, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: crp}); err != nil {
		return nil, err
	}
	out := map[string]*placementv1beta1.Work{}
	for i := range list.Items {
		w := &list.Items[i]
		m, ok := strings.CutPrefix(w.Namespace, "fleet-member-")
		if !ok {
			return nil, fmt.Errorf("Work %s/%s outside a member's reserved namespace", w.Namespace, w.Name)
		}
		if _, dup := out[m]; dup {
			return nil, fmt.Errorf("two Works of %s in %s", crp, w.Namespace)
		}
		out[m] = w
	}
	return out, nil
}

// workMembers lists the members holding a Work of the placement, sorted.
func (f *fleetHub) workMembers(crp string) ([]string, error) {
	ws, err := f.works(crp)
	if err != nil {
		return nil, err
	}
	var out []string
	for m := range ws {
		out = append(out, m)
	}
	sort.Strings(out)
	return out, nil
}

// clusterStatuses renders a placement's placementStatuses, one line per entry: the cluster
// (or "(unfilled)" for a cluster the policy wants but the scheduler could not find), its
// conditions as Type=Status/Reason in order, the unfilled entry's message and the applicable
// ClusterResourceOverride snapshots.
func clusterStatuses(crp *placementv1beta1.ClusterResourcePlacement) []string {
	var out []string
	for _, ps := range crp.Status.PlacementStatuses {
		name := ps.ClusterName
		if name == "" {
			name = "(unfilled)"
		}
		line := name + ":"
		for _, c := range ps.Conditions {
			line += " " + c.Type + "=" + string(c.Status) + "/" + c.Reason
			if ps.ClusterName == "" {
				line += fmt.Sprintf(" %q", c.Message)
			}
		}
		if len(ps.ApplicableClusterResourceOverrides) > 0 {
			line += " cro=" + strings.Join(ps.ApplicableClusterResourceOverrides, ",")
		}
		out = append(out, line)
	}
	return out
}

// waitClusterStatuses waits until the placement's placementStatuses render as want.
func (f *fleetHub) waitClusterStatuses(name string, want []string) {
	f.t.Helper()
	testenv.Eventually(f.t, "placementStatuses of "+name, func() error {
		_, crp, err := f.crpConditions(name)
		if err != nil {
			return err
		}
		if diff := cmp.Diff(want, clusterStatuses(crp)); diff != "" {
			return fmt.Errorf("placementStatuses (-want +got):\n%s", diff)
		}
		return nil
	})
}

// placed is the per-cluster status line of a cluster whose resources are available, with
// the Overridden reason given.
func placed(cluster, overridden string) string {
	return cluster + ": Scheduled=True/Scheduled RolloutStarted=True/RolloutStarted Overridden=True/" + overridden +
		" WorkSynchronized=True/AllWorkSynced Applied=True/AllWorkHaveBeenApplied Available=True/AllWorkAreAvailable"
}

// withCondition returns conds with the condition of the same type replaced by c, sorted.
func withCondition(conds []string, c string) []string {
	typ, _, _ := strings.Cut(c, "=")
	out := []string{c}
	for _, x := range conds {
		if t, _, _ := strings.Cut(x, "="); t != typ {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// unfulfilledConditions are placedConditions of a placement the scheduler could not fulfil
// but whose picked clusters are all available.
var unfulfilledConditions = withCondition(placedConditions, "ClusterResourcePlacementScheduled=False/SchedulingPolicyUnfulfilled")

func labelTerm(kv ...string) placementv1beta1.ClusterSelectorTerm {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return placementv1beta1.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: m}}
}

// prodPreferGold requires env=prod and prefers tier=gold.
var prodPreferGold = &placementv1beta1.Affinity{ClusterAffinity: &placementv1beta1.ClusterAffinity{
	RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{
		ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{labelTerm("env", "prod")},
	},
	PreferredDuringSchedulingIgnoredDuringExecution: []placementv1beta1.PreferredClusterSelector{
		{Weight: 50, Preference: labelTerm("tier", "gold")},
	},
}}

// TestSchedulingPolicies places a namespace with PickN and PickFixed policies on a fleet of
// three env=prod members (east and west tier=gold, north tier=silver) and one env=test member
// (lab), and checks the bindings, the Works, the placement's conditions and its per-cluster
// statuses against what the shared scheduler decides (CRP-POL-PICKN, CRP-POL-PICKFIXED,
// TSG-SCHED-PICKN-SHORT, TSG-SCHED-PICKFIXED-MISSING).
func TestSchedulingPolicies(t *testing.T) {
	f := startFleet(t, testenv.StartEnv(t))
	f.join("east", map[string]string{"env": "prod", "tier": "gold"})
	f.join("west", map[string]string{"env": "prod", "tier": "gold"})
	f.join("north", map[string]string{"env": "prod", "tier": "silver"})
	f.join("lab", map[string]string{"env": "test", "tier": "gold"})

	cases := []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		// bindings, conditions, statuses are what the placement settles on.
		bindings, conditions, statuses []string
		// then, if set, changes the placement and checks what it settles on next.
		then func(f *fleetHub)
	}{{
		// Required env=prod leaves east, west and north; tier=gold ranks east and west first.
		// Were the preference ignored, the tie-break (the greater name first) would pick west
		// and north.
		name:       "pickn-2",
		policy:     &placementv1beta1.PlacementPolicy{PlacementType: placement.PickN, NumberOfClusters: ptr.To[int32](2), Affinity: prodPreferGold},
		bindings:   []string{"east=Bound", "west=Bound"},
		conditions: placedConditions,
		statuses:   []string{placed("east", "NoOverrideSpecified"), placed("west", "NoOverrideSpecified")},
		then: func(f *fleetHub) {
			f.t.Helper()
			for _, b := range []string{"east", "west"} {
				if got := f.bindingScore("pickn-2", b); got != 50 {
					f.t.Errorf("affinity score of pickn-2's binding on %s = %d, want 50 (tier=gold preferred with weight 50)", b, got)
				}
			}
			// Scaling out to 3 adds north, the only other env=prod member.
			f.updateCRP("pickn-2", func(crp *placementv1beta1.ClusterResourcePlacement) {
				crp.Spec.Policy.NumberOfClusters = ptr.To[int32](3)
			})
			f.waitPlacement("pickn-2", []string{"east=Bound", "north=Bound", "west=Bound"}, placedConditions)
			f.waitWorks("pickn-2", []string{"east", "north", "west"})
		},
	}, {
		// Four wanted, three match the required term: the three are placed and the placement
		// is not fulfilled; the missing one is explained by lab's filter reason.
		name:       "pickn-4",
		policy:     &placementv1beta1.PlacementPolicy{PlacementType: placement.PickN, NumberOfClusters: ptr.To[int32](4), Affinity: prodPreferGold},
		bindings:   []string{"east=Bound", "north=Bound", "west=Bound"},
		conditions: unfulfilledConditions,
		statuses: []string{placed("east", "NoOverrideSpecified"), placed("north", "NoOverrideSpecified"), placed("west", "NoOverrideSpecified"),
			`(unfilled): Scheduled=False/ScheduleFailed "lab is not selected: ClusterUnschedulable, cluster does not match with any of the required cluster affinity terms"`},
	}, {
		// A named cluster that does not exist: east is placed, the placement is not fulfilled.
		name:       "pickfixed",
		policy:     &placementv1beta1.PlacementPolicy{PlacementType: placement.PickFixed, ClusterNames: []string{"east", "missing"}},
		bindings:   []string{"east=Bound"},
		conditions: unfulfilledConditions,
		statuses: []string{placed("east", "NoOverrideSpecified"),
			`(unfilled): Scheduled=False/ScheduleFailed "missing is not selected: specified cluster is not found"`},
	}}
	for _, tc := range cases {
		f.create(namespaceWithConfigMap(tc.name)...)
		f.create(&placementv1beta1.ClusterResourcePlacement{
			ObjectMeta: metav1.ObjectMeta{Name: tc.name},
			Spec:       placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector(tc.name), Policy: tc.policy},
		})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := f.withT(t)
			f.waitPlacement(tc.name, tc.bindings, tc.conditions)
			f.waitClusterStatuses(tc.name, tc.statuses)
			var members []string
			for _, b := range tc.bindings {
				m, _, _ := strings.Cut(b, "=")
				members = append(members, m)
			}
			f.waitWorks(tc.name, members)
			if tc.then != nil {
				tc.then(f)
			}
		})
	}
}

// waitWorks waits until exactly the members given hold a Work of the placement, each with
// the namespace and its ConfigMap.
func (f *fleetHub) waitWorks(crp string, members []string) {
	f.t.Helper()
	testenv.Eventually(f.t, "Works of "+crp, func() error {
		ws, err := f.works(crp)
		if err != nil {
			return err
		}
		var got []string
		for m, w := range ws {
			got = append(got, m)
			if n := len(w.Spec.Workload.Manifests); n != 2 {
				return fmt.Errorf("Work %s/%s has %d manifests, want 2 (the namespace and its ConfigMap)", w.Namespace, w.Name, n)
			}
		}
		sort.Strings(got)
		if !slices.Equal(got, members) {
			return fmt.Errorf("Works on %v, want on %v", got, members)
		}
		return nil
	})
}

// bindingScore is the affinity score the scheduler recorded on the placement's binding on
// cluster, or -1 without one.
func (f *fleetHub) bindingScore(crp, cluster string) int32 {
	f.t.Helper()
	var list placementv1beta1.ClusterResourceBindingList
	if err := f.admin.List(context.Background(), &list, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: crp}); err != nil {
		f.t.Fatal(err)
	}
	for _, b := range list.Items {
		if b.Spec.TargetCluster == cluster && b.Spec.ClusterDecision.ClusterScore != nil && b.Spec.ClusterDecision.ClusterScore.AffinityScore != nil {
			return *b.Spec.ClusterDecision.ClusterScore.AffinityScore
		}
	}
	return -1
}

// updateCRP changes a placement's spec, retrying on conflicts with the hub's writes.
func (f *fleetHub) updateCRP(name string, change func(*placementv1beta1.ClusterResourcePlacement)) {
	f.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := f.admin.Get(context.Background(), client.ObjectKey{Name: name}, crp); err != nil {
			return err
		}
		change(crp)
		return f.admin.Update(context.Background(), crp)
	})
	if err != nil {
		f.t.Fatalf("update ClusterResourcePlacement %s: %v", name, err)
	}
}

// TestInvalidPlacementRejected: the CRDs' validation refuses placements the API forbids,
// with an Invalid error naming the field and saying why.
func TestInvalidPlacementRejected(t *testing.T) {
	env := testenv.StartEnv(t)
	admin := testenv.Client(t, env.Config)
	for _, tc := range []struct {
		name   string
		policy *placementv1beta1.PlacementPolicy
		spec   func(*placementv1beta1.ClusterResourcePlacementSpec)
		// field is the cause's field path, message a part of the cause's message.
		field, message string
	}{{
		name:   "pickfixed-with-numberofclusters",
		policy: &placementv1beta1.PlacementPolicy{PlacementType: placement.PickFixed, ClusterNames: []string{"east"}, NumberOfClusters: ptr.To[int32](1)},
		field:  "spec.policy", message: "numberOfClusters is only allowed when placementType is PickN",
	}, {
		name:   "pickn-without-numberofclusters",
		policy: &placementv1beta1.PlacementPolicy{PlacementType: placement.PickN},
		field:  "spec.policy", message: "numberOfClusters is required when placementType is PickN",
	}, {
		name:   "unknown-placement-type",
		policy: &placementv1beta1.PlacementPolicy{PlacementType: "PickSome"},
		field:  "spec.policy.placementType", message: `Unsupported value: "PickSome"`,
	}, {
		name:   "pickall-with-clusternames",
		policy: &placementv1beta1.PlacementPolicy{PlacementType: placement.PickAll, ClusterNames: []string{"east"}},
		field:  "spec.policy", message: "clusterNames is only allowed when placementType is PickFixed",
	}, {
		name: "maxunavailable-over-100-percent",
		spec: func(s *placementv1beta1.ClusterResourcePlacementSpec) {
			s.Strategy.RollingUpdate = &placementv1beta1.RollingUpdateConfig{MaxUnavailable: ptr.To(intstr.FromString("150%"))}
		},
		field: "spec.strategy.rollingUpdate.maxUnavailable", message: `should match '^((100|[0-9]{1,2})%|[0-9]+)$'`,
	}, {
		name:  "no-resource-selectors",
		spec:  func(s *placementv1beta1.ClusterResourcePlacementSpec) { s.ResourceSelectors = nil },
		field: "spec.resourceSelectors", message: "Required value",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			crp := &placementv1beta1.ClusterResourcePlacement{
				ObjectMeta: metav1.ObjectMeta{Name: tc.name},
				Spec:       placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector("app"), Policy: tc.policy},
			}
			if tc.spec != nil {
				tc.spec(&crp.Spec)
			}
			err := admin.Create(context.Background(), crp)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create: got error %v, want an Invalid error", err)
			}
			t.Logf("rejected: %v", err)
			var status apierrors.APIStatus
			if !errors.As(err, &status) || status.Status().Details == nil {
				t.Fatalf("create: got %v without details, want the causes", err)
			}
			var causes []string
			found := false
			for _, c := range status.Status().Details.Causes {
				causes = append(causes, c.Field+": "+c.Message)
				if c.Field == tc.field && strings.Contains(c.Message, tc.message) {
					found = true
				}
			}
			if !found {
				t.Errorf("create: got causes %q, want one for field %s saying %q", causes, tc.field, tc.message)
			}
			if !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), tc.message) {
				t.Errorf("create: got message %q, want it to name %s and say %q", err.Error(), tc.field, tc.message)
			}
		})
	}
}

// TestReservedNamespaceSelection: a placement selecting a reserved namespace (kube-*, or a
// member's fleet-member-*) is valid to the API server, but the hub refuses the selection: it
// takes no resource snapshot, writes no Work, records the selection error as an event on the
// placement and reports the placement not scheduled (spec ARCH-RESERVED-NS and
// TSG-SCHED-RESERVED-NS: "Scheduled False (selection refused)"; model/resources.SelectionError
// says it "is reported as the placement's Scheduled=False condition").
func TestReservedNamespaceSelection(t *testing.T) {
	f := startFleet(t, testenv.StartEnv(t))
	f.join("east", nil)
	cases := []struct{ crp, namespace string }{
		{"sys", "kube-system"},
		{"member-ns", membership.Namespace("east")},
	}
	refusal := func(ns string) string {
		return fmt.Sprintf("resourceSelectors[0]: namespace %q is reserved and cannot be placed", ns)
	}
	for _, tc := range cases {
		f.create(&placementv1beta1.ClusterResourcePlacement{
			ObjectMeta: metav1.ObjectMeta{Name: tc.crp},
			Spec:       placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector(tc.namespace)},
		})
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.crp, func(t *testing.T) {
			f := f.withT(t)
			testenv.Eventually(t, "selection refusal recorded as an event on "+tc.crp, func() error {
				var list eventsv1.EventList
				if err := f.admin.List(ctx, &list); err != nil {
					return err
				}
				for _, e := range list.Items {
					if e.Regarding.Kind == "ClusterResourcePlacement" && e.Regarding.Name == tc.crp && e.Reason == "PlacementSelectionFailed" {
						if want := tc.crp + ": " + refusal(tc.namespace); e.Note != want {
							return fmt.Errorf("PlacementSelectionFailed note %q, want %q", e.Note, want)
						}
						return nil
					}
				}
				return fmt.Errorf("no PlacementSelectionFailed event for %s among %d events", tc.crp, len(list.Items))
			})
			// The refusal came from the placement controller's run: nothing was snapshotted.
			var snaps placementv1beta1.ClusterResourceSnapshotList
			if err := f.admin.List(ctx, &snaps, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: tc.crp}); err != nil {
				t.Fatal(err)
			}
			if len(snaps.Items) != 0 {
				t.Errorf("ClusterResourceSnapshots of %s: got %d, want none for a refused selection", tc.crp, len(snaps.Items))
			}
			if ws, err := f.workMembers(tc.crp); err != nil || len(ws) != 0 {
				t.Errorf("Works of %s: got %v (err %v), want none for a refused selection", tc.crp, ws, err)
			}
		})
	}
	// Both placements at once, so that a hub that never reports the refusal fails in 30s.
	testenv.Eventually(t, "placements reported not scheduled", func() error {
		var errs []error
		for _, tc := range cases {
			conds, crp, err := f.crpConditions(tc.crp)
			if err != nil {
				return err
			}
			var sched *metav1.Condition
			for i := range crp.Status.Conditions {
				if c := &crp.Status.Conditions[i]; c.Type == "ClusterResourcePlacementScheduled" {
					sched = c
				}
			}
			switch {
			case sched == nil:
				errs = append(errs, fmt.Errorf("%s: no ClusterResourcePlacementScheduled condition among %v", tc.crp, conds))
			case len(conds) != 1:
				errs = append(errs, fmt.Errorf("%s: conditions %v, want only ClusterResourcePlacementScheduled while the selectors are refused", tc.crp, conds))
			case sched.Status != metav1.ConditionFalse || sched.Reason != "InvalidResourceSelectors" || !strings.Contains(sched.Message, refusal(tc.namespace)):
				errs = append(errs, fmt.Errorf("%s: got ClusterResourcePlacementScheduled=%s/%s %q (all conditions %v), want False/InvalidResourceSelectors with a message saying %q",
					tc.crp, sched.Status, sched.Reason, sched.Message, conds, refusal(tc.namespace)))
			}
		}
		return errors.Join(errs...)
	})
}
