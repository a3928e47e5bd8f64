package member_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestAppliedWorkServedVersions: a member cluster serves AppliedWork at v1 and v1beta1, as
// KubeFleet does, one schema for both: an AppliedWork written at either version reads back
// the same at the other (real kube-apiserver; skipped without it unless
// FLEETSIM_REQUIRE_SERVERS=1).
func TestAppliedWorkServedVersions(t *testing.T) {
	env := testenv.StartMemberCluster(t)
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at := func(v string) dynamic.ResourceInterface {
		return dyn.Resource(schema.GroupVersionResource{Group: "placement.kubernetes-fleet.io", Version: v, Resource: "appliedworks"})
	}
	versions := []string{"v1", "v1beta1"}
	for _, write := range versions {
		t.Run(write, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "placement.kubernetes-fleet.io/" + write, "kind": "AppliedWork",
				"metadata": map[string]any{"name": "crp-work-" + write},
				"spec":     map[string]any{"workName": "crp-work-" + write, "workNamespace": "fleet-member-member1"},
			}}
			if _, err := at(write).Create(ctx, obj, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
				t.Fatalf("create at %s: %v", write, err)
			}
			for _, read := range versions {
				got, err := at(read).Get(ctx, obj.GetName(), metav1.GetOptions{})
				if err != nil {
					t.Fatalf("read at %s: %v", read, err)
				}
				if diff := cmp.Diff(obj.Object["spec"], got.Object["spec"]); diff != "" {
					t.Errorf("spec written at %s, read at %s (-want +got):\n%s", write, read, diff)
				}
				if want := "placement.kubernetes-fleet.io/" + read; got.GetAPIVersion() != want {
					t.Errorf("read at %s says apiVersion %s", read, got.GetAPIVersion())
				}
			}
		})
	}
}
