package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const whatifFleet = "../../scenarios/whatif/testdata/fleet.yaml"

// TestWhatifExitCodes: 0 for a safe change, 1 for one that breaks a budget the user set, 2
// for bad input (the change file and line named).
func TestWhatifExitCodes(t *testing.T) {
	leave := "../../scenarios/whatif/testdata/leave.yaml"
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		stdout     []string
		stderrPart string
	}{
		{"safe", []string{"whatif", whatifFleet, "--change", leave}, exitOK,
			[]string{"Placement web", "added    delta: picked by scheduling policy", "removed  bravo: unscheduled: cluster has left the fleet", "Safe: no invariant or budget broken."}, ""},
		{"must-keep broken", []string{"whatif", whatifFleet, "--change", leave, "--must-keep", "bravo"}, exitFailed,
			[]string{"BROKEN budget must-keep: placement web loses cluster bravo", "Not safe."}, ""},
		{"calibrated timing", []string{"whatif", whatifFleet, "--change", leave, "--calibration", "reference"}, exitOK,
			[]string{"Placement web", "timeline: available after "}, ""},
		{"bad calibration", []string{"whatif", whatifFleet, "--change", leave, "--calibration", "nope.yaml"}, exitInvalid, nil, "--calibration"},
		{"no change", []string{"whatif", whatifFleet}, exitInvalid, nil, "give the change with --change FILE"},
		{"bad change", []string{"whatif", whatifFleet, "--change", write(t, "c.yaml", "changes:\n  - fail: {member: nobody}\n")}, exitInvalid, nil,
			`c.yaml:2: changes[0].fail.member: unknown member "nobody"`},
		{"missing snapshot", []string{"whatif", "nope.yaml", "--change", leave}, exitInvalid, nil, "nope.yaml"},
		{"verify a step a hub cannot take", []string{"whatif", whatifFleet, "--change", write(t, "f.yaml", "changes:\n  - fail: {member: alpha}\n"), "--verify", write(t, "kubeconfig", "")}, exitInvalid, nil,
			"--verify: a fail step cannot be applied to a hub through its API"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
			if !strings.Contains(errOut, tc.stderrPart) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderrPart, errOut)
			}
		})
	}
}

func TestWhatifJSON(t *testing.T) {
	code, out, errOut := run(t, "whatif", whatifFleet, "--change", "../../scenarios/whatif/testdata/scale.yaml", "-o", "json")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var got struct {
		Safe       bool `json:"safe"`
		Placements []struct {
			Name  string `json:"name"`
			Added []struct {
				Cluster string `json:"cluster"`
			} `json:"added"`
			Timeline struct {
				Available bool `json:"available"`
			} `json:"timeline"`
		} `json:"placements"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Placements) != 1 || got.Placements[0].Name != "web" || len(got.Placements[0].Added) != 1 {
		t.Fatalf("placements: %+v", got.Placements)
	}
	if d := cmp.Diff("delta", got.Placements[0].Added[0].Cluster); d != "" || !got.Safe || !got.Placements[0].Timeline.Available {
		t.Errorf("added (-want +got): %s; safe %v; available %v", d, got.Safe, got.Placements[0].Timeline.Available)
	}
}
