package main

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestHubPropagationFilters runs `fleet hub --skipped-propagating-apis v1/Secret
// --skipped-propagating-namespaces scratch` against a real API server: a placement of every
// namespace labelled team=web selects app and its ConfigMap, not app's Secret, nor scratch
// and what it holds (the simulator's scenarios/propagation-filters.yaml says the same).
func TestHubPropagationFilters(t *testing.T) {
	env := testenv.StartEnv(t)
	admin := testenv.Client(t, env.Config)
	ctx := context.Background()
	h := startFleet(t, "hub", "--kubeconfig", writeKubeconfig(t, env.Config), "--metrics-bind-address", "0",
		"--health-probe-bind-address", "0", "--leader-elect=false", "--log-format", "text",
		"--skipped-propagating-apis", "v1/Secret", "--skipped-propagating-namespaces", "scratch")
	for _, doc := range []string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: app, labels: {team: web}}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: app}\ndata: {mode: blue}",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: token, namespace: app}\nstringData: {token: not-for-members}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: scratch, labels: {team: web}}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes, namespace: scratch}\ndata: {draft: \"true\"}",
		`apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: web}
spec:
  resourceSelectors: [{group: "", version: v1, kind: Namespace, labelSelector: {matchLabels: {team: web}}}]`,
	} {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		if err := admin.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"/v1/ConfigMap/app/settings", "/v1/Namespace//app"}
	testenv.Eventually(t, "the placement selects app and its ConfigMap only", func() error {
		if code, ok := h.exited(); ok {
			t.Fatalf("fleet hub exited with %d; logs:\n%s", code, h.logs.String())
		}
		p := &v1beta1.ClusterResourcePlacement{}
		if err := admin.Get(ctx, client.ObjectKey{Name: "web"}, p); err != nil {
			return err
		}
		var got []string
		for _, r := range p.Status.SelectedResources {
			got = append(got, r.Group+"/"+r.Version+"/"+r.Kind+"/"+r.Namespace+"/"+r.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("selectedResources %v, want %v", got, want)
		}
		return nil
	})
	// The Secret and the skipped namespace stay on the hub untouched.
	if err := admin.Get(ctx, client.ObjectKey{Namespace: "app", Name: "token"}, &corev1.Secret{}); err != nil {
		t.Errorf("the Secret on the hub: %v", err)
	}
}
