package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestJoinMakesIdentityMemberClusterAndHubKubeconfig: `fleet join` on a real hub and member
// API server makes the member's ServiceAccount and MemberCluster on the hub, and on the
// member the Secret whose kubeconfig authenticates as that ServiceAccount, which the hub's
// RBAC then confines to the member's reserved namespace, and the ConfigMap with the
// member's name; running it again succeeds and changes nothing but the token.
func TestJoinMakesIdentityMemberClusterAndHubKubeconfig(t *testing.T) {
	hubEnv := testenv.StartEnv(t)
	memberEnv := testenv.StartMemberCluster(t)
	testenv.RunHub(t, hubEnv.Config, testr.New(t))
	hub, member := testenv.Client(t, hubEnv.Config), testenv.Client(t, memberEnv.Config)
	ctx := context.Background()
	args := []string{"join", "--hub-kubeconfig", writeKubeconfig(t, hubEnv.Config), "--member-kubeconfig", writeKubeconfig(t, memberEnv.Config),
		"--member-name", "west", "--heartbeat-period-seconds", "5"}
	var out, errs syncBuffer
	if code := execute(ctx, args, &out, &errs); code != exitOK {
		t.Fatalf("fleet join = %d; stderr:\n%s", code, errs.String())
	}
	if want := "member west joined: identity fleet-system/fleet-member-west on the hub"; !strings.Contains(out.String(), want) {
		t.Errorf("stdout %q lacks %q", out.String(), want)
	}

	mc := &clusterv1beta1.MemberCluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: "west"}, mc); err != nil {
		t.Fatal(err)
	}
	wantIdentity := rbacv1.Subject{Kind: "ServiceAccount", Name: "fleet-member-west", Namespace: "fleet-system"}
	if diff := cmp.Diff(wantIdentity, mc.Spec.Identity); diff != "" {
		t.Errorf("MemberCluster identity (-want +got):\n%s", diff)
	}
	if mc.Spec.HeartbeatPeriodSeconds != 5 {
		t.Errorf("heartbeat period %d, want 5", mc.Spec.HeartbeatPeriodSeconds)
	}
	cm := &corev1.ConfigMap{}
	if err := member.Get(ctx, client.ObjectKey{Namespace: "fleet-system", Name: "fleet-member-config"}, cm); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"memberName": "west"}, cm.Data); diff != "" {
		t.Errorf("ConfigMap data (-want +got):\n%s", diff)
	}

	secretKubeconfig := func() []byte {
		t.Helper()
		s := &corev1.Secret{}
		if err := member.Get(ctx, client.ObjectKey{Namespace: "fleet-system", Name: "fleet-hub-kubeconfig"}, s); err != nil {
			t.Fatal(err)
		}
		return s.Data["kubeconfig"]
	}
	first := secretKubeconfig()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(first)
	if err != nil {
		t.Fatalf("the Secret's kubeconfig: %v", err)
	}
	if cfg.Host != hubEnv.Config.Host || cfg.BearerToken == "" {
		t.Errorf("the Secret's kubeconfig: host %q (want %q), token set %v", cfg.Host, hubEnv.Config.Host, cfg.BearerToken != "")
	}
	asMember := testenv.Client(t, cfg)
	review := &authenticationv1.SelfSubjectReview{}
	if err := asMember.Create(ctx, review); err != nil {
		t.Fatalf("SelfSubjectReview with the member's kubeconfig: %v", err)
	}
	if got, want := review.Status.UserInfo.Username, "system:serviceaccount:fleet-system:fleet-member-west"; got != want {
		t.Errorf("the member's kubeconfig authenticates as %q, want %q", got, want)
	}
	// The hub grants the identity its reserved namespace's InternalMemberCluster, and no Secrets.
	testenv.Eventually(t, "the member reads its InternalMemberCluster", func() error {
		return asMember.Get(ctx, client.ObjectKey{Namespace: "fleet-member-west", Name: "west"}, &clusterv1beta1.InternalMemberCluster{})
	})
	if err := asMember.List(ctx, &corev1.SecretList{}, client.InNamespace("fleet-member-west")); !apierrors.IsForbidden(err) {
		t.Errorf("the member lists Secrets of its namespace: %v, want forbidden", err)
	}

	// Again: the same objects, a fresh token.
	if code := execute(ctx, args, io.Discard, &errs); code != exitOK {
		t.Fatalf("fleet join again = %d; stderr:\n%s", code, errs.String())
	}
	if bytes.Equal(first, secretKubeconfig()) {
		t.Errorf("a second join left the old token in the Secret")
	}
	var sas corev1.ServiceAccountList
	if err := hub.List(ctx, &sas, client.InNamespace("fleet-system"), client.MatchingLabels{"fleetsim.io/member-cluster": "west"}); err != nil {
		t.Fatal(err)
	}
	if len(sas.Items) != 1 {
		t.Errorf("%d ServiceAccounts for west after two joins, want 1", len(sas.Items))
	}
}

func TestJoinRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"join", "--hub-kubeconfig", "h", "--member-kubeconfig", "m"}, "--member-name is required"},
		{[]string{"join", "--member-name", "a", "--member-kubeconfig", "m"}, "--hub-kubeconfig and --member-kubeconfig are required"},
		{[]string{"join", "--member-name", "a", "--hub-kubeconfig", "/nonexistent/h", "--member-kubeconfig", "m"}, "hub kubeconfig: stat /nonexistent/h"},
	} {
		var stderr syncBuffer
		if code := execute(context.Background(), tc.args, io.Discard, &stderr); code != exitInvalid || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("fleet %v = %d, %q; want %d and a message containing %q", tc.args, code, stderr.String(), exitInvalid, tc.want)
		}
	}
	// Checked before anything is written: no API server is needed.
	for _, tc := range []struct {
		o    joinOptions
		want string
	}{
		{joinOptions{name: "West_1", tokenDuration: 24 * 3600e9, heartbeatPeriod: 60}, `--member-name "West_1"`},
		{joinOptions{name: "west", tokenDuration: 60e9, heartbeatPeriod: 60}, "--token-duration 1m0s: must be at least 10m"},
		{joinOptions{name: "west", tokenDuration: 24 * 3600e9, heartbeatPeriod: 0}, "--heartbeat-period-seconds 0: must be from 1 to 600"},
	} {
		_, err := joinMember(context.Background(), nil, nil, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("joinMember(%+v) = %v, want an error containing %q", tc.o, err, tc.want)
		}
	}
}

// renderKustomization builds the kustomization in config/<dir>.
func renderKustomization(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	path := filepath.Join("..", "..", "config", dir)
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	rm, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), path)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", path, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range rm.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

// TestMemberOverlayRunsOnWhatJoinWrote: config/member, applied to a real member API server
// after `fleet join`, runs the member agent with the Deployment's own arguments, its name
// from the ConfigMap and its hub kubeconfig from the Secret join wrote, as the overlay's
// ServiceAccount: the member joins and a sample placement (a namespace and a ConfigMap)
// becomes Available, with the cluster-admin binding and with rbac-restricted.yaml instead.
func TestMemberOverlayRunsOnWhatJoinWrote(t *testing.T) {
	for _, tc := range []struct{ name, rbac string }{{"cluster-admin", ""}, {"restricted", "rbac-restricted.yaml"}} {
		t.Run(tc.name, func(t *testing.T) {
			hubEnv := testenv.StartEnv(t)
			memberEnv := testenv.StartMemberCluster(t)
			testenv.RunHub(t, hubEnv.Config, testr.New(t))
			hub, member := testenv.Client(t, hubEnv.Config), testenv.Client(t, memberEnv.Config)
			ctx := context.Background()
			if _, err := joinMember(ctx, hubEnv.Config, memberEnv.Config, joinOptions{name: "east", namespace: "fleet-system",
				secretName: defaultHubSecret, configMapName: defaultMemberConfig, tokenDuration: time.Hour, heartbeatPeriod: 2}); err != nil {
				t.Fatal(err)
			}
			objs := renderKustomization(t, "member")
			if tc.rbac != "" {
				// The restricted role replaces the cluster-admin binding, as its comment says.
				var kept []*unstructured.Unstructured
				for _, o := range objs {
					if o.GetKind() != "ClusterRoleBinding" {
						kept = append(kept, o)
					}
				}
				objs = append(kept, decodeFile(t, filepath.Join("..", "..", "config", "member", tc.rbac))...)
			}
			var deploy *appsv1.Deployment
			for _, o := range objs {
				err := member.Create(ctx, o)
				if apierrors.IsAlreadyExists(err) && (o.GetKind() == "CustomResourceDefinition" || o.GetKind() == "Namespace" || o.GetKind() == "ServiceAccount") {
					err = nil // the test environment and join made them
				}
				if err != nil {
					t.Fatalf("create %s %s: %v", o.GetKind(), o.GetName(), err)
				}
				if o.GetKind() == "Deployment" {
					deploy = &appsv1.Deployment{}
					if err := kruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, deploy); err != nil {
						t.Fatal(err)
					}
				}
			}
			if deploy == nil {
				t.Fatal("config/member renders no Deployment")
			}
			// What the kubelet would do: the env from the ConfigMap, the Secret mounted.
			c := deploy.Spec.Template.Spec.Containers[0]
			var nameFrom *corev1.ConfigMapKeySelector
			for _, e := range c.Env {
				if e.Name == "MEMBER_NAME" && e.ValueFrom != nil {
					nameFrom = e.ValueFrom.ConfigMapKeyRef
				}
			}
			if nameFrom == nil {
				t.Fatalf("the Deployment's MEMBER_NAME does not come from a ConfigMap: %+v", c.Env)
			}
			cm := &corev1.ConfigMap{}
			if err := member.Get(ctx, client.ObjectKey{Namespace: deploy.Namespace, Name: nameFrom.Name}, cm); err != nil {
				t.Fatalf("the ConfigMap the Deployment reads: %v", err)
			}
			secretName := deploy.Spec.Template.Spec.Volumes[0].Secret.SecretName
			s := &corev1.Secret{}
			if err := member.Get(ctx, client.ObjectKey{Namespace: deploy.Namespace, Name: secretName}, s); err != nil {
				t.Fatalf("the Secret the Deployment mounts: %v", err)
			}
			hubKC := filepath.Join(t.TempDir(), "kubeconfig")
			if err := os.WriteFile(hubKC, s.Data[kubeconfigKey], 0o600); err != nil {
				t.Fatal(err)
			}
			var args []string
			for _, a := range c.Args {
				switch {
				case a == "--in-cluster", strings.HasPrefix(a, "--metrics-bind-address"), strings.HasPrefix(a, "--health-probe-bind-address"):
				case strings.HasPrefix(a, "--hub-kubeconfig="):
					args = append(args, "--hub-kubeconfig="+hubKC)
				default:
					args = append(args, strings.ReplaceAll(a, "$(MEMBER_NAME)", cm.Data[nameFrom.Key]))
				}
			}
			args = append(args, "--member-kubeconfig", writeKubeconfigAs(t, memberEnv.Config, "system:serviceaccount:fleet-system:"+deploy.Spec.Template.Spec.ServiceAccountName),
				"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--poll", "200ms")
			m := startFleet(t, args...)
			applyFile(t, hub, filepath.Join("..", "..", "config", "samples", "placement.yaml"))
			testenv.Eventually(t, "east joined and the sample placement Available", func() error {
				if code, ok := m.exited(); ok {
					t.Fatalf("fleet %v exited with %d; logs:\n%s", args, code, m.logs.String())
				}
				mc := &clusterv1beta1.MemberCluster{}
				if err := hub.Get(ctx, client.ObjectKey{Name: "east"}, mc); err != nil {
					return err
				}
				if !meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1beta1.ConditionTypeJoined) {
					return fmt.Errorf("east not joined: %v", mc.Status.Conditions)
				}
				crp := &placementv1beta1.ClusterResourcePlacement{}
				if err := hub.Get(ctx, client.ObjectKey{Name: "hello-placement"}, crp); err != nil {
					return err
				}
				if !meta.IsStatusConditionTrue(crp.Status.Conditions, "ClusterResourcePlacementAvailable") {
					return fmt.Errorf("placement not Available: %v", crp.Status.Conditions)
				}
				return nil
			})
			if err := member.Get(ctx, client.ObjectKey{Namespace: "hello", Name: "hello-config"}, &corev1.ConfigMap{}); err != nil {
				t.Errorf("the placed ConfigMap on the member: %v", err)
			}
		})
	}
}

// decodeFile reads every object of a multi-document YAML file.
func decodeFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}
