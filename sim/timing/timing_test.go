package timing

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// testCalibration is a calibration of round numbers, so that the tests' expectations do not
// move when the reference is measured again.
func testCalibration() *Calibration {
	c := &Calibration{Machine: "test", MeasuredAt: "never", Load: "0"}
	for _, f := range c.fields() {
		*f.c = Constant{Value: 0, Unit: f.unit, Source: "test"}
	}
	a, h := &c.APIServer, &c.Hub
	a.Cores.Value, a.Watched.Value = 10_000, 1
	h.InformerDelay.Value, h.CPUPerDecision.Value, h.CPUPerBinding.Value = 10, 5, 1
	h.FlushParallelism.Value, h.ReportBatchDelay.Value, h.ReportWindow.Value, h.AwaitLimit.Value = 16, 20, 300, 10_000
	a.ListSmall.Value, a.ListLarge.Value = 1, 1
	a.StatusClustersSmall.Value, a.StatusClustersLarge.Value = 1, 1
	c.Agent.PollInterval.Value = 20
	return c
}

func workload(members, placements, pick, concurrent int) Workload {
	return Workload{Members: members, Placements: placements, Pick: pick, Concurrent: concurrent,
		ReportDelay: 500 * time.Millisecond, Heartbeat: time.Minute, Workers: 8, QPS: 250, Burst: 1000, Output: "text"}
}

// TestReferenceCalibration: the embedded reference is valid and is the file committed in
// reports/calibration.
func TestReferenceCalibration(t *testing.T) {
	if err := Reference().Validate(); err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../../reports/calibration/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(committed), string(reference)); diff != "" {
		t.Errorf("sim/timing/reference.yaml differs from reports/calibration/reference.yaml (copy it over; -committed +embedded):\n%s", diff)
	}
}

// TestCalibrationRoundTrip: a calibration written and read back is the same.
func TestCalibrationRoundTrip(t *testing.T) {
	c := testCalibration()
	data, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse("test.yaml", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("read back (-wrote +read):\n%s", diff)
	}
}

// TestCalibrationErrors: a bad calibration is refused with the file, the constant and why.
func TestCalibrationErrors(t *testing.T) {
	good, err := testCalibration().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"unknown field", "hub:\n", "hub:\n  workerz: {value: 1, unit: ms, source: x}\n", "field workerz not found"},
		{"wrong unit", "cores:\n    value: 10000\n    unit: cores", "cores:\n    value: 10000\n    unit: ms", `apiServer.cores: unit "ms", want "cores"`},
		{"no source", "informerDelay:\n    value: 10\n    unit: ms\n    source: test", "informerDelay:\n    value: 10\n    unit: ms\n    source: \"\"", "hub.informerDelay: no source"},
		{"out of range", "cores:\n    value: 10000", "cores:\n    value: 0", "apiServer.cores: 0 cores is outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(string(good), tc.from, tc.to, 1)
			if bad == string(good) {
				t.Fatalf("the test's edit %q did not apply to:\n%s", tc.from, good)
			}
			_, err := Parse("bad.yaml", []byte(bad))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "bad.yaml: ") {
				t.Errorf("Parse = %v, want an error of bad.yaml with %q", err, tc.want)
			}
		})
	}
}

// TestCalibrationSet: a plan's sweep sets a constant by its path in its own unit; unknown
// names and values out of range are refused.
func TestCalibrationSet(t *testing.T) {
	c := testCalibration()
	if err := c.Set("apiServer.cores", 4, "swept"); err != nil {
		t.Fatal(err)
	}
	if c.APIServer.Cores.Value != 4 || c.APIServer.Cores.Source != "swept" {
		t.Errorf("cores = %+v, want 4 from swept", c.APIServer.Cores)
	}
	for _, name := range []string{"apiServer.corez", "cores"} {
		if err := c.Set(name, 4, "x"); err == nil || !strings.Contains(err.Error(), "is not a constant") {
			t.Errorf("Set(%q) = %v, want not a constant", name, err)
		}
	}
	if err := c.Set("apiServer.cores", 0, "x"); err == nil {
		t.Error("Set(cores, 0) = nil, want out of range")
	}
}

// TestPredictOnePlacement: one placement on one member, every write free, as computed by
// hand from the model's steps: the bench's creates (0), the informer (10 ms), the
// placement-wide decision (5 + 1 ms), its writes (0): bound and Works at 16 + 10 ms; the agent
// sees the Work at 26, reports at 526, the bench sees it at 536 and so does the hub, which
// wakes the rollout 20 ms later (the last report awaited): 556 + 6 ms of decision, seen at
// 572 and polled at 580 ms.
func TestPredictOnePlacement(t *testing.T) {
	got, err := Predict(workload(1, 1, 0, 1), testCalibration())
	if err != nil {
		t.Fatal(err)
	}
	one := func(s float64) Percentiles { return Percentiles{P50: s, P90: s, P99: s, Max: s, Mean: s} }
	want := &Result{Source: "predicted", Members: 1, Placements: 1, Concurrent: 1, Available: one(0.58),
		Steps:                 []Step{{StepBindingsMade, one(0.03)}, {StepBindingsBound, one(0.03)}, {StepWorksMade, one(0.03)}, {StepReported, one(0.54)}},
		PlacementPhaseSeconds: 0.58, Decisions: 2, DecisionsByController: map[string]float64{"policy-snapshot": 1, "rollout": 1},
		APICalls: 10, APICallsPerDecision: 5, WritesPerBinding: 10,
		Writes: map[string]float64{"ClusterResourcePlacement update": 1, "ClusterSchedulingPolicySnapshot create": 1,
			"ClusterSchedulingPolicySnapshot update-status": 1, "ClusterResourceSnapshot create": 1, "ClusterResourceBinding create": 1,
			"Work create": 1, "ClusterResourceBinding update-status": 2, "ClusterResourcePlacement update-status": 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prediction (-want +got):\n%s", diff)
	}
}

// TestPredictWrites: a PickAll placement writes what the production hub writes (the counts
// `fleet bench hub` measured for 3 PickAll placements on 10 members: 4.6 writes per binding),
// whatever the calibration.
func TestPredictWrites(t *testing.T) {
	for _, c := range []*Calibration{testCalibration(), Reference()} {
		got, err := Predict(workload(10, 3, 0, 1), c)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]float64{"ClusterResourcePlacement update": 3, "ClusterSchedulingPolicySnapshot create": 3,
			"ClusterSchedulingPolicySnapshot update-status": 3, "ClusterResourceSnapshot create": 3, "ClusterResourceBinding create": 30,
			"Work create": 30, "ClusterResourceBinding update-status": 60, "ClusterResourcePlacement update-status": 6}
		if diff := cmp.Diff(want, got.Writes); diff != "" {
			t.Errorf("%s: writes (-want +got):\n%s", c.Machine, diff)
		}
		if got.WritesPerBinding != 4.6 {
			t.Errorf("%s: writes per binding %v, want 4.6", c.Machine, got.WritesPerBinding)
		}
	}
}

// TestPredictRestart: a restarted hub lists what is stored kind by kind, each at its cost for
// its size, then decides each placement once on its workers, writing nothing.
func TestPredictRestart(t *testing.T) {
	c := testCalibration()
	a := &c.APIServer
	c.Hub.StartDelay.Value, a.ListPerObject.Value = 1000, 1
	a.ListSmall.Value, a.ListLarge.Value = 100, 1000
	a.ListBindingSmall.Value, a.ListBindingLarge.Value = 1, 2
	a.ListWorkSmall.Value, a.ListWorkLarge.Value = 1, 1
	a.ListPolicySnapshotSmall.Value, a.ListPolicySnapshotLarge.Value = 10, 20
	a.ListResourceSnapshotSmall.Value, a.ListResourceSnapshotLarge.Value = 2, 2
	w := workload(10, 20, 0, 1)
	w.Restart = true
	got, err := Predict(w, c)
	if err != nil {
		t.Fatal(err)
	}
	// 200 bindings at 1 + (2 - 1) × 100/900 ms = 222.2 ms; 200 Works at 1 ms; 20 policy
	// snapshots, under the small size, at 10 ms = 200 ms; 20 resource snapshots at 2 ms = 40
	// ms; 20 placements and 2 × 10 member objects at 1 ms: 702.2 ms after the start's 1 s;
	// 20 decisions of 15 ms on 8 workers: three rounds, 45 ms.
	want := []float64{1.7, 1.75, 20}
	if diff := cmp.Diff(want, []float64{got.RestartFirstDecisionSeconds, got.RestartSeconds, got.RestartDecisions}); diff != "" {
		t.Errorf("first decision, settled, decisions (-want +got):\n%s", diff)
	}
}

// TestListCost: a LIST's time from its kind's cost per object at the two measured sizes.
func TestListCost(t *testing.T) {
	c := testCalibration()
	c.APIServer.ListSmall.Value, c.APIServer.ListLarge.Value = 500, 2000
	small, large := Constant{Value: 1, Unit: "ms"}, Constant{Value: 2.5, Unit: "ms"}
	for _, tc := range []struct {
		name         string
		n            int
		small, large Constant
		want         time.Duration
	}{
		{"none", 0, small, large, 0},
		{"under the small size: the small size's cost", 100, small, large, 100 * time.Millisecond},
		{"at the small size", 500, small, large, 500 * time.Millisecond},
		{"between: on the line", 1250, small, large, 1250 * 1750 * time.Microsecond},
		{"at the large size", 2000, small, large, 5000 * time.Millisecond},
		{"beyond: the line goes on", 3500, small, large, 3500 * 4 * time.Millisecond},
		{"cheaper when larger: never under the cheaper size", 100_000, large, small, 100_000 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, c.ListCost(tc.n, tc.small, tc.large)); diff != "" {
				t.Errorf("ListCost(%d) (-want +got):\n%s", tc.n, diff)
			}
		})
	}
}

// TestStatusCost: a status write that lists clusters costs along the line through its
// kind's two measured sizes, and what the placement and policy status writes of a decision
// cost follows the clusters they list.
func TestStatusCost(t *testing.T) {
	c := testCalibration()
	a := &c.APIServer
	a.StatusClustersSmall.Value, a.StatusClustersLarge.Value = 10, 100
	a.PlacementStatusSmall.Value, a.PlacementStatus.Value = 20, 110
	a.PolicySnapshotStatusSmall.Value, a.PolicySnapshotStatus.Value = 5, 41
	for _, tc := range []struct {
		name      string
		clusters  int
		placement float64
		policy    float64
	}{
		{"under the small size: the small size's cost", 3, 20, 5},
		{"at the small size", 10, 20, 5},
		{"between: on the line", 55, 65, 23},
		{"at the large size", 100, 110, 41},
		{"beyond: the line goes on", 1000, 1010, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := []float64{c.PlacementStatusCost(tc.clusters).Value, c.PolicyStatusCost(tc.clusters).Value}
			if diff := cmp.Diff([]float64{tc.placement, tc.policy}, got); diff != "" {
				t.Errorf("placement and policy status costs at %d clusters (-want +got):\n%s", tc.clusters, diff)
			}
		})
	}
	// A decision's writes: the rollout's placement status lists its n clusters; the
	// placement-wide decision's policy status lists the decisions.
	ws := c.DecisionWrites(ctrlRollout, 55, 0)
	if got := ws[len(ws)-1]; got.Kind != writePlacementStatus || got.Cost.Value != 65 {
		t.Errorf("the rollout's last write: %s at %v ms, want %s at 65", got.Kind, got.Cost.Value, writePlacementStatus)
	}
	var policy float64
	for _, w := range c.DecisionWrites(ctrlPlacementWide, 3, 1000) {
		if w.Kind == writePolicyStatus {
			policy = w.Cost.Value
		}
	}
	if policy != 401 {
		t.Errorf("the placement-wide decision's policy status at 1000 decisions: %v ms, want 401", policy)
	}
}

// TestPredictWarmUp: a placement the bench creates before the hub is warm (hub.warmUp after
// its start, the members' join being hub.joinBase + members × hub.joinPerMember) waits for
// it; one created after does not. One placement on one member takes 0.58 s warm
// (TestPredictOnePlacement).
func TestPredictWarmUp(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members int
		want    float64
	}{
		// Joined at 1 + 1 × 0.5 = 1.5 s, warm at 4 s: the decision starts at 2.5 s instead of
		// the informer's 10 ms, so the bench sees it 2.49 s later than warm (0.572 s): 3.062
		// s, at its poll of 3.08 s.
		{"few members: warm after the join", 1, 3.08},
		// Joined at 1 + 10 × 0.5 = 6 s: warm before.
		{"many members: warm before the join", 10, 0.58},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testCalibration()
			c.Hub.WarmUp.Value, c.Hub.JoinBase.Value, c.Hub.JoinPerMember.Value = 4000, 1000, 500
			got, err := Predict(workload(tc.members, 1, 1, 1), c)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(Round2(tc.want), got.Available.P50); diff != "" {
				t.Errorf("Available (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOlderCalibrationLoads: a calibration written before the per-kind lists, the policy
// snapshot's status and the warm-up existed loads; its new constants borrow the ones they
// were charged as before (and say so), so it predicts as it did.
func TestOlderCalibrationLoads(t *testing.T) {
	c := testCalibration()
	c.APIServer.PlacementStatus.Value, c.APIServer.ListPerObject.Value = 7, 0.5
	data, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	old := string(data)
	for _, name := range []string{"policySnapshotStatus", "listSmall", "listLarge", "listBindingSmall", "listBindingLarge",
		"listWorkSmall", "listWorkLarge", "listPolicySnapshotSmall", "listPolicySnapshotLarge",
		"listResourceSnapshotSmall", "listResourceSnapshotLarge", "warmUp", "joinBase", "joinPerMember",
		"placementStatusSmall", "policySnapshotStatusSmall", "statusClustersSmall", "statusClustersLarge"} {
		i := strings.Index(old, "  "+name+":\n")
		if i < 0 {
			t.Fatalf("no %s in:\n%s", name, old)
		}
		j := i + strings.Index(old[i:], "source: test\n") + len("source: test\n")
		old = old[:i] + old[j:]
	}
	old = strings.Replace(old, "hub:\n", "hub:\n  firstPlacement:\n    value: 2500\n    unit: ms\n    source: old\n", 1)
	got, err := Parse("old.yaml", []byte(old))
	if err != nil {
		t.Fatalf("%v\n%s", err, old)
	}
	a := got.APIServer
	if diff := cmp.Diff([]float64{7, 0.5, 0.5, 0.5, 0.5, 2500, 0, 0}, []float64{a.PolicySnapshotStatus.Value, a.ListBindingSmall.Value,
		a.ListWorkLarge.Value, a.ListResourceSnapshotSmall.Value, a.ListPolicySnapshotLarge.Value,
		got.Hub.WarmUp.Value, got.Hub.JoinBase.Value, got.Hub.JoinPerMember.Value}); diff != "" {
		t.Errorf("borrowed values (-want +got):\n%s", diff)
	}
	if want := "absent from old.yaml (written before apiServer.policySnapshotStatus existed): borrowed from apiServer.placementStatus"; a.PolicySnapshotStatus.Source != want {
		t.Errorf("source %q, want %q", a.PolicySnapshotStatus.Source, want)
	}
	// One size of status writes: every status write of a kind costs the file's one figure,
	// whatever the clusters it lists.
	for _, n := range []int{1, 10, 1000} {
		if diff := cmp.Diff([]float64{7, 7}, []float64{got.PlacementStatusCost(n).Value, got.PolicyStatusCost(n).Value}); diff != "" {
			t.Errorf("status costs at %d clusters (-want +got):\n%s", n, diff)
		}
	}
}

// TestPredictProperties: the prediction is deterministic, never faster with fewer cores or a
// costlier write, and never faster with more placements in flight at once.
func TestPredictProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		members := rapid.IntRange(1, 60).Draw(t, "members")
		pick := rapid.IntRange(0, members).Draw(t, "pick")
		placements := rapid.IntRange(1, 12).Draw(t, "placements")
		conc := rapid.IntRange(1, placements).Draw(t, "concurrent")
		c := Reference()
		c.APIServer.Cores.Value = rapid.Float64Range(0.5, 8).Draw(t, "cores")
		w := workload(members, placements, pick, conc)
		a, err := Predict(w, c)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := Predict(w, c)
		if diff := cmp.Diff(a, again); diff != "" {
			t.Fatalf("two predictions differ:\n%s", diff)
		}
		slower := *c
		slower.APIServer.Cores.Value /= 2
		b, _ := Predict(w, &slower)
		if b.PlacementPhaseSeconds < a.PlacementPhaseSeconds {
			t.Fatalf("half the cores: phase %v s, faster than %v s", b.PlacementPhaseSeconds, a.PlacementPhaseSeconds)
		}
		if conc > 1 {
			one, _ := Predict(workload(members, placements, pick, 1), c)
			if a.Available.Max < one.Available.P50 {
				t.Fatalf("%d at once: max %v s below one at a time's p50 %v s", conc, a.Available.Max, one.Available.P50)
			}
		}
	})
}

// TestWriteText: a prediction prints its source and leaves out what it does not predict.
func TestWriteText(t *testing.T) {
	r, err := Predict(workload(1, 1, 0, 1), testCalibration())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	WriteText(&buf, r)
	for _, want := range []string{"predicted: members 1, placements 1", "creation to Available: p50 0.58s"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
	for _, not := range []string{"join", "kube-apiserver", "hub   "} {
		if strings.Contains(buf.String(), not) {
			t.Errorf("text has %q, which a prediction does not give:\n%s", not, buf.String())
		}
	}
}

// TestLoadWith: --set overrides constants of the reference in order and names what it
// refuses.
func TestLoadWith(t *testing.T) {
	c, err := LoadWith("", []string{"apiServer.cores=16", "hub.cpuPerBinding=2.5"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{16, 2.5}, []float64{c.APIServer.Cores.Value, c.Hub.CPUPerBinding.Value}); diff != "" {
		t.Errorf("set values (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ set, want string }{
		{"apiServer.cores", "want NAME=NUMBER"},
		{"apiServer.cores=four", "want NAME=NUMBER"},
		{"apiServer.corez=4", `"apiServer.corez" is not a constant`},
		{"apiServer.cores=-1", "apiServer.cores: -1 cores is outside"},
	} {
		if _, err := LoadWith("", []string{tc.set}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: %v, want %q", tc.set, err, tc.want)
		}
	}
}
