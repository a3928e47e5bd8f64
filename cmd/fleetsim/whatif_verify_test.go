package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/prod/snapshot"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestSnapshotAndVerifyOnRealHub: `fleetsim snapshot` of a real hub with real member
// agents, then `fleetsim whatif --verify` of a policy edit: the hub reaches the prediction
// (exit 0), and the snapshot wrote nothing to the hub.
func TestSnapshotAndVerifyOnRealHub(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	env := testenv.StartEnv(t)
	admin := testenv.Client(t, env.Config)
	testenv.RunHub(t, env.Config, logr.Discard())
	ctx := context.Background()
	for _, name := range []string{"alpha", "bravo"} {
		mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: clusterv1beta1.MemberClusterSpec{HeartbeatPeriodSeconds: 1,
				Identity: rbacv1.Subject{Kind: "User", Name: name + "-agent", APIGroup: "rbac.authorization.k8s.io"}}}
		if err := admin.Create(ctx, mc); err != nil {
			t.Fatal(err)
		}
		member := env.StartMemberOn(t, name)
		testenv.RunMemberAgent(t, name, env.User(t, name+"-agent"), member.Config, logr.Discard(), 0)
		testenv.Eventually(t, name+" joined and healthy", func() error {
			got := &clusterv1beta1.MemberCluster{}
			if err := admin.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
				return err
			}
			for _, typ := range []string{"Joined", "Healthy"} {
				if c := meta.FindStatusCondition(got.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionTrue {
					return fmt.Errorf("%s is %v", typ, c)
				}
			}
			return nil
		})
	}
	kubeconfig := writeHubKubeconfig(t, env.Config)
	start := write(t, "start.yaml", `apiVersion: v1
kind: Namespace
metadata:
  name: app
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: web
spec:
  resourceSelectors:
    - {group: "", version: v1, kind: Namespace, name: app}
  policy:
    placementType: PickN
    numberOfClusters: 1
  strategy:
    rollingUpdate:
      unavailablePeriodSeconds: 1
`)
	fleet := filepath.Join(t.TempDir(), "fleet.yaml")
	// The starting state is made with --verify too: an empty hub's snapshot, a new placement.
	if code, out, errOut := run(t, "snapshot", "--kubeconfig", kubeconfig, "-o", fleet); code != exitOK {
		t.Fatalf("snapshot = exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := run(t, "whatif", fleet, "--change", start, "--verify", kubeconfig, "--verify-timeout", "1m"); code != exitOK {
		t.Fatalf("whatif --verify (placement created) = exit %d\n%s\n%s", code, out, errOut)
	}

	before, err := snapshot.ReadState(ctx, admin, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run(t, "snapshot", "--kubeconfig", kubeconfig, "-o", fleet); code != exitOK {
		t.Fatalf("snapshot = exit %d\n%s\n%s", code, out, errOut)
	} else if !strings.Contains(errOut, "captured: 1 ClusterResourcePlacement, 2 MemberCluster, 1 selected resource") {
		t.Errorf("stderr of snapshot:\n%s", errOut)
	}
	unchanged, err := snapshot.ReadState(ctx, admin, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Placements["web"].Clusters) != 1 || len(unchanged.Placements["web"].Clusters) != 1 {
		t.Fatalf("web before %+v, after the snapshot %+v", before.Placements["web"], unchanged.Placements["web"])
	}
	scale := write(t, "scale.yaml", strings.Replace(string(mustRead(t, start)), "numberOfClusters: 1", "numberOfClusters: 2", 1))
	code, out, errOut := run(t, "whatif", fleet, "--change", scale, "--verify", kubeconfig, "--verify-timeout", "1m")
	if code != exitOK {
		t.Fatalf("whatif --verify (policy edited) = exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"Placement web", "added ", "Verified on ", "the hub reached the predicted bindings and manifests"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeHubKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "admin"}
	kc.CurrentContext = "hub"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}
