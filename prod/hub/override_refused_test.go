package hub_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestOverrideRefusedWithoutWebhook: without the webhook, two ClusterResourceOverrides of
// the same resource are both stored; the hub snapshots the first and refuses the second,
// with a Warning event OverrideRefused naming the first (the webhook's rule, as a second line
// of defence).
func TestOverrideRefusedWithoutWebhook(t *testing.T) {
	cfg := testenv.Start(t)
	admin := testenv.Client(t, cfg)
	testenv.RunHub(t, cfg, testr.New(t))
	ctx := context.Background()
	cro := func(name string) *placementv1beta1.ClusterResourceOverride {
		return &placementv1beta1.ClusterResourceOverride{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: placementv1beta1.ClusterResourceOverrideSpec{
				ClusterResourceSelectors: []placementv1beta1.ClusterResourceSelector{{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "reader"}},
				Policy: placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
					ClusterSelector: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{}},
					OverrideType:    override.DeleteOverrideType}}}}}
	}
	if err := admin.Create(ctx, cro("first")); err != nil {
		t.Fatal(err)
	}
	// Creation times have a second's resolution: make the order certain.
	time.Sleep(1100 * time.Millisecond)
	if err := admin.Create(ctx, cro("second")); err != nil {
		t.Fatal(err)
	}
	snapshots := func(name string) (int, error) {
		var list placementv1beta1.ClusterResourceOverrideSnapshotList
		err := admin.List(ctx, &list, client.MatchingLabels{placementv1beta1.OverrideTrackingLabel: name})
		return len(list.Items), err
	}
	testenv.Eventually(t, "the second override is refused with an event", func() error {
		if n, err := snapshots("first"); err != nil || n != 1 {
			return fmt.Errorf("first has %d snapshots (%v)", n, err)
		}
		var evs eventsv1.EventList
		if err := admin.List(ctx, &evs); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == "second" && e.Reason == "OverrideRefused" && e.Type == "Warning" &&
				strings.Contains(e.Note, `already selected by ClusterResourceOverride "first"`) {
				return nil
			}
		}
		return fmt.Errorf("no OverrideRefused event on second among %d events", len(evs.Items))
	})
	if n, err := snapshots("second"); err != nil || n != 0 {
		t.Errorf("second has %d snapshots (%v), want none", n, err)
	}
}
