package staged_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/staged"
)

// TestResourceSnapshotIndexUsed: a run rolls out the index its spec names or, when it names
// none, the placement's latest index at initialization, and reports it in
// resourceSnapshotIndexUsed; a newer snapshot created afterwards does not change it.
func TestResourceSnapshotIndexUsed(t *testing.T) {
	cases := []struct {
		name      string
		index     string
		snapshots map[int]string
		// wantUsed is resourceSnapshotIndexUsed after initialization; wantInit the Initialized
		// condition's message ("" for success).
		wantUsed string
		wantInit string
		// wantSnapshot is the snapshot the first cluster's binding gets.
		wantSnapshot string
	}{
		{name: "index named", index: "0", snapshots: map[int]string{0: "", 1: "", 2: ""}, wantUsed: "0", wantSnapshot: crpName + "-0-snapshot"},
		{name: "no index: the latest", index: "", snapshots: map[int]string{0: "", 1: "", 2: ""}, wantUsed: "2", wantSnapshot: crpName + "-2-snapshot"},
		{name: "no index, only index 0", index: "", snapshots: map[int]string{0: ""}, wantUsed: "0", wantSnapshot: crpName + "-0-snapshot"},
		{name: "no index, an older index with a subindexed leader", index: "", snapshots: map[int]string{3: "p-3-snapshot-x", 7: ""}, wantUsed: "7", wantSnapshot: crpName + "-7-snapshot"},
		{
			name: "no index and no snapshot", index: "", snapshots: map[int]string{},
			wantInit: initFailed + "no clusterResourceSnapshots found for clusterResourcePlacement `example-placement`",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := scheduled(t, howToStrategy(), howToFleet())
			w.run = newRun(runName, tc.index)
			w.snapshots = tc.snapshots
			p := w.step()
			init, _ := condition.Find(p.Status.Conditions, staged.TypeInitialized)
			if tc.wantInit != "" {
				if diff := cmp.Diff(tc.wantInit, init.Message); diff != "" {
					t.Fatalf("Initialized message (-want +got):\n%s", diff)
				}
				if p.Status.ResourceSnapshotIndexUsed != "" {
					t.Errorf("resourceSnapshotIndexUsed = %q after a failed initialization, want empty", p.Status.ResourceSnapshotIndexUsed)
				}
				return
			}
			if diff := cmp.Diff(staged.MessageInitialized, init.Message); diff != "" {
				t.Fatalf("Initialized message (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantUsed, p.Status.ResourceSnapshotIndexUsed); diff != "" {
				t.Errorf("resourceSnapshotIndexUsed (-want +got):\n%s", diff)
			}
			if len(p.UpdateBindings) != 1 {
				t.Fatalf("initial plan updates %d bindings, want 1", len(p.UpdateBindings))
			}
			if diff := cmp.Diff(tc.wantSnapshot, p.UpdateBindings[0].Binding.ResourceSnapshotName); diff != "" {
				t.Errorf("first binding's snapshot (-want +got):\n%s", diff)
			}

			// A newer snapshot appears: the run keeps its index and finishes with it.
			w.snapshots[99] = ""
			w.approveAfter = 30 * time.Second
			w.drive(100)
			if !statusTrue(w.run.Status.Conditions, staged.TypeSucceeded) {
				t.Fatalf("run did not succeed:\n%s", timeline(w.run.Status))
			}
			if diff := cmp.Diff(tc.wantUsed, w.run.Status.ResourceSnapshotIndexUsed); diff != "" {
				t.Errorf("resourceSnapshotIndexUsed after a newer snapshot (-want +got):\n%s", diff)
			}
			for _, b := range w.bindings {
				if b.ResourceSnapshotName != tc.wantSnapshot {
					t.Errorf("binding %s holds %q, want %q", b.Name, b.ResourceSnapshotName, tc.wantSnapshot)
				}
			}
		})
	}
}
