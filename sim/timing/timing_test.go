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

// TestPredictRestart: a restarted hub lists what is stored, then decides each placement
// once on its workers, writing nothing.
func TestPredictRestart(t *testing.T) {
	c := testCalibration()
	c.Hub.StartDelay.Value, c.APIServer.ListPerObject.Value = 1000, 1
	w := workload(10, 20, 0, 1)
	w.Restart = true
	got, err := Predict(w, c)
	if err != nil {
		t.Fatal(err)
	}
	// 20 × (3 + 2 × 10) + 2 × 10 = 480 objects listed: 1.48 s; 20 decisions of 15 ms on 8
	// workers: three rounds, 45 ms.
	want := []float64{1.48, 1.53, 20}
	if diff := cmp.Diff(want, []float64{got.RestartFirstDecisionSeconds, got.RestartSeconds, got.RestartDecisions}); diff != "" {
		t.Errorf("first decision, settled, decisions (-want +got):\n%s", diff)
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
