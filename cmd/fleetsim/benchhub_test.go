package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/sim/timing"
)

// TestBenchHubFlags: `fleetsim bench hub` (the prediction) and its hidden `measured` (what
// `fleet bench hub` runs) take exactly the flags of sim/timing's workload, as `fleet bench
// hub` does (cmd/fleet's TestBenchHubFlags).
func TestBenchHubFlags(t *testing.T) {
	root := newRootCommand(&bytes.Buffer{}, &bytes.Buffer{})
	for _, path := range [][]string{{"bench", "hub"}, {"bench", "hub", "measured"}} {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(timing.WantFlagSignature(), timing.FlagSignature(c.Flags())); diff != "" {
			t.Errorf("fleetsim %v flags (-want +got):\n%s", path, diff)
		}
	}
}

// TestBenchHubPredicts: `fleetsim bench hub -o json` prints the model's prediction for the
// flags given, in the measurement's JSON shape.
func TestBenchHubPredicts(t *testing.T) {
	var stdout, stderr bytes.Buffer
	root := newRootCommand(&stdout, &stderr)
	root.SetArgs([]string{"bench", "hub", "--members", "40", "--placements", "3", "-o", "json"})
	if err := root.Execute(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	var got timing.Result
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("output is not a Result: %v\n%s", err, stdout.String())
	}
	want, err := timing.Predict(timing.Workload{Members: 40, Placements: 3, Concurrent: 1, ReportDelay: 500e6, Heartbeat: 60e9,
		Workers: 8, QPS: 250, Burst: 1000, Output: "json"}, timing.Reference())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(*want, got); diff != "" {
		t.Errorf("printed prediction (-want +got):\n%s", diff)
	}
	// -o yaml prints the same Result (one CLI: every command takes text, json and yaml).
	stdout.Reset()
	root = newRootCommand(&stdout, &stderr)
	root.SetArgs([]string{"bench", "hub", "--members", "40", "--placements", "3", "-o", "yaml"})
	if err := root.Execute(); err != nil {
		t.Fatalf("-o yaml: %v: %s", err, stderr.String())
	}
	var fromYAML timing.Result
	if err := yaml.Unmarshal(stdout.Bytes(), &fromYAML); err != nil {
		t.Fatalf("-o yaml output is not a Result: %v\n%s", err, stdout.String())
	}
	if diff := cmp.Diff(*want, fromYAML); diff != "" {
		t.Errorf("-o yaml prediction (-want +got):\n%s", diff)
	}
}

// TestBenchHubCompareWith: --compare-with compares the prediction with a saved measurement
// instead of measuring: a saved Result and the measured part of a saved comparison are both
// read; a measurement of another workload is refused, naming the flag and both workloads.
func TestBenchHubCompareWith(t *testing.T) {
	w := timing.Workload{Members: 40, Placements: 3, Concurrent: 1, ReportDelay: 500e6, Heartbeat: 60e9,
		Workers: 8, QPS: 250, Burst: 1000, Output: "json"}
	pred, err := timing.Predict(w, timing.Reference())
	if err != nil {
		t.Fatal(err)
	}
	// The "measurement": the prediction, half a second slower to Available at p50.
	meas := *pred
	meas.Available.P50 += 0.5
	dir := t.TempDir()
	result, _ := json.Marshal(meas)
	comparison, _ := json.Marshal(timing.Compare(pred, &meas))
	files := map[string][]byte{"result.json": result, "comparison.json": comparison}
	for _, name := range []string{"result.json", "comparison.json"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		root := newRootCommand(&stdout, &stderr)
		root.SetArgs([]string{"bench", "hub", "--members", "40", "--placements", "3", "--compare-with", path, "-o", "json"})
		if err := root.Execute(); err != nil {
			t.Fatalf("%s: %v: %s", name, err, stderr.String())
		}
		var got timing.Comparison
		if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
			t.Fatalf("%s: not a comparison: %v\n%s", name, err, stdout.String())
		}
		if diff := cmp.Diff(timing.Compare(pred, &meas).Figures, got.Figures); diff != "" {
			t.Errorf("%s: figures (-want +got):\n%s", name, diff)
		}
	}
	var stdout, stderr bytes.Buffer
	root := newRootCommand(&stdout, &stderr)
	root.SetArgs([]string{"bench", "hub", "--members", "100", "--placements", "3", "--compare-with", filepath.Join(dir, "result.json")})
	err = root.Execute()
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitInvalid || !strings.Contains(err.Error(), "measured --members 40 --placements 3") {
		t.Errorf("another workload's measurement: %v, want exit %d naming what it measured", err, exitInvalid)
	}
	// A measurement without --restart against flags with it: no restart to compare.
	root = newRootCommand(&stdout, &stderr)
	root.SetArgs([]string{"bench", "hub", "--members", "40", "--placements", "3", "--restart", "--compare-with", filepath.Join(dir, "result.json")})
	err = root.Execute()
	if !errors.As(err, &ee) || ee.code != exitInvalid || !strings.Contains(err.Error(), "measured with --restart=false, the flags say --restart=true") {
		t.Errorf("a measurement without the restart: %v, want exit %d naming the flag", err, exitInvalid)
	}
}

// TestRunCalibration: `fleetsim run --calibration` runs the scenario's hub on the calibrated
// model: the scenario still passes, deterministically, with another trace than the default
// model's (which the flag's absence keeps); a bad calibration exits 2 naming the file.
func TestRunCalibration(t *testing.T) {
	hash := func(args ...string) string {
		code, out, errOut := run(t, append([]string{"run", quickstart, "-o", "json"}, args...)...)
		if code != exitOK {
			t.Fatalf("fleetsim run %v: exit %d: %s", args, code, errOut)
		}
		var r struct {
			TraceHash string
			Passed    bool
		}
		oneReport(t, out, &r)
		return r.TraceHash
	}
	def, cal, again := hash(), hash("--calibration", "reference"), hash("--calibration", "reference")
	if cal != again {
		t.Errorf("--calibration reference gave hashes %s and %s", cal, again)
	}
	if cal == def {
		t.Errorf("--calibration reference gave the default model's hash %s", def)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiServer: {cores: {value: 1, unit: ms, source: x}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, "run", quickstart, "--calibration", bad)
	if code != exitInvalid || !strings.Contains(errOut, bad+`: apiServer.cores: unit "ms", want "cores"`) {
		t.Errorf("bad calibration: exit %d, stderr %q", code, errOut)
	}
}
