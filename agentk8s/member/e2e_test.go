package member_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/agentk8s"
	"github.com/fleetsim/fleetsim/agentk8s/member"
	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// wait polls f until it succeeds, failing the test after two minutes: the machine running
// the test may be loaded, so the deadline is generous and nothing waits on a fixed sleep.
func wait(t *testing.T, what string, f func() error) {
	t.Helper()
	waitWithin(t, 2*time.Minute, what, f)
}

// waitWithin polls f until it succeeds, failing the test after d.
func waitWithin(t *testing.T, d time.Duration, what string, f func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = f(); err == nil {
			return
		}
	}
	t.Fatalf("%s: still %v after %s", what, err, d)
}

func decode(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

type fleet struct {
	t       *testing.T
	hub     *testenv.Env
	admin   client.Client
	members map[string]client.Client
	done    map[string]<-chan error
}

// startFleet starts a hub API server with `fleet hub`'s controllers and, for each name, a
// member API server with a real member agent joined to the hub.
func startFleet(t *testing.T, names ...string) *fleet {
	return startFleetDrift(t, 2*time.Second, names...)
}

// startFleetDrift is startFleet with agents that check drift every driftPeriod.
func startFleetDrift(t *testing.T, driftPeriod time.Duration, names ...string) *fleet {
	hub := testenv.StartEnv(t)
	f := &fleet{t: t, hub: hub, admin: testenv.Client(t, hub.Config), members: map[string]client.Client{}, done: map[string]<-chan error{}}
	testenv.RunHub(t, hub.Config, testr.New(t))
	for _, name := range names {
		env := testenv.StartMemberCluster(t)
		f.members[name] = testenv.Client(t, env.Config)
		mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: clusterv1beta1.MemberClusterSpec{HeartbeatPeriodSeconds: 1,
				Identity: rbacv1.Subject{Kind: "User", Name: name + "-agent", APIGroup: "rbac.authorization.k8s.io"}}}
		if err := f.admin.Create(context.Background(), mc); err != nil {
			t.Fatal(err)
		}
		_, f.done[name] = testenv.RunMemberAgent(t, name, hub.User(t, name+"-agent"), env.Config, testr.New(t), driftPeriod)
	}
	for _, name := range names {
		wait(t, name+" joined and healthy", func() error {
			mc := &clusterv1beta1.MemberCluster{}
			if err := f.admin.Get(context.Background(), client.ObjectKey{Name: name}, mc); err != nil {
				return err
			}
			for _, typ := range []string{"Joined", "Healthy"} {
				if c := meta.FindStatusCondition(mc.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionTrue {
					return fmt.Errorf("%s is %v", typ, c)
				}
			}
			return nil
		})
	}
	return f
}

// placeNamespace creates on the hub a namespace ns holding a ConfigMap settings (color:
// blue) and a PickAll placement of that namespace named ns, with strategy (one YAML line
// under the placement's spec.strategy).
func (f *fleet) placeNamespace(t *testing.T, ns, strategy string) {
	t.Helper()
	for _, doc := range []string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + ns + "}\ndata: {color: blue}",
		`apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: ` + ns + `}
spec:
  resourceSelectors: [{group: "", version: v1, kind: Namespace, name: ` + ns + `}]
  policy: {placementType: PickAll}
  strategy:
    ` + strategy,
	} {
		if err := f.admin.Create(context.Background(), decode(t, doc)); err != nil {
			t.Fatal(err)
		}
	}
}

// clusterEntry returns a placement's entry for a cluster.
func (f *fleet) clusterEntry(crp, cluster string) (*v1beta1.ResourcePlacementStatus, error) {
	p := &v1beta1.ClusterResourcePlacement{}
	if err := f.admin.Get(context.Background(), client.ObjectKey{Name: crp}, p); err != nil {
		return nil, err
	}
	for i := range p.Status.PlacementStatuses {
		if p.Status.PlacementStatuses[i].ClusterName == cluster {
			return &p.Status.PlacementStatuses[i], nil
		}
	}
	return nil, fmt.Errorf("no entry for %s in %+v", cluster, p.Status)
}

func (f *fleet) placementCondition(crp, typ string, want metav1.ConditionStatus) error {
	p := &v1beta1.ClusterResourcePlacement{}
	if err := f.admin.Get(context.Background(), client.ObjectKey{Name: crp}, p); err != nil {
		return err
	}
	c := meta.FindStatusCondition(p.Status.Conditions, typ)
	if c == nil || c.Status != want || c.ObservedGeneration != p.Generation {
		return fmt.Errorf("%s is %+v, want %s at generation %d", typ, c, want, p.Generation)
	}
	return nil
}

func (f *fleet) memberObject(cluster, apiVersion, kind, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	err := f.members[cluster].Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u)
	return u, err
}

// TestMemberAgentEndToEnd: the hub and real member agents on three API servers. Members
// join and report properties from their nodes; a PickN placement of a namespace with a
// Deployment, a ConfigMap and a Service lands on the member the property sorter prefers,
// owned by the Work's AppliedWork; the Deployment becomes available once its status says
// so; an edit on the member under IfNotDrifted is reported as drift; an agent that cannot
// reach the hub leaves the member untouched; deleting the placement removes the objects; a
// member leaves and its agent stops.
func TestMemberAgentEndToEnd(t *testing.T) {
	f := startFleet(t, "member-1", "member-2")
	ctx := context.Background()

	// member-1 has a node: the agent reports it, and the scheduler prefers it.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	if err := f.members["member-1"].Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	node.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}
	node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3800m"), corev1.ResourceMemory: resource.MustParse("7Gi")}
	if err := f.members["member-1"].Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	wait(t, "member-1 reports one node and its cpu", func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := f.admin.Get(ctx, client.ObjectKey{Name: "member-1"}, mc); err != nil {
			return err
		}
		if v := mc.Status.Properties["kubernetes-fleet.io/node-count"].Value; v != "1" {
			return fmt.Errorf("node count %q", v)
		}
		if q := mc.Status.ResourceUsage.Available[corev1.ResourceCPU]; q.Cmp(resource.MustParse("3800m")) != 0 {
			return fmt.Errorf("available cpu %s", q.String())
		}
		return nil
	})

	for _, doc := range []string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: web}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: web}\ndata: {color: blue}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: frontend, namespace: web}\nspec: {ports: [{port: 80}], selector: {app: frontend}}",
		`apiVersion: apps/v1
kind: Deployment
metadata: {name: frontend, namespace: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: frontend}}
  template:
    metadata: {labels: {app: frontend}}
    spec: {containers: [{name: web, image: nginx:1.27}]}`,
		`apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: web}
spec:
  resourceSelectors: [{group: "", version: v1, kind: Namespace, name: web}]
  policy:
    placementType: PickN
    numberOfClusters: 1
    affinity:
      clusterAffinity:
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 100
          preference:
            propertySorter: {name: kubernetes-fleet.io/node-count, sortOrder: Descending}`,
	} {
		if err := f.admin.Create(ctx, decode(t, doc)); err != nil {
			t.Fatal(err)
		}
	}
	wait(t, "the workload lands on member-1, owned by its AppliedWork", func() error {
		for _, o := range [][3]string{{"v1", "ConfigMap", "settings"}, {"v1", "Service", "frontend"}, {"apps/v1", "Deployment", "frontend"}} {
			u, err := f.memberObject("member-1", o[0], o[1], "web", o[2])
			if err != nil {
				return err
			}
			if refs := u.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != agentk8s.AppliedWorkKind || refs[0].Name != "web-work" {
				return fmt.Errorf("%s owners %+v", o[1], refs)
			}
		}
		return f.placementCondition("web", "ClusterResourcePlacementApplied", metav1.ConditionTrue)
	})
	if _, err := f.memberObject("member-2", "v1", "ConfigMap", "web", "settings"); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap on member-2, not picked: %v", err)
	}
	// The deployment is not available until its status says so; no kubelet or
	// controller-manager runs, so the test writes the status they would.
	if err := f.placementCondition("web", "ClusterResourcePlacementAvailable", metav1.ConditionTrue); err == nil {
		t.Error("the placement is available before its deployment is")
	}
	dep, err := f.memberObject("member-1", "apps/v1", "Deployment", "web", "frontend")
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedMap(dep.Object, map[string]any{"observedGeneration": dep.GetGeneration(), "replicas": int64(1),
		"updatedReplicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1)}, "status")
	if err := f.members["member-1"].Status().Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	wait(t, "the placement is available", func() error {
		return f.placementCondition("web", "ClusterResourcePlacementAvailable", metav1.ConditionTrue)
	})

	// IfNotDrifted: an edit of a managed field on the member is a drift; Fleet stops applying.
	// The hub may be writing the placement's status: retry on conflict, as a user would.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crp := &v1beta1.ClusterResourcePlacement{}
		if err := f.admin.Get(ctx, client.ObjectKey{Name: "web"}, crp); err != nil {
			return err
		}
		crp.Spec.Strategy.ApplyStrategy = &v1beta1.ApplyStrategy{WhenToApply: v1beta1.WhenToApplyTypeIfNotDrifted}
		return f.admin.Update(ctx, crp)
	}); err != nil {
		t.Fatal(err)
	}
	wait(t, "member-1's agent reported on the Work with the new apply strategy", func() error {
		w := &v1beta1.Work{}
		if err := f.admin.Get(ctx, client.ObjectKey{Namespace: "fleet-member-member-1", Name: "web-work"}, w); err != nil {
			return err
		}
		if s := w.Spec.ApplyStrategy; s == nil || s.WhenToApply != v1beta1.WhenToApplyTypeIfNotDrifted {
			return fmt.Errorf("the Work's apply strategy is %+v", s)
		}
		if c := meta.FindStatusCondition(w.Status.Conditions, "Applied"); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != w.Generation {
			return fmt.Errorf("Applied is %+v at Work generation %d", c, w.Generation)
		}
		return nil
	})
	wait(t, "edit the ConfigMap on member-1", func() error {
		cm, err := f.memberObject("member-1", "v1", "ConfigMap", "web", "settings")
		if err != nil {
			return err
		}
		_ = unstructured.SetNestedField(cm.Object, "red", "data", "color")
		return f.members["member-1"].Update(ctx, cm)
	})
	wait(t, "the drift is reported", func() error {
		e, err := f.clusterEntry("web", "member-1")
		if err != nil {
			return err
		}
		if len(e.DriftedPlacements) != 1 || len(e.DriftedPlacements[0].ObservedDrifts) != 1 || e.DriftedPlacements[0].ObservedDrifts[0] !=
			(v1beta1.PatchDetail{Path: "/data/color", ValueInHub: "blue", ValueInMember: "red"}) {
			return fmt.Errorf("drifted placements %+v", e.DriftedPlacements)
		}
		if !slices.ContainsFunc(e.FailedPlacements, func(p v1beta1.FailedResourcePlacement) bool { return p.Condition.Reason == agentk8s.ReasonFoundDrifts }) {
			return fmt.Errorf("failed placements %+v", e.FailedPlacements)
		}
		return nil
	})
	if cm, err := f.memberObject("member-1", "v1", "ConfigMap", "web", "settings"); err != nil || cm.Object["data"].(map[string]any)["color"] != "red" {
		t.Errorf("the drifted ConfigMap was overwritten under IfNotDrifted: %v %v", cm, err)
	}

	// An agent that cannot reach the hub changes nothing on its member.
	cut := &member.Agent{Hub: testenv.Client(t, &rest.Config{Host: "https://127.0.0.1:1", Timeout: 2 * time.Second}),
		Member: f.members["member-1"], Name: "member-1", Log: testr.New(t)}
	for range 3 {
		if _, err := cut.Round(ctx); err == nil {
			t.Fatal("a round without the hub succeeded")
		}
	}
	for _, o := range [][3]string{{"v1", "ConfigMap", "settings"}, {"v1", "Service", "frontend"}, {"apps/v1", "Deployment", "frontend"}} {
		if _, err := f.memberObject("member-1", o[0], o[1], "web", o[2]); err != nil {
			t.Errorf("%s after rounds without the hub: %v", o[1], err)
		}
	}
	if cm, err := f.memberObject("member-1", "v1", "ConfigMap", "web", "settings"); err != nil || cm.Object["data"].(map[string]any)["color"] != "red" {
		t.Errorf("the ConfigMap changed while the hub was unreachable: %v %v", cm, err)
	}

	// Deleting the placement removes what it placed from the member.
	if err := f.admin.Delete(ctx, &v1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "web"}}); err != nil {
		t.Fatal(err)
	}
	wait(t, "the objects are removed from member-1", func() error {
		for _, o := range [][3]string{{"v1", "ConfigMap", "settings"}, {"v1", "Service", "frontend"}, {"apps/v1", "Deployment", "frontend"}} {
			if _, err := f.memberObject("member-1", o[0], o[1], "web", o[2]); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s still there (%v)", o[1], err)
			}
		}
		aw := &unstructured.Unstructured{}
		aw.SetGroupVersionKind(member.AppliedWorkGVK)
		if err := f.members["member-1"].Get(ctx, client.ObjectKey{Name: "web-work"}, aw); !apierrors.IsNotFound(err) {
			return fmt.Errorf("AppliedWork still there (%v)", err)
		}
		return nil
	})

	// A placement with deleteStrategy Abandon: deleting it leaves its objects on the member,
	// without the AppliedWork's owner reference.
	for _, doc := range []string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: kept}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: kept}\ndata: {color: blue}",
		`apiVersion: placement.kubernetes-fleet.io/v1
kind: ClusterResourcePlacement
metadata: {name: kept}
spec:
  resourceSelectors: [{group: "", version: v1, kind: Namespace, name: kept}]
  policy: {placementType: PickFixed, clusterNames: [member-1]}
  strategy:
    deleteStrategy: {propagationPolicy: Abandon}`,
	} {
		if err := f.admin.Create(ctx, decode(t, doc)); err != nil {
			t.Fatal(err)
		}
	}
	wait(t, "the abandoned placement's ConfigMap lands on member-1", func() error {
		u, err := f.memberObject("member-1", "v1", "ConfigMap", "kept", "settings")
		if err != nil {
			return err
		}
		if refs := u.GetOwnerReferences(); len(refs) != 1 || refs[0].Name != "kept-work" {
			return fmt.Errorf("owners %+v", refs)
		}
		aw := &unstructured.Unstructured{}
		aw.SetGroupVersionKind(member.AppliedWorkGVK)
		if err := f.members["member-1"].Get(ctx, client.ObjectKey{Name: "kept-work"}, aw); err != nil {
			return err
		}
		if p := aw.GetAnnotations()[v1beta1.DeletePropagationPolicyAnnotation]; p != "Abandon" {
			return fmt.Errorf("AppliedWork records delete policy %q", p)
		}
		return nil
	})
	if err := f.admin.Delete(ctx, &v1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}); err != nil {
		t.Fatal(err)
	}
	wait(t, "the AppliedWork of the abandoned placement is gone", func() error {
		aw := &unstructured.Unstructured{}
		aw.SetGroupVersionKind(member.AppliedWorkGVK)
		if err := f.members["member-1"].Get(ctx, client.ObjectKey{Name: "kept-work"}, aw); !apierrors.IsNotFound(err) {
			return fmt.Errorf("AppliedWork still there (%v)", err)
		}
		return nil
	})
	for _, o := range [][4]string{{"v1", "Namespace", "", "kept"}, {"v1", "ConfigMap", "kept", "settings"}} {
		u, err := f.memberObject("member-1", o[0], o[1], o[2], o[3])
		if err != nil {
			t.Errorf("abandoned %s: %v", o[1], err)
			continue
		}
		if refs := u.GetOwnerReferences(); len(refs) != 0 {
			t.Errorf("abandoned %s keeps owners %+v", o[1], refs)
		}
	}

	// member-2 leaves: its agent acknowledges and stops.
	if err := f.admin.Delete(ctx, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "member-2"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-f.done["member-2"]:
		if !errors.Is(err, member.ErrLeft) {
			t.Errorf("member-2's agent returned %v, want ErrLeft", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("member-2's agent did not stop after leaving")
	}
	wait(t, "member-2's MemberCluster is gone", func() error {
		err := f.admin.Get(ctx, client.ObjectKey{Name: "member-2"}, &clusterv1beta1.MemberCluster{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
}

// TestMemberAgentApplyStrategies: real agents on real API servers under each apply strategy
// against objects that already exist on the member (APPLY-TAKEOVER, APPLY-REPORTDIFF) or are
// edited there (APPLY-WHENTOAPPLY with FullComparison).
func TestMemberAgentApplyStrategies(t *testing.T) {
	f := startFleet(t, "member-1")
	ctx := context.Background()
	m := f.members["member-1"]
	for _, ns := range []string{"take-never", "take-ifnodiff", "audit"} {
		for _, doc := range []string{
			"apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + ns + "}\ndata: {color: red}",
		} {
			if err := m.Create(ctx, decode(t, doc)); err != nil {
				t.Fatal(err)
			}
		}
	}
	strategies := map[string]string{
		"take-never":    "{whenToTakeOver: Never}",
		"take-ifnodiff": "{whenToTakeOver: IfNoDiff}",
		"audit":         "{type: ReportDiff}",
		"full":          "{whenToApply: Always, comparisonOption: FullComparison}",
	}
	for _, ns := range []string{"take-never", "take-ifnodiff", "audit", "full"} {
		f.placeNamespace(t, ns, "applyStrategy: "+strategies[ns])
	}
	details := func(crp string, check func(e *v1beta1.ResourcePlacementStatus) error) func() error {
		return func() error {
			e, err := f.clusterEntry(crp, "member-1")
			if err != nil {
				return err
			}
			return check(e)
		}
	}
	failedWith := func(e *v1beta1.ResourcePlacementStatus, reason string) error {
		if !slices.ContainsFunc(e.FailedPlacements, func(p v1beta1.FailedResourcePlacement) bool { return p.Condition.Reason == reason }) {
			return fmt.Errorf("failed placements %+v, want one %s", e.FailedPlacements, reason)
		}
		return nil
	}
	diffPaths := func(ds []v1beta1.DiffedResourcePlacement) []string {
		var out []string
		for _, d := range ds {
			for _, p := range d.ObservedDiffs {
				out = append(out, d.Kind+p.Path)
			}
		}
		return out
	}
	wait(t, "Never refuses the pre-existing ConfigMap", details("take-never", func(e *v1beta1.ResourcePlacementStatus) error {
		return failedWith(e, agentk8s.ReasonNotTakenOver)
	}))
	wait(t, "IfNoDiff refuses it with the difference", details("take-ifnodiff", func(e *v1beta1.ResourcePlacementStatus) error {
		if err := failedWith(e, agentk8s.ReasonFailedToTakeOver); err != nil {
			return err
		}
		if got := diffPaths(e.DiffedPlacements); !slices.Equal(got, []string{"ConfigMap/data/color"}) {
			return fmt.Errorf("diffed %v", got)
		}
		return nil
	}))
	wait(t, "ReportDiff reports the difference", func() error {
		if err := f.placementCondition("audit", "ClusterResourcePlacementDiffReported", metav1.ConditionTrue); err != nil {
			return err
		}
		return details("audit", func(e *v1beta1.ResourcePlacementStatus) error {
			if got := diffPaths(e.DiffedPlacements); !slices.Equal(got, []string{"ConfigMap/data/color"}) {
				return fmt.Errorf("diffed %v", got)
			}
			if meta.FindStatusCondition(e.Conditions, "Applied") != nil {
				return fmt.Errorf("an Applied condition under ReportDiff: %+v", e.Conditions)
			}
			return nil
		})()
	})
	for _, ns := range []string{"take-never", "take-ifnodiff", "audit"} {
		cm, err := f.memberObject("member-1", "v1", "ConfigMap", ns, "settings")
		if err != nil || cm.Object["data"].(map[string]any)["color"] != "red" || len(cm.GetOwnerReferences()) != 0 {
			t.Errorf("%s: the member's ConfigMap was changed or claimed: %v %v", ns, cm, err)
		}
	}

	// Always with FullComparison: a managed edit is overwritten, an added field reported.
	wait(t, "full is applied", func() error {
		return f.placementCondition("full", "ClusterResourcePlacementAvailable", metav1.ConditionTrue)
	})
	wait(t, "edit the ConfigMap of full on the member", func() error {
		cm, err := f.memberObject("member-1", "v1", "ConfigMap", "full", "settings")
		if err != nil {
			return err
		}
		_ = unstructured.SetNestedField(cm.Object, "red", "data", "color")
		_ = unstructured.SetNestedField(cm.Object, "ops", "data", "owner")
		return m.Update(ctx, cm)
	})
	wait(t, "the managed field is overwritten and the added one reported", func() error {
		cm, err := f.memberObject("member-1", "v1", "ConfigMap", "full", "settings")
		if err != nil {
			return err
		}
		if c := cm.Object["data"].(map[string]any)["color"]; c != "blue" {
			return fmt.Errorf("color %v", c)
		}
		e, err := f.clusterEntry("full", "member-1")
		if err != nil {
			return err
		}
		var paths []string
		for _, d := range e.DriftedPlacements {
			for _, p := range d.ObservedDrifts {
				paths = append(paths, d.Kind+p.Path)
			}
		}
		if !slices.Equal(paths, []string{"ConfigMap/data/owner"}) {
			return fmt.Errorf("drifted %v", paths)
		}
		return f.placementCondition("full", "ClusterResourcePlacementApplied", metav1.ConditionTrue)
	})
}

// TestMemberAgentWatchesAppliedObjects: with a drift period of ten minutes, an edit or a
// delete of an applied object on the member is found through the agent's watch of the
// applied objects: under whenToApply Always it is overwritten back (and a deleted object
// created again), under IfNotDrifted the drift is reported on the Work and the placement,
// each well within the period. The agent's own writes do not wake it into re-applying.
func TestMemberAgentWatchesAppliedObjects(t *testing.T) {
	f := startFleetDrift(t, 10*time.Minute, "member-1")
	ctx := context.Background()
	m := f.members["member-1"]
	// Well within the drift period, generous for a loaded machine.
	const prompt = time.Minute
	for ns, strategy := range map[string]string{"always": "{whenToApply: Always}", "guarded": "{whenToApply: IfNotDrifted}"} {
		f.placeNamespace(t, ns, "applyStrategy: "+strategy)
	}
	for _, ns := range []string{"always", "guarded"} {
		wait(t, ns+" is applied and available", func() error {
			return f.placementCondition(ns, "ClusterResourcePlacementAvailable", metav1.ConditionTrue)
		})
	}
	color := func(ns string) (string, string, error) {
		cm, err := f.memberObject("member-1", "v1", "ConfigMap", ns, "settings")
		if err != nil {
			return "", "", err
		}
		c, _, _ := unstructured.NestedString(cm.Object, "data", "color")
		return c, cm.GetResourceVersion(), nil
	}
	edit := func(ns string) {
		t.Helper()
		wait(t, "edit the ConfigMap in "+ns, func() error {
			cm, err := f.memberObject("member-1", "v1", "ConfigMap", ns, "settings")
			if err != nil {
				return err
			}
			_ = unstructured.SetNestedField(cm.Object, "red", "data", "color")
			return m.Update(ctx, cm)
		})
	}

	// Always: the edit is overwritten back.
	edit("always")
	var settled string
	waitWithin(t, prompt, "the edit under Always is overwritten", func() error {
		c, rv, err := color("always")
		if err != nil {
			return err
		}
		if c != "blue" {
			return fmt.Errorf("color %q", c)
		}
		settled = rv
		return nil
	})
	// A deleted object is created again.
	if err := m.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "always", Name: "settings"}}); err != nil {
		t.Fatal(err)
	}
	waitWithin(t, prompt, "the deleted ConfigMap under Always is created again", func() error {
		c, rv, err := color("always")
		if err != nil {
			return err
		}
		if c != "blue" {
			return fmt.Errorf("color %q", c)
		}
		settled = rv
		return nil
	})

	// IfNotDrifted: the edit stays and the drift is reported on the Work and the placement.
	edit("guarded")
	waitWithin(t, prompt, "the drift under IfNotDrifted is reported on the Work", func() error {
		w := &v1beta1.Work{}
		if err := f.admin.Get(ctx, client.ObjectKey{Namespace: "fleet-member-member-1", Name: "guarded-work"}, w); err != nil {
			return err
		}
		for _, mc := range w.Status.ManifestConditions {
			if mc.Identifier.Kind == "ConfigMap" && mc.DriftDetails != nil &&
				slices.Contains(mc.DriftDetails.ObservedDrifts, v1beta1.PatchDetail{Path: "/data/color", ValueInHub: "blue", ValueInMember: "red"}) {
				return nil
			}
		}
		return fmt.Errorf("manifest conditions %+v", w.Status.ManifestConditions)
	})
	waitWithin(t, prompt, "the drift under IfNotDrifted is reported on the placement", func() error {
		e, err := f.clusterEntry("guarded", "member-1")
		if err != nil {
			return err
		}
		if len(e.DriftedPlacements) != 1 || !slices.Contains(e.DriftedPlacements[0].ObservedDrifts,
			v1beta1.PatchDetail{Path: "/data/color", ValueInHub: "blue", ValueInMember: "red"}) {
			return fmt.Errorf("drifted placements %+v", e.DriftedPlacements)
		}
		return nil
	})
	if c, _, err := color("guarded"); err != nil || c != "red" {
		t.Errorf("the drifted ConfigMap under IfNotDrifted: color %q, %v", c, err)
	}
	// The overwritten ConfigMap was not written again since (no loop of re-applies on the
	// agent's own writes), while the IfNotDrifted part ran.
	if _, rv, err := color("always"); err != nil || rv != settled {
		t.Errorf("the ConfigMap under Always was written again: resourceVersion %s, was %s (%v)", rv, settled, err)
	}
}
