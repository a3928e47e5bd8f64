package hub_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestLargeSelectionWritesAWorkPerPart: on a real API server, a placement selecting about
// 2 MB (three ConfigMaps of 700 KiB, more than one Work may hold) gets its resource
// snapshot split into parts and one Work per part, named as KubeFleet names them
// (big-work, big-1, big-2), each under the API server's request limit; the placement
// becomes available once the agent reports on every Work.
func TestLargeSelectionWritesAWorkPerPart(t *testing.T) {
	f := startFleet(t, testenv.StartEnv(t))
	f.join("east", nil)
	objs := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "big"}}}
	for _, n := range []string{"a", "b", "c"} {
		objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "big", Name: n},
			Data: map[string]string{"blob": strings.Repeat(n, 700*1024)}})
	}
	f.create(objs...)
	f.create(&placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "big"},
		Spec:       placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector("big")},
	})
	f.waitPlacement("big", []string{"east=Bound"}, placedConditions)
	testenv.Eventually(t, "a Work per snapshot part", func() error {
		var ws placementv1beta1.WorkList
		if err := f.admin.List(context.Background(), &ws, client.InNamespace(membership.Namespace("east")),
			client.MatchingLabels{placementv1beta1.CRPTrackingLabel: "big"}); err != nil {
			return err
		}
		var got []string
		for _, w := range ws.Items {
			var names []string
			for _, m := range w.Spec.Workload.Manifests {
				for _, n := range []string{`"name":"a"`, `"name":"b"`, `"name":"c"`, `"name":"big"`} {
					if strings.Contains(string(m.Raw), n) {
						names = append(names, strings.Trim(strings.TrimPrefix(n, `"name":`), `"`))
					}
				}
			}
			got = append(got, w.Name+":"+strings.Join(names, ","))
		}
		slices.Sort(got)
		if want := []string{"big-1:b", "big-2:c", "big-work:big,a"}; !slices.Equal(got, want) {
			return fmt.Errorf("Works %v, want %v", got, want)
		}
		return nil
	})
}
