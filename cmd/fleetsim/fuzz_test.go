package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/model/rollout"
	"github.com/fleetsim/fleetsim/scenarios/fuzz"
)

const rolloutExample2 = "../../scenarios/rollout-example-2.yaml"

func fuzzSummary(t *testing.T, out string) *fuzz.Summary {
	t.Helper()
	var s fuzz.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("fuzz --output json is not a summary: %v\n%s", err, out)
	}
	return &s
}

// TestFuzzShardsAndMerge: `--shard 0/2`, JOB_COMPLETION_INDEX=1 with FUZZ_SHARDS=2, and
// `fuzz merge` of the two equal one unsharded campaign.
func TestFuzzShardsAndMerge(t *testing.T) {
	args := []string{"fuzz", quickstart, "--runs", "8", "--seed", "5", "--output", "json", "--parallel", "2"}
	code, out, errOut := run(t, args...)
	if code != exitOK {
		t.Fatalf("fuzz = exit %d; stderr:\n%s", code, errOut)
	}
	whole := fuzzSummary(t, out)
	if whole.Runs != 8 || whole.Violations != 0 || whole.Events == 0 {
		t.Fatalf("unsharded summary = %+v", whole)
	}
	dir := t.TempDir()
	var files []string
	for i := range 2 {
		a := append([]string(nil), args...)
		if i == 0 {
			a = append(a, "--shard", "0/2")
		} else {
			t.Setenv("JOB_COMPLETION_INDEX", strconv.Itoa(i))
			t.Setenv("FUZZ_SHARDS", "2")
		}
		code, out, errOut := run(t, a...)
		if code != exitOK {
			t.Fatalf("shard %d = exit %d; stderr:\n%s", i, code, errOut)
		}
		if s := fuzzSummary(t, out); s.Shard != i || s.Shards != 2 || s.Runs != 4 {
			t.Errorf("shard %d summary: shard %d/%d, %d runs", i, s.Shard, s.Shards, s.Runs)
		}
		p := filepath.Join(dir, "shard-"+strconv.Itoa(i)+".json")
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	code, out, errOut = run(t, append([]string{"fuzz", "merge", "--output", "json"}, files...)...)
	if code != exitOK {
		t.Fatalf("fuzz merge = exit %d; stderr:\n%s", code, errOut)
	}
	m := fuzzSummary(t, out)
	if m.Runs != whole.Runs || m.Events != whole.Events || m.Digest != whole.Digest {
		t.Errorf("merged %d runs, %d events, digest %x; unsharded %d, %d, %x", m.Runs, m.Events, m.Digest, whole.Runs, whole.Events, whole.Digest)
	}
	if code, _, _ := run(t, "fuzz", "merge", files[0]); code != exitInvalid {
		t.Errorf("merging one of two shards = exit %d, want %d", code, exitInvalid)
	}
}

// TestFuzzWritesReplayableFailure: with the planted rollout bug, fuzz exits 1, writes the
// minimal scenario and prints the command replaying it; `fleetsim run` on it fails.
func TestFuzzWritesReplayableFailure(t *testing.T) {
	restore := rollout.PlantBugForTest(1)
	defer restore()
	dir := t.TempDir()
	code, out, errOut := run(t, "fuzz", rolloutExample2, "--runs", "4", "--out", dir, "--parallel", "1")
	if code != exitFailed {
		t.Fatalf("fuzz with a planted bug = exit %d, want 1; stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	_, replay, ok := strings.Cut(errOut, "replay with: fleetsim run ")
	if !ok {
		t.Fatalf("stderr does not print the replay command:\n%s", errOut)
	}
	path := strings.TrimSpace(replay)
	if filepath.Dir(path) != dir {
		t.Errorf("failure written to %s, not under --out %s", path, dir)
	}
	if code, rout, _ := run(t, "run", path); code != exitFailed || !strings.Contains(rout, "rolloutBudgets") {
		t.Errorf("fleetsim run %s = exit %d, want 1 with rolloutBudgets failing:\n%s", path, code, rout)
	}

	// Should writing the file fail after all (here a directory stands in its way), the
	// failure is printed all the same, with the scenario on stderr, and fuzz exits 1.
	scenario, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, "fuzz", rolloutExample2, "--runs", "4", "--out", dir, "--parallel", "1")
	if code != exitFailed || !strings.Contains(out, "FAIL run") || !strings.Contains(out, "replay: (not written: ") {
		t.Errorf("fuzz whose failure cannot be written = exit %d, want 1 and the failure on stdout:\n%s", code, out)
	}
	if !strings.Contains(errOut, "writing the failing scenario to --out failed: ") || !strings.Contains(errOut, string(scenario)) {
		t.Errorf("stderr lacks the write error or the scenario:\n%s", errOut)
	}
}

// TestFuzzChecksOutFirst: an --out that cannot take the failing scenario (an existing file,
// a directory that cannot be made) is refused with exit 2 before the campaign runs, not
// after it found a failure it could then print nowhere.
func TestFuzzChecksOutFirst(t *testing.T) {
	file := write(t, "file", "")
	for _, out := range []string{file, filepath.Join(file, "sub")} {
		code, stdout, errOut := run(t, "fuzz", quickstart, "--runs", "1", "--out", out)
		if code != exitInvalid || stdout != "" || !strings.Contains(errOut, "fleetsim: --out "+out+": cannot write a failing scenario there: ") {
			t.Errorf("fuzz --out %s = exit %d, want 2 before running\nstdout: %s\nstderr: %s", out, code, stdout, errOut)
		}
	}
}

// TestFuzzIndexedJobEnvironment: in an Indexed Job, JOB_COMPLETION_INDEX needs FUZZ_SHARDS
// (a pod is not told the Job's completions): without it every pod would run the whole
// campaign, so fuzz exits 2 saying what to set, as the help says; --shard overrides both.
func TestFuzzIndexedJobEnvironment(t *testing.T) {
	for _, tc := range []struct {
		index, shards string
		args          []string
		code          int
		message       string
	}{
		{"3", "", nil, exitInvalid, `JOB_COMPLETION_INDEX is "3" but FUZZ_SHARDS is not set: set FUZZ_SHARDS to the Indexed Job's completions`},
		{"3", "3", nil, exitInvalid, `JOB_COMPLETION_INDEX "3" of FUZZ_SHARDS "3" is not a shard I of N with 0 <= I < N`},
		{"x", "2", nil, exitInvalid, `JOB_COMPLETION_INDEX "x" of FUZZ_SHARDS "2"`},
		{"1", "2", nil, exitOK, "shard 1/2"},
		{"3", "", []string{"--shard", "0/2"}, exitOK, "shard 0/2"},
		{"", "4", nil, exitOK, "shard 0/1"},
	} {
		t.Run(tc.index+"/"+tc.shards, func(t *testing.T) {
			t.Setenv("JOB_COMPLETION_INDEX", tc.index)
			t.Setenv("FUZZ_SHARDS", tc.shards)
			if tc.shards == "" {
				os.Unsetenv("FUZZ_SHARDS")
			}
			code, out, errOut := run(t, append([]string{"fuzz", quickstart, "--runs", "2", "--out", t.TempDir()}, tc.args...)...)
			if code != tc.code || !strings.Contains(out+errOut, tc.message) {
				t.Errorf("fuzz = exit %d, want %d and %q\nstdout: %s\nstderr: %s", code, tc.code, tc.message, out, errOut)
			}
		})
	}
	code, out, _ := run(t, "fuzz", "--help")
	if code != exitOK || !strings.Contains(out, "JOB_COMPLETION_INDEX without FUZZ_SHARDS is an error (exit 2)") {
		t.Errorf("fuzz --help does not say what JOB_COMPLETION_INDEX without FUZZ_SHARDS does:\n%s", out)
	}
}

// TestFuzzMergeRefusesForeignShards: fuzz merge exits 2, naming the file, for shards that do
// not make one campaign; its verdict and exit code come from the failures the shards hold;
// no control byte of a summary reaches the terminal.
func TestFuzzMergeRefusesForeignShards(t *testing.T) {
	dir := t.TempDir()
	shard := func(name string, args ...string) string {
		t.Helper()
		code, out, errOut := run(t, append([]string{"fuzz", "--runs", "4", "--output", "json", "--out", dir}, args...)...)
		if code != exitOK {
			t.Fatalf("fuzz %v = exit %d: %s", args, code, errOut)
		}
		return write(t, name, out)
	}
	q0, q1 := shard("q0.json", quickstart, "--shard", "0/2"), shard("q1.json", quickstart, "--shard", "1/2")
	t1 := shard("t1.json", "../../scenarios/taints-tolerations.yaml", "--shard", "1/2")
	s1 := shard("s1.json", quickstart, "--shard", "1/2", "--seed", "2")
	edit := func(name, path string, f func(map[string]any)) string {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return write(t, name, string(out))
	}
	failure := func(m map[string]any) map[string]any {
		return map[string]any{"campaignSeed": 1, "run": 1, "seed": 7, "source": m["files"].([]any)[0], "invariant": "rolloutBudgets\x1b[2J",
			"detail": "\x1b]0;pwned\x07 and \u009b31m", "at": "1m0s", "end": "2m0s"}
	}
	for _, tc := range []struct {
		name    string
		files   []string
		code    int
		message string
	}{
		{"the shards of one campaign", []string{q0, q1}, exitOK, "PASS: no invariant violated"},
		{"shard 1 of another scenario", []string{q0, t1}, exitInvalid, t1 + ": shard 1/2 is of another campaign than " + q0 + " (shard 0/2): files"},
		{"shard 1 of another seed", []string{q0, s1}, exitInvalid, s1 + ": shard 1/2 is of another campaign than " + q0 + " (shard 0/2): seed 2, not 1"},
		{"shards 5 and 7 of 2", []string{edit("q5.json", q0, func(m map[string]any) { m["shard"] = 5 }), edit("q7.json", q1, func(m map[string]any) { m["shard"] = 7 })}, exitInvalid, "q5.json: shard 5 is not one of the 2 shards 0..1"},
		{"a shard twice", []string{q0, q1, q1}, exitInvalid, q1 + ": shard 1/2 is given twice (" + q1 + " is shard 1 too)"},
		{"a missing shard", []string{q1}, exitInvalid, "fleetsim: merge: 1 of 2 shards given; missing shard 0"},
		{"a failure with violations: 0", []string{q0, edit("f0.json", q1, func(m map[string]any) { m["failure"] = failure(m) })}, exitInvalid, "f0.json: holds a failure (run 1) but counts no violation"},
		{"not JSON", []string{q0, write(t, "bad.json", "\x1b[2J")}, exitInvalid, `bad.json: not a fuzz summary (fleetsim fuzz --output json): invalid character '\x1b'`},
		{"a shard that found a violation", []string{q0, edit("f1.json", q1, func(m map[string]any) { m["violations"], m["failure"] = 1, failure(m) })}, exitFailed,
			`FAIL run 1 of ../../scenarios/quickstart.yaml (seed 7): invariant rolloutBudgets\x1b[2J at 1m0s` + "\n" + `  \x1b]0;pwned\a and \u009b31m`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, output := range []string{"text", "json"} {
				code, out, errOut := run(t, append([]string{"fuzz", "merge", "--output", output}, tc.files...)...)
				if code != tc.code || (output == "text" || code == exitInvalid) && !strings.Contains(out+errOut, tc.message) {
					t.Errorf("fuzz merge -o %s = exit %d, want %d and %q\nstdout: %s\nstderr: %s", output, code, tc.code, tc.message, out, errOut)
				}
				if strings.ContainsAny(out+errOut, "\x1b\x07\u009b") {
					t.Errorf("fuzz merge -o %s printed a control byte of its input:\n%q", output, out+errOut)
				}
			}
		})
	}
}

// TestFuzzJobManifest: the Indexed Job's shard count matches its completions.
func TestFuzzJobManifest(t *testing.T) {
	data, err := os.ReadFile("../../config/fuzz/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var job struct {
		Spec struct {
			CompletionMode string `json:"completionMode"`
			Completions    int    `json:"completions"`
			Parallelism    int    `json:"parallelism"`
			Template       struct {
				Spec struct {
					Containers []struct {
						Args []string `json:"args"`
						Env  []struct{ Name, Value string }
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &job); err != nil {
		t.Fatal(err)
	}
	if job.Spec.CompletionMode != "Indexed" {
		t.Errorf("completionMode = %q, want Indexed", job.Spec.CompletionMode)
	}
	c := job.Spec.Template.Spec.Containers[0]
	shards := ""
	for _, e := range c.Env {
		if e.Name == "FUZZ_SHARDS" {
			shards = e.Value
		}
	}
	if shards != strconv.Itoa(job.Spec.Completions) {
		t.Errorf("FUZZ_SHARDS %q differs from completions %d", shards, job.Spec.Completions)
	}
	if len(c.Args) == 0 || c.Args[0] != "fuzz" {
		t.Errorf("args = %v, want a fuzz command", c.Args)
	}
}
