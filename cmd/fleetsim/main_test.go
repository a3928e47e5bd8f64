package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// run executes the CLI in-process and returns its exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errf, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	code := execute(args, out, errf)
	out.Close()
	errf.Close()
	o, _ := os.ReadFile(out.Name())
	e, _ := os.ReadFile(errf.Name())
	return code, string(o), string(e)
}

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const quickstart = "../../scenarios/quickstart.yaml"

func TestRunQuickstartText(t *testing.T) {
	code, out, errOut := run(t, "run", quickstart)
	if code != exitOK {
		t.Fatalf("fleetsim run quickstart = exit %d, want 0; stderr:\n%s\nstdout:\n%s", code, errOut, out)
	}
	for _, want := range []string{"TIMELINE", "PLACEMENTS", "MEMBERS", "EXPECTATIONS", "binding-scheduled", "PASS  trace hash "} {
		if !strings.Contains(out, want) {
			t.Errorf("fleetsim run output lacks %q:\n%s", want, out)
		}
	}
	if errOut != "" {
		t.Errorf("stderr not empty without a terminal: %q", errOut)
	}
}

func TestRunJSON(t *testing.T) {
	code, out, errOut := run(t, "run", quickstart, "--output", "json", "--seed", "3")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var rep struct {
		Scenario      string  `json:"scenario"`
		Seed          uint64  `json:"seed"`
		TraceHash     string  `json:"traceHash"`
		SimulatedTime float64 `json:"simulatedTime"`
		Events        uint64  `json:"events"`
		Expectations  []struct {
			Description string `json:"description"`
			Passed      bool   `json:"passed"`
			Detail      string `json:"detail"`
		} `json:"expectations"`
		Placements []struct {
			Name       string   `json:"name"`
			Clusters   []string `json:"clusters"`
			Conditions []struct {
				Type, Status, Reason, Message string
			} `json:"conditions"`
		} `json:"placements"`
		Members []struct {
			Name       string `json:"name"`
			Conditions []any  `json:"conditions"`
			Taints     []any  `json:"taints"`
		} `json:"members"`
	}
	oneReport(t, out, &rep)
	if rep.Scenario != "quickstart" || rep.Seed != 3 || len(rep.TraceHash) != 16 || rep.SimulatedTime != 7200 || rep.Events == 0 {
		t.Errorf("report header = %+v", rep)
	}
	if len(rep.Expectations) != 7 || len(rep.Placements) != 1 || len(rep.Members) != 4 {
		t.Errorf("report has %d expectations, %d placements, %d members; want 7, 1, 4", len(rep.Expectations), len(rep.Placements), len(rep.Members))
	}
	if diff := cmp.Diff([]string{"east-2", "west-1", "west-2"}, rep.Placements[0].Clusters); diff != "" {
		t.Errorf("placement clusters (-want +got):\n%s", diff)
	}
}

func TestSameSeedSameHash(t *testing.T) {
	hash := func(seed string) string {
		code, out, _ := run(t, "run", quickstart, "-o", "json", "--seed", seed)
		if code != exitOK {
			t.Fatalf("exit %d", code)
		}
		var r struct{ TraceHash string }
		oneReport(t, out, &r)
		return r.TraceHash
	}
	if a, b := hash("5"), hash("5"); a != b {
		t.Errorf("seed 5 gave hashes %s and %s", a, b)
	}
}

func TestTraceFile(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	if code, _, errOut := run(t, "run", quickstart, "--quiet", "--trace", trace); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 100 {
		t.Fatalf("trace has %d lines, want the whole run", len(lines))
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first["kind"] == nil || first["t"] == nil {
		t.Errorf("trace line %q is not an event: %v", lines[0], err)
	}
}

func TestExitCodes(t *testing.T) {
	failing := write(t, "failing.yaml", `name: failing
duration: 10m
members:
  - name: m{1..2}
timeline:
  - at: 1m
    apply: |
      apiVersion: placement.kubernetes-fleet.io/v1beta1
      kind: ClusterResourcePlacement
      metadata:
        name: crp
      spec:
        resourceSelectors:
          - {group: "", version: v1, kind: Namespace, name: app}
        policy:
          placementType: PickN
          numberOfClusters: 3
expect:
  - placement:
      name: crp
      clusterCount: 3
`)
	invalid := write(t, "invalid.yaml", "name: bad\nduration: 10m\nmembers:\n  - name: m1\n    lables: {a: b}\n")
	cases := []struct {
		name    string
		args    []string
		code    int
		message string
	}{
		{"an expectation fails", []string{"run", failing}, exitFailed, "FAIL"},
		{"invalid scenario names file and line", []string{"run", invalid}, exitInvalid, "invalid.yaml:5"},
		{"validate reports the line too", []string{"validate", invalid}, exitInvalid, "invalid.yaml:5"},
		{"validate accepts the quickstart", []string{"validate", quickstart}, exitOK, "ok"},
		{"missing file", []string{"run", "no-such-file.yaml"}, exitInvalid, "no-such-file.yaml"},
		{"bad output format", []string{"run", quickstart, "-o", "xml"}, exitInvalid, "xml"},
		{"unknown flag", []string{"run", "--frobnicate", quickstart}, exitInvalid, "frobnicate"},
		{"no files", []string{"run"}, exitInvalid, "requires at least 1 arg"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.args...)
			if code != tc.code {
				t.Errorf("fleetsim %v = exit %d, want %d\nstdout: %s\nstderr: %s", tc.args, code, tc.code, out, errOut)
			}
			if !strings.Contains(out+errOut, tc.message) {
				t.Errorf("fleetsim %v output lacks %q\nstdout: %s\nstderr: %s", tc.args, tc.message, out, errOut)
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	code, out, _ := run(t, "run", "--help")
	if code != exitOK || !strings.Contains(out, "Examples:") && !strings.Contains(out, "Example") {
		t.Errorf("run --help = exit %d:\n%s", code, out)
	}
	code, out, _ = run(t, "--help")
	if code != exitOK || !strings.Contains(out, "Exit codes:") {
		t.Errorf("--help does not document exit codes:\n%s", out)
	}
	code, out, _ = run(t, "version")
	if code != exitOK || !strings.HasPrefix(out, "fleetsim ") {
		t.Errorf("version = exit %d, %q", code, out)
	}
	code, out, _ = run(t, "completion", "bash")
	if code != exitOK || !strings.Contains(out, "fleetsim") {
		t.Errorf("completion bash = exit %d", code)
	}
}

func TestBenchCommand(t *testing.T) {
	code, out, errOut := run(t, "bench", "sim", "--members", "20", "--simulated", "10m")
	if code != exitOK || !strings.Contains(out, "SimHeartbeats/members=20") || !strings.Contains(out, "events/s") {
		t.Errorf("bench sim = exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	for _, args := range [][]string{{"bench", "nothing"}, {"bench", "sim", "--members", "0"}, {"bench", "scheduler", "--members", "5", "--picks", "9"}} {
		if code, _, _ := run(t, args...); code != exitInvalid {
			t.Errorf("fleetsim %v = exit %d, want %d", args, code, exitInvalid)
		}
	}
}

// oneReport decodes `run -o json` of one file: a list holding one report (the shape is a
// list whatever the number of files).
func oneReport(t *testing.T, out string, into any) {
	t.Helper()
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("--output json is not a JSON list: %v\n%s", err, out)
	}
	if len(list) != 1 {
		t.Fatalf("--output json holds %d reports, want 1", len(list))
	}
	if err := json.Unmarshal(list[0], into); err != nil {
		t.Fatalf("report: %v\n%s", err, list[0])
	}
}
