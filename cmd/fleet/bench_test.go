package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/fleetsim/fleetsim/sim/timing"
)

// TestBenchHubFlags: `fleet bench hub` takes exactly the flags of sim/timing's workload, which
// `fleetsim bench hub` takes too (its own TestBenchHubFlags): the measurement and the
// prediction accept the same flag set.
func TestBenchHubFlags(t *testing.T) {
	root := newRootCommand(&bytes.Buffer{}, &bytes.Buffer{})
	hub, _, err := root.Find([]string{"bench", "hub"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(timing.WantFlagSignature(), timing.FlagSignature(hub.Flags())); diff != "" {
		t.Errorf("fleet bench hub's flags (-want +got):\n%s", diff)
	}
}

// TestBenchHubPassFlags: the flags given are passed on to the harness as given, a repeated
// flag once per value, and no flag left at its default.
func TestBenchHubPassFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, nil},
		{[]string{"--members", "40", "-o", "json"}, []string{"--members=40", "--output=json"}},
		{[]string{"--hub-flag=--a=1", "--hub-flag", "--b=2", "--restart"}, []string{"--hub-flag=--a=1", "--hub-flag=--b=2", "--restart=true"}},
		{[]string{"--report-delay", "50ms", "--calibration", "c.yaml"}, []string{"--calibration=c.yaml", "--report-delay=50ms"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			timing.AddFlags(fs, &timing.Workload{})
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, passFlags(fs)); diff != "" {
				t.Errorf("passed flags (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBenchHubInvalid: a workload neither command can run is refused before the harness is
// looked for, naming the flag.
func TestBenchHubInvalid(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "hub", "--members", "0"}, "--members 0: must be 1 or more"},
		{[]string{"bench", "hub", "--members", "5", "--pick", "6"}, "--pick 6: must be from 0 to --members (5)"},
		{[]string{"bench", "hub", "-o", "xml"}, `--output "xml": must be text, json or yaml`},
		{[]string{"bench", "hub", "--calibrate-writes", "-1"}, "--calibrate-writes -1, --calibrate-decisions 100: must be 0 (the default) or more"},
	} {
		var stderr bytes.Buffer
		if code := execute(t.Context(), tc.args, &bytes.Buffer{}, &stderr); code != exitInvalid || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("fleet %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), exitInvalid, tc.want)
		}
	}
}
