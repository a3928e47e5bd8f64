package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/scenarios/plan"
)

const tinyPlan = `name: tiny
repetitions: 2
hub: {qps: 100, apiLatency: 1ms}
sweep:
  members: [2, 3, 4]
scenario: |
  name: tiny
  duration: 3m
  members:
    - name: m-{1..{{.members}}}
  timeline:
    - at: 10s
      apply: |
        apiVersion: v1
        kind: Namespace
        metadata: {name: app}
        ---
        apiVersion: placement.kubernetes-fleet.io/v1beta1
        kind: ClusterResourcePlacement
        metadata: {name: app}
        spec:
          resourceSelectors: [{group: "", version: v1, kind: Namespace, name: app}]
`

func planReport(t *testing.T, out string) *plan.Report {
	t.Helper()
	var r plan.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not a report: %v\n%s", err, out)
	}
	return &r
}

// TestPlanShardsAndMerge: the report of `plan merge` over two shards (one by --shard, one by
// JOB_COMPLETION_INDEX) equals the unsharded report; md and html write their files.
func TestPlanShardsAndMerge(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(file, []byte(tinyPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "plan", file, "-o", "json", "--parallel", "2")
	if code != exitOK {
		t.Fatalf("plan = exit %d; stderr:\n%s", code, errOut)
	}
	whole := planReport(t, out)
	if len(whole.Points) != 3 || whole.Runs != 6 || len(whole.Summary) == 0 {
		t.Fatalf("report: %d points, %d runs, summary %q", len(whole.Points), whole.Runs, whole.Summary)
	}
	if st := whole.Points[2].Metrics[plan.ClusterScheduled]; st.Samples != 8 {
		t.Errorf("members=4: %d cluster.scheduled samples, want 8 (4 clusters × 2 seeds)", st.Samples)
	}
	var shards []string
	for i, env := range []bool{false, true} {
		args := []string{"plan", file, "--parallel", "1"}
		if env {
			t.Setenv("JOB_COMPLETION_INDEX", "1")
			t.Setenv("PLAN_SHARDS", "2")
		} else {
			args = append(args, "--shard", "0/2")
		}
		code, out, errOut := run(t, args...)
		if code != exitOK {
			t.Fatalf("shard %d = exit %d; stderr:\n%s", i, code, errOut)
		}
		p := filepath.Join(dir, "shard"+string(rune('0'+i))+".json")
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, p)
	}
	t.Setenv("JOB_COMPLETION_INDEX", "")
	code, out, errOut = run(t, "plan", "merge", file, shards[1], shards[0], "-o", "json")
	if code != exitOK {
		t.Fatalf("merge = exit %d; stderr:\n%s", code, errOut)
	}
	merged := planReport(t, out)
	if merged.Results.Digest != whole.Results.Digest {
		t.Errorf("merged digest %x, unsharded %x", merged.Results.Digest, whole.Results.Digest)
	}
	if d := cmp.Diff(whole.Summary, merged.Summary); d != "" {
		t.Errorf("merged summary differs (-whole +merged):\n%s", d)
	}
	if code, _, errOut := run(t, "plan", "merge", file, shards[0]); code != exitInvalid || !strings.Contains(errOut, "1 of 2 shards") {
		t.Errorf("merge of one shard = exit %d, %q", code, errOut)
	}
	md := filepath.Join(dir, "md")
	code, out, errOut = run(t, "plan", file, "--format", "md", "--out", md)
	if code != exitOK {
		t.Fatalf("plan --format md = exit %d; stderr:\n%s", code, errOut)
	}
	// --format is the deprecated alias of -o: it works, with a word on stderr; with --out
	// the report's path is printed.
	if !strings.Contains(errOut, "--format is deprecated: use -o/--output") || out != "wrote "+filepath.Join(md, "report.md")+"\n" {
		t.Errorf("plan --format md --out: stdout %q, stderr %q", out, errOut)
	}
	text, err := os.ReadFile(filepath.Join(md, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Summary", "![", "latency.png", "| members=4 |"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(md, "latency.png")); err != nil {
		t.Error(err)
	}
	code, out, _ = run(t, "plan", file)
	if code != exitOK || !strings.Contains(out, "data:image/png;base64,") {
		t.Errorf("plan (html) = exit %d, embedded image %v", code, strings.Contains(out, "data:image/png;base64,"))
	}
}

func TestPlanInvalid(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(file, []byte("name: bad\nrepetitions: 2\nsweep:\n  hub.qps: [-1]\nscenario: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, "plan", file)
	if code != exitInvalid || !strings.Contains(errOut, file+":4: sweep.hub.qps[0]: ") {
		t.Errorf("invalid plan = exit %d, %q", code, errOut)
	}
	if code, _, errOut := run(t, "plan", file, "-o", "pdf"); code != exitInvalid || !strings.Contains(errOut, `-o "pdf" is not one of html, md, json`) {
		t.Errorf("-o pdf = exit %d, %q", code, errOut)
	}
	code, out, _ := run(t, "plan", "--help")
	if code != exitOK || !strings.Contains(out, "Exit codes:") || !strings.Contains(out, "fleetsim plan merge") {
		t.Errorf("plan --help = exit %d:\n%s", code, out)
	}
}
