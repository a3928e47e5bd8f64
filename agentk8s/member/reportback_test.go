package member_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
)

// TestMemberAgentReportsBack: with strategy.reportBackStrategy Mirror to the Work API, the
// real member agent puts each applied object's apiVersion, kind and status, as the member's
// API server holds it, in the Work's manifestConditions[].backReportedStatus; switching the
// placement to Disabled removes them.
func TestMemberAgentReportsBack(t *testing.T) {
	f := startFleet(t, "member-1")
	ctx := context.Background()
	f.placeNamespace(t, "mirrored", "reportBackStrategy: {type: Mirror, destination: WorkAPI}")
	reported := func(want map[string]string) func() error {
		return func() error {
			var works v1beta1.WorkList
			if err := f.admin.List(ctx, &works, client.InNamespace("fleet-member-member-1")); err != nil {
				return err
			}
			if len(works.Items) != 1 {
				return fmt.Errorf("%d Works, want 1", len(works.Items))
			}
			got := map[string]string{}
			for _, mc := range works.Items[0].Status.ManifestConditions {
				if br := mc.BackReportedStatus; br != nil {
					var obj struct {
						Kind   string         `json:"kind"`
						Status map[string]any `json:"status"`
					}
					if err := json.Unmarshal(br.ObservedStatus.Raw, &obj); err != nil {
						return err
					}
					if obj.Kind != mc.Identifier.Kind || br.ObservationTime.IsZero() {
						return fmt.Errorf("manifest %s reports back %s observed at %v", mc.Identifier.Kind, br.ObservedStatus.Raw, br.ObservationTime)
					}
					got[mc.Identifier.Kind] = fmt.Sprint(obj.Status)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("reported back %v, want %v", got, want)
			}
			return nil
		}
	}
	// The member's API server makes a namespace Active; a ConfigMap has no status.
	wait(t, "the Work reports each object's status back", reported(map[string]string{"Namespace": "map[phase:Active]", "ConfigMap": "map[]"}))

	// The hub writes the placement's status meanwhile: a user's update retries on conflict,
	// as kubectl edit makes them do.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crp := &v1beta1.ClusterResourcePlacement{}
		if err := f.admin.Get(ctx, client.ObjectKey{Name: "mirrored"}, crp); err != nil {
			return err
		}
		crp.Spec.Strategy.ReportBackStrategy = &v1beta1.ReportBackStrategy{Type: "Disabled"}
		return f.admin.Update(ctx, crp)
	}); err != nil {
		t.Fatal(err)
	}
	wait(t, "nothing reported back once Disabled", reported(map[string]string{}))
}
