package snapshot_test

// The proof on real servers: a real kube-apiserver and etcd for the hub, the production
// hub's controllers, and a real `fleet member` agent per member on an API server of its
// own. The hub is snapshotted before each change; the change is previewed from the
// snapshot, applied to the hub, and the hub must reach the predicted bindings and the
// predicted Work manifests on every cluster.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/prod/snapshot"
	"github.com/fleetsim/fleetsim/prod/testenv"
	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/scenarios/whatif"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/timing"
)

type realFleet struct {
	t     *testing.T
	env   *testenv.Env
	admin client.Client
}

func quietLogger(t *testing.T) logr.Logger {
	if os.Getenv("FLEETSIM_TEST_LOG") == "" {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) { t.Log(time.Now().Format("15:04:05.000"), prefix, args) }, funcr.Options{})
}

func startRealFleet(t *testing.T) *realFleet {
	t.Helper()
	ctrllog.SetLogger(quietLogger(t))
	env := testenv.StartEnv(t)
	f := &realFleet{t: t, env: env, admin: testenv.Client(t, env.Config)}
	testenv.RunHub(t, env.Config, quietLogger(t))
	return f
}

// join creates MemberClusters with labels, starts each member's API server and real agent,
// and waits until the hub reports them joined and healthy.
func (f *realFleet) join(labels map[string]map[string]string) {
	f.t.Helper()
	ctx := context.Background()
	for _, name := range sorted(labels) {
		mc := &clusterv1beta1.MemberCluster{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels[name]},
			Spec: clusterv1beta1.MemberClusterSpec{
				Identity:               rbacv1.Subject{Kind: "User", Name: name + "-agent", APIGroup: "rbac.authorization.k8s.io"},
				HeartbeatPeriodSeconds: 1,
			},
		}
		if err := f.admin.Create(ctx, mc); err != nil {
			f.t.Fatalf("create MemberCluster %s: %v", name, err)
		}
		member := f.env.StartMemberOn(f.t, name)
		testenv.RunMemberAgent(f.t, name, f.env.User(f.t, name+"-agent"), member.Config, quietLogger(f.t), 0)
	}
	for _, name := range sorted(labels) {
		testenv.Eventually(f.t, "member "+name+" joined and healthy", func() error {
			got := &clusterv1beta1.MemberCluster{}
			if err := f.admin.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
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
}

// apply applies a change file to the hub the way --verify does.
func (f *realFleet) apply(path string) {
	f.t.Helper()
	steps := f.steps(path)
	if err := snapshot.Apply(context.Background(), f.admin, steps); err != nil {
		f.t.Fatalf("%s: %v", path, err)
	}
}

// steps parses a change file against an empty snapshot of the known members.
func (f *realFleet) steps(path string) []scenarios.Step {
	f.t.Helper()
	snap := f.take()
	c, err := whatif.LoadChange(path)
	if err != nil {
		f.t.Fatal(err)
	}
	res, err := whatif.Preview("hub.yaml", snap.Scenario, []*whatif.Change{c}, whatif.Options{MaxUnavailable: -1, Horizon: time.Minute, Settle: time.Minute})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.Steps
}

func (f *realFleet) take() *snapshot.Snapshot {
	f.t.Helper()
	s, err := snapshot.Take(context.Background(), f.admin, "hub")
	if err != nil {
		f.t.Fatalf("snapshot: %v", err)
	}
	return s
}

// settled waits until every placement's bindings are Bound and available and the hub's
// state stops changing, and returns it.
func (f *realFleet) settled(what string) whatif.State {
	f.t.Helper()
	var st whatif.State
	testenv.Eventually(f.t, what, func() error {
		var err error
		if st, err = snapshot.ReadState(context.Background(), f.admin, time.Now()); err != nil {
			return err
		}
		for _, name := range sorted(st.Placements) {
			for _, c := range sorted(st.Placements[name].Clusters) {
				if x := st.Placements[name].Clusters[c]; !x.Available || x.Binding != "Bound" {
					return fmt.Errorf("placement %s on %s: %s, available %v", name, c, x.Binding, x.Available)
				}
			}
		}
		return nil
	})
	return st
}

// TestPredictionEqualsOutcomeOnRealHub: for each change kind, snapshot the real hub,
// predict, apply, and require the hub to reach the predicted bindings and manifests.
func TestPredictionEqualsOutcomeOnRealHub(t *testing.T) {
	f := startRealFleet(t)
	// alpha and bravo first: web (PickN 2) takes both; charlie joins later, so the hub's
	// bindings are not what scheduling from scratch would give (bravo and charlie, the
	// greater names): the snapshot must carry them.
	f.join(map[string]map[string]string{"alpha": {"region": "east"}, "bravo": {"region": "east"}})
	f.apply("testdata/start.yaml")
	f.settled("web placed on alpha and bravo")
	f.join(map[string]map[string]string{"charlie": {"region": "west"}})

	for _, tc := range []struct {
		change string
		// affected are the placements the prediction must report, so that an empty
		// prediction cannot pass.
		affected []string
	}{
		{"placement-created.yaml", []string{"tools"}},
		{"policy-edited.yaml", []string{"web"}},
		{"override-added.yaml", []string{"web"}},
		{"member-tainted.yaml", []string{"reports"}},
		{"member-leaves.yaml", []string{"reports", "tools", "web"}},
	} {
		change := tc.change
		t.Run(strings.TrimSuffix(change, ".yaml"), func(t *testing.T) {
			f.t = t
			before := f.settled("the hub settled before the change")
			snap := f.take()
			for _, m := range snap.Missed {
				t.Logf("not captured: %s", m)
			}
			c, err := whatif.LoadChange(filepath.Join("testdata", change))
			if err != nil {
				t.Fatal(err)
			}
			res, err := whatif.Preview("hub.yaml", snap.Scenario, []*whatif.Change{c}, whatif.Options{MaxUnavailable: -1})
			if err != nil {
				t.Fatalf("preview: %v\n%s", err, snap.Scenario)
			}
			if d := whatif.Compare(res.Before, before); len(d) > 0 {
				t.Fatalf("the simulator does not reproduce the snapshot:\n%s\nsnapshot:\n%s", strings.Join(d, "\n"), snap.Scenario)
			}
			calibrated, err := whatif.Preview("hub.yaml", snap.Scenario, []*whatif.Change{c}, whatif.Options{MaxUnavailable: -1,
				HubModel: &sim.HubModel{Workers: 8, Calibration: timing.Reference()}})
			if err != nil {
				t.Fatalf("preview with the reference calibration: %v", err)
			}
			var text strings.Builder
			_ = res.Report.WriteText(&text)
			t.Logf("prediction:\n%s", text.String())
			var affected []string
			for _, p := range res.Report.Placements {
				affected = append(affected, p.Name)
			}
			if d := cmp.Diff(tc.affected, affected); d != "" {
				t.Fatalf("affected placements (-want +got):\n%s", d)
			}
			if !res.Report.Safe {
				t.Fatalf("the change is predicted unsafe: %+v %+v", res.Report.Invariants, res.Report.Budgets)
			}

			start := time.Now()
			if err := snapshot.Apply(context.Background(), f.admin, res.Steps); err != nil {
				t.Fatalf("apply: %v", err)
			}
			var diffs []string
			testenv.Eventually(t, "the hub reaches the prediction", func() error {
				after, err := snapshot.ReadState(context.Background(), f.admin, time.Now())
				if err != nil {
					return err
				}
				if diffs = whatif.Compare(res.After, after); len(diffs) > 0 {
					return fmt.Errorf("%s", strings.Join(diffs, "\n"))
				}
				return nil
			})
			took := time.Since(start)
			f.settled("the hub settled after the change")
			// Timing is reported, not asserted: the hub here runs on a loaded test machine
			// with 1s heartbeats and 100ms agent polls, not the calibrated configuration.
			for i, p := range res.Report.Placements {
				t.Logf("placement %s: predicted Available after %s (default hub model), %s (reference calibration); the real hub matched the prediction after %s (wall clock, loaded machine)",
					p.Name, p.Timeline.ToAvailable, calibrated.Report.Placements[i].Timeline.ToAvailable, took.Round(10*time.Millisecond))
			}
		})
	}
}

func sorted[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
