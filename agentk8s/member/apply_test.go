package member

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/fleetsim/fleetsim/agentk8s"
	"github.com/fleetsim/fleetsim/apis"
)

// TestApplyRetriesConflicts: when the object changes between the agent's read and its
// write (a conflict), the agent reads again, decides again and writes, with backoff; a
// conflict every time ends in an apply failure, not a hang.
func TestApplyRetriesConflicts(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := apis.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	owner := metav1.OwnerReference{APIVersion: agentk8s.AppliedWorkAPIVersion, Kind: agentk8s.AppliedWorkKind, Name: "crp-work", UID: "u"}
	manifest := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm", "namespace": "app"}, "data": map[string]any{"color": "blue"}}}
	for _, tc := range []struct {
		name      string
		conflicts int
		wantError bool
	}{
		{"two conflicts, then written", 2, false},
		{"always a conflict", 100, true},
	} {
		live := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "app"}, Data: map[string]string{"color": "red"}}
		updates := 0
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(live).WithInterceptorFuncs(interceptor.Funcs{
			Update: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				updates++
				if updates <= tc.conflicts {
					return apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "cm", nil)
				}
				return cl.Update(ctx, obj, opts...)
			},
		}).Build()
		a := &Agent{Member: c, Log: testr.New(t)}
		var since agentk8s.Sightings
		run := agentk8s.RunWork(agentk8s.Work{Name: "crp-work", Manifests: []*unstructured.Unstructured{manifest}, Owner: owner},
			apiMember{ctx: context.Background(), a: a}, &since, time.Now())
		res := run.Results[0]
		got := &corev1.ConfigMap{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "app", Name: "cm"}, got); err != nil {
			t.Fatal(err)
		}
		if tc.wantError {
			if res.ApplyError == "" || got.Data["color"] != "red" {
				t.Errorf("%s: result %+v, member value %q; want an apply error and the object untouched", tc.name, res, got.Data["color"])
			}
			continue
		}
		if res.ApplyError != "" || updates != tc.conflicts+1 || got.Data["color"] != "blue" {
			t.Errorf("%s: result %+v after %d updates, member value %q; want applied after %d", tc.name, res, updates, got.Data["color"], tc.conflicts+1)
		}
	}
}
