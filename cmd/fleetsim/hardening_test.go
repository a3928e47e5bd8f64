package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidateRefusesBadFleetctlSteps: validate refuses a unit the run would refuse, with
// file:line: field: reason and exit 2.
func TestValidateRefusesBadFleetctlSteps(t *testing.T) {
	bad := write(t, "bad-unit.yaml", `name: bad-unit
duration: 10m
members:
  - name: m1
    kind: Machine
timeline:
  - at: 1m
    fleetctl:
      command: start
      unit: ../etc/passwd.service
      file: "[Service]\nExecStart=/bin/true\n"
`)
	code, out, errOut := run(t, "validate", bad)
	if code != exitInvalid || !strings.Contains(errOut, "bad-unit.yaml:10: timeline[0].fleetctl.unit: invalid unit name") {
		t.Errorf("validate = exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

// TestTracePathsStayInsideAndUnique: scenario names cannot steer a trace file out of the
// --trace directory, a name with '/' works, and two scenarios with one name get two files.
func TestTracePathsStayInsideAndUnique(t *testing.T) {
	got := tracePaths("/tmp/t/run.jsonl", []string{"./../../../x", "a/b", "same", "same", "same-2", "...", ""})
	want := []string{"/tmp/t/run.-..-..-..-x.jsonl", "/tmp/t/run.a-b.jsonl", "/tmp/t/run.same.jsonl", "/tmp/t/run.same-2.jsonl", "/tmp/t/run.same-2-2.jsonl", "/tmp/t/run.scenario.jsonl", "/tmp/t/run.scenario-2.jsonl"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tracePaths (-want +got):\n%s", diff)
	}
	for _, p := range got {
		if filepath.Dir(p) != "/tmp/t" {
			t.Errorf("trace %s is outside /tmp/t", p)
		}
	}

	// End to end: two files named alike, one with a hostile name.
	dir := t.TempDir()
	src := func(name string) string {
		return "name: " + name + "\nduration: 5m\nmembers:\n  - name: m1\nexpect:\n  - member: {name: m1, condition: {type: Joined, status: \"True\"}}\n"
	}
	a := write(t, "a.yaml", src(`"../../escape"`))
	b := write(t, "b.yaml", src(`"../../escape"`))
	code, out, errOut := run(t, "run", "-q", a, b, "--trace", filepath.Join(dir, "trace.jsonl"))
	if code != exitOK {
		t.Fatalf("run = exit %d\n%s%s", code, out, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if diff := cmp.Diff([]string{filepath.Join(dir, "trace.-..-escape-2.jsonl"), filepath.Join(dir, "trace.-..-escape.jsonl")}, files); diff != "" {
		t.Errorf("trace files (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(dir)), "escape.jsonl")); err == nil {
		t.Errorf("a trace escaped the --trace directory")
	}
}

// TestOutputErrors: output that cannot be written (a full disk) fails with exit 2 and a
// message, in every format; so does a completion script for a shell fleetsim has none for.
func TestOutputErrors(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("this test needs /dev/full: %v", err)
	}
	defer full.Close()
	for _, args := range [][]string{
		{"run", quickstart},
		{"run", quickstart, "-q"},
		{"run", quickstart, "-o", "json"},
		{"run", quickstart, "-o", "yaml"},
		{"validate", quickstart},
		{"version"},
	} {
		errf, err := os.CreateTemp(t.TempDir(), "stderr")
		if err != nil {
			t.Fatal(err)
		}
		code := execute(args, full, errf)
		errf.Close()
		msg, _ := os.ReadFile(errf.Name())
		if code != exitInvalid || !strings.Contains(string(msg), "no space left on device") {
			t.Errorf("fleetsim %v > /dev/full = exit %d, stderr %q; want exit 2 and the write error", args, code, msg)
		}
	}

	code, out, errOut := run(t, "completion", "tcsh")
	if code != exitInvalid || !strings.Contains(errOut, `no script for shell "tcsh"; want one of bash, fish, powershell, zsh`) {
		t.Errorf("completion tcsh = exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if code, out, _ := run(t, "completion"); code != exitOK || !strings.Contains(out, "bash") {
		t.Errorf("completion (no shell) = exit %d, want its help:\n%s", code, out)
	}
}

// TestWorkLimitFlags: a scenario asking for too much work exits 2 from validate and run,
// naming the field and the estimate; --max-events raises the limit.
func TestWorkLimitFlags(t *testing.T) {
	big := write(t, "big.yaml", "name: big\nduration: 2562047h\nmembers:\n  - name: m1\n")
	for _, cmd := range []string{"validate", "run"} {
		code, out, errOut := run(t, cmd, big)
		if code != exitInvalid || !strings.Contains(errOut, "big.yaml:2: duration: the run would process about 153,722,825 events") || !strings.Contains(errOut, "--max-events") {
			t.Errorf("%s = exit %d\nstdout: %s\nstderr: %s", cmd, code, out, errOut)
		}
	}
	if code, out, errOut := run(t, "validate", "--max-events", "2e8", big); code != exitOK {
		t.Errorf("validate --max-events 2e8 = exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	small := write(t, "small.yaml", "name: small\nduration: 1h\nmembers:\n  - name: m{1..1000}\n")
	if code, _, errOut := run(t, "run", "--until", "2000h", small); code != exitInvalid || !strings.Contains(errOut, "over --until 2000h0m0s") {
		t.Errorf("run --until 2000h = exit %d, stderr %s", code, errOut)
	}
}

// TestTextFitsTheWidth: text output fits $COLUMNS (no terminal in tests), cutting the
// subjects and detail columns and wrapping expectation details; --wide and JSON keep every
// character.
func TestTextFitsTheWidth(t *testing.T) {
	const full = "found all the clusters needed as specified by the scheduling policy"
	t.Setenv("COLUMNS", "80")
	code, out, errOut := run(t, "run", quickstart)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, l := range strings.Split(out, "\n") {
		if len([]rune(l)) > 80 {
			t.Errorf("line of %d characters with COLUMNS=80: %q", len([]rune(l)), l)
		}
	}
	if !strings.Contains(out, "...") {
		t.Errorf("nothing was cut to fit 80 columns:\n%s", out)
	}
	_, wide, _ := run(t, "run", quickstart, "--wide")
	longest := 0
	for _, l := range strings.Split(wide, "\n") {
		longest = max(longest, len([]rune(l)))
	}
	if longest <= 120 || !strings.Contains(wide, "SchedulingPolicyFulfilled: "+full) {
		t.Errorf("--wide: longest line %d, want the full detail on one line:\n%s", longest, wide)
	}
	_, js, _ := run(t, "run", quickstart, "-o", "json")
	if !strings.Contains(js, full) {
		t.Errorf("JSON lost the full detail")
	}
	t.Setenv("COLUMNS", "")
	_, out, _ = run(t, "run", quickstart)
	for _, l := range strings.Split(out, "\n") {
		if len([]rune(l)) > defaultWidth {
			t.Errorf("line of %d characters without a terminal or COLUMNS: %q", len([]rune(l)), l)
		}
	}
}

// TestUntilSaysWhatItSkipped: --until reports the timeline steps and expectations after
// it, in text and JSON.
func TestUntilSaysWhatItSkipped(t *testing.T) {
	_, out, _ := run(t, "run", quickstart, "--until", "30m")
	if !strings.Contains(out, "SKIPPED  --until 30m0s: 3 timeline steps and 4 expectations after it were not run") {
		t.Errorf("text output does not say what --until skipped:\n%s", out)
	}
	_, out, _ = run(t, "run", quickstart, "--until", "30m", "-q")
	if !strings.Contains(out, "SKIPPED  --until 30m0s: 3 timeline steps and 4 expectations") {
		t.Errorf("quiet output does not say what --until skipped:\n%s", out)
	}
	_, js, _ := run(t, "run", quickstart, "--until", "30m", "-o", "json")
	if !strings.Contains(js, `"skippedSteps": 3`) || !strings.Contains(js, `"skippedExpectations": 4`) {
		t.Errorf("JSON lacks the skipped counts:\n%s", js[:min(len(js), 600)])
	}
	_, out, _ = run(t, "run", quickstart)
	if strings.Contains(out, "SKIPPED") {
		t.Errorf("a whole run reports skipped steps")
	}
}

// TestHumanTimes: text output rounds times to the millisecond; JSON keeps them whole, as
// numbers of seconds.
func TestHumanTimes(t *testing.T) {
	for in, want := range map[string]string{"24m1.100000001s": "24m1.1s", "1m0.1s": "1m0.1s", "150.000001ms": "150ms", "2h0m0s": "2h0m0s", "nonsense": "nonsense"} {
		if got := human(in); got != want {
			t.Errorf("human(%q) = %q, want %q", in, got, want)
		}
	}
	sc := write(t, "jitter.yaml", "name: jitter\nduration: 30m\nnetwork: {distribution: uniform, min: 1ns, max: 90ms}\nmembers:\n  - name: m{1..3}\nexpect:\n  - member: {name: m1, condition: {type: Joined, status: \"True\"}}\n")
	_, out, _ := run(t, "run", sc, "--wide")
	_, js, _ := run(t, "run", sc, "-o", "json")
	fine := regexp.MustCompile(`\b[0-9hm]*[0-9]\.[0-9]{4,}m?s\b`)
	if !regexp.MustCompile(`"at": [0-9]+\.[0-9]{4,},`).MatchString(js) {
		t.Fatalf("the scenario has no sub-millisecond times (in seconds) to round; JSON:\n%s", js)
	}
	if m := fine.FindString(js); m != "" {
		t.Errorf("a time %q in JSON is a duration string, not a number of seconds", m)
	}
	if m := fine.FindString(out); m != "" {
		t.Errorf("unrounded time %q in text output:\n%s", m, out)
	}
}

// TestWhatTheSeedChanges pins what the README says: the seed drives network delays and
// loss and random faults only, so the quickstart (none of them) runs the same under every
// seed, while a scenario with a random network does not; a seed always gives one hash.
func TestWhatTheSeedChanges(t *testing.T) {
	hash := func(file, seed string) string {
		t.Helper()
		code, out, errOut := run(t, "run", file, "-o", "json", "--seed", seed)
		if code != exitOK {
			t.Fatalf("run %s --seed %s = exit %d: %s", file, seed, code, errOut)
		}
		var r struct{ TraceHash string }
		oneReport(t, out, &r)
		return r.TraceHash
	}
	if a, b := hash(quickstart, "1"), hash(quickstart, "2"); a != b {
		t.Errorf("quickstart: seeds 1 and 2 gave hashes %s and %s; the README says a scenario without a random network or faults does not depend on the seed", a, b)
	}
	noisy := write(t, "noisy.yaml", "name: noisy\nduration: 30m\nnetwork: {distribution: exponential, mean: 200ms, max: 2s, loss: 0.01}\nmembers:\n  - name: m{1..5}\nexpect:\n  - member: {name: m1, condition: {type: Joined, status: \"True\"}}\n")
	if a, b := hash(noisy, "1"), hash(noisy, "2"); a == b {
		t.Errorf("a random network: seeds 1 and 2 gave the same hash %s", a)
	}
	if a, b := hash(noisy, "9"), hash(noisy, "9"); a != b {
		t.Errorf("seed 9 gave hashes %s and %s", a, b)
	}
	readme, err := os.ReadFile("../../scenarios/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "### What the seed changes") || !strings.Contains(string(readme), "drives exactly three random sources") {
		t.Errorf("scenarios/README.md does not say what the seed changes")
	}
}
