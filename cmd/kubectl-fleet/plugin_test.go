package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

const fixtures = `
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: east, labels: {env: prod}}
spec: {identity: {kind: User, name: east-agent, apiGroup: rbac.authorization.k8s.io}, heartbeatPeriodSeconds: 1}
---
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata: {name: west, labels: {env: dev}}
spec: {identity: {kind: User, name: west-agent, apiGroup: rbac.authorization.k8s.io}, heartbeatPeriodSeconds: 1}
---
apiVersion: v1
kind: Namespace
metadata: {name: app}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: app}
spec:
  resourceSelectors: [{group: "", version: v1, kind: Namespace, name: app}]
  policy:
    placementType: PickAll
    affinity:
      clusterAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          clusterSelectorTerms: [{labelSelector: {matchLabels: {env: prod}}}]
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterApprovalRequest
metadata: {name: rollout-canary}
spec: {parentStageRollout: rollout, targetStage: canary}
`

func kubeconfigFile(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "admin"}
	kc.CurrentContext = "hub"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// run runs kubectl-fleet with the hub's kubeconfig and -o json, decoding stdout into out.
func run(t *testing.T, kubeconfig string, out any, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := execute(context.Background(), append(args, "--kubeconfig", kubeconfig, "-o", "json"), &stdout, &stderr)
	if out != nil && stdout.Len() > 0 {
		if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
			t.Fatalf("kubectl-fleet %v: %v\n%s", args, err, stdout.String())
		}
	}
	return code, stderr.String()
}

// TestPluginOnARealHub: why, drain, uncordon and approve against a real API server with the
// hub's controllers and two stand-in members (east prod, west dev) and a placement that
// requires env=prod.
func TestPluginOnARealHub(t *testing.T) {
	env := testenv.StartEnv(t)
	testenv.RunHub(t, env.Config, testr.New(t))
	admin := testenv.Client(t, env.Config)
	ctx := context.Background()
	for _, doc := range strings.Split(fixtures, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		if err := admin.Create(ctx, u); err != nil {
			t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	for _, m := range []string{"east", "west"} {
		a := &testenv.StandInAgent{Client: testenv.Client(t, env.User(t, m+"-agent")), Member: m}
		actx, cancel := context.WithCancel(ctx)
		t.Cleanup(cancel)
		go a.Run(actx)
	}
	kc := kubeconfigFile(t, env.Config)
	testenv.Eventually(t, "app available on east", func() error {
		crp := &v1beta1.ClusterResourcePlacement{}
		if err := admin.Get(ctx, client.ObjectKey{Name: "app"}, crp); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(crp.Status.Conditions, "ClusterResourcePlacementAvailable") {
			return fmt.Errorf("not available: %v", crp.Status.Conditions)
		}
		return nil
	})

	// why: east picked, west not, with the scheduler's reason.
	var why whyResult
	if code, stderr := run(t, kc, &why, "why", "app"); code != exitOK {
		t.Fatalf("why = %d: %s", code, stderr)
	}
	var got []string
	for _, d := range why.Decisions {
		got = append(got, fmt.Sprintf("%s selected=%v reason-given=%v", d.Cluster, d.Selected, d.Reason != ""))
	}
	if diff := cmp.Diff([]string{"east selected=true reason-given=true", "west selected=false reason-given=true"}, got); diff != "" {
		t.Errorf("why app (-want +got):\n%s", diff)
	}
	var west whyResult
	if code, stderr := run(t, kc, &west, "why", "app", "west"); code != exitOK || len(west.Decisions) != 1 || !strings.Contains(west.Decisions[0].Reason, "affinity") {
		t.Errorf("why app west = %d %+v (%s), want west's one decision naming the affinity", code, west, stderr)
	}
	if code, stderr := run(t, kc, nil, "why", "nothing"); code != exitFailed || !strings.Contains(stderr, "placement nothing has no scheduling policy snapshot") {
		t.Errorf("why nothing = %d, %q", code, stderr)
	}

	// drain east: tainted, the placement evicted from it.
	var d drained
	if code, stderr := run(t, kc, &d, "drain", "east"); code != exitOK {
		t.Fatalf("drain east = %d: %s", code, stderr)
	}
	want := drained{Cluster: "east", Tainted: true, Evictions: []evicted{{Placement: "app", Eviction: "drain-east-app", Executed: "True"}}}
	if diff := cmp.Diff(want, d, cmpIgnoreMessage()); diff != "" {
		t.Errorf("drain east (-want +got):\n%s", diff)
	}
	mc := &clusterv1beta1.MemberCluster{}
	if err := admin.Get(ctx, client.ObjectKey{Name: "east"}, mc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]clusterv1beta1.Taint{cordonTaint}, mc.Spec.Taints); diff != "" {
		t.Errorf("east's taints after drain (-want +got):\n%s", diff)
	}
	testenv.Eventually(t, "no binding of app on east", func() error {
		var bs v1beta1.ClusterResourceBindingList
		if err := admin.List(ctx, &bs, client.MatchingLabels{v1beta1.CRPTrackingLabel: "app"}); err != nil {
			return err
		}
		for _, b := range bs.Items {
			if b.Spec.TargetCluster == "east" {
				return fmt.Errorf("binding %s (%s) still targets east", b.Name, b.Spec.State)
			}
		}
		return nil
	})

	// uncordon east: the taint is gone, and the placement picks east again.
	if code, stderr := run(t, kc, nil, "uncordon", "east"); code != exitOK {
		t.Fatalf("uncordon east = %d: %s", code, stderr)
	}
	if err := admin.Get(ctx, client.ObjectKey{Name: "east"}, mc); err != nil {
		t.Fatal(err)
	}
	if len(mc.Spec.Taints) != 0 {
		t.Errorf("east's taints after uncordon: %v", mc.Spec.Taints)
	}

	// approve: the Approved condition, once.
	var a approved
	if code, stderr := run(t, kc, &a, "approve", "clusterapprovalrequest", "rollout-canary"); code != exitOK {
		t.Fatalf("approve = %d: %s", code, stderr)
	}
	if diff := cmp.Diff(approved{Kind: "ClusterApprovalRequest", Name: "rollout-canary", Run: "rollout", Stage: "canary", Approved: true}, a); diff != "" {
		t.Errorf("approve (-want +got):\n%s", diff)
	}
	ar := &v1beta1.ClusterApprovalRequest{}
	if err := admin.Get(ctx, client.ObjectKey{Name: "rollout-canary"}, ar); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(ar.Status.Conditions, v1beta1.ApprovalRequestConditionApproved); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Approved condition %v, want True", c)
	}
	if code, _ := run(t, kc, &a, "approve", "car", "rollout-canary"); code != exitOK || !a.Already {
		t.Errorf("approve again = %d, %+v, want alreadyApproved", code, a)
	}
}

func cmpIgnoreMessage() cmp.Option {
	return cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Message" }, cmp.Ignore())
}

func TestPluginUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"approve", "approvalrequest", "x"}, `kind "approvalrequest": must be clusterapprovalrequest`},
		{[]string{"why", "app", "-o", "xml"}, `--output "xml"`},
		{[]string{"drain"}, "accepts 1 arg"},
		{[]string{"drain", "x", "--bogus"}, "unknown flag"},
	} {
		var stderr bytes.Buffer
		if code := execute(context.Background(), tc.args, io.Discard, &stderr); code != exitInvalid || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("kubectl-fleet %v = %d, %q; want %d and %q", tc.args, code, stderr.String(), exitInvalid, tc.want)
		}
	}
	var out bytes.Buffer
	if code := execute(context.Background(), []string{"--version"}, &out, io.Discard); code != exitOK || !strings.HasPrefix(out.String(), "kubectl-fleet version ") {
		t.Errorf("--version = %d, %q", code, out.String())
	}
}
