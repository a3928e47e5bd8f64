package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const calibratedPlan = `name: p
question: q?
repetitions: 1
x: members
hub: {workers: 4, bindingStatus: 12.5}
sweep:
  members: [2]
  hub.cores: [4, 16]
scenario: |
  name: s
  duration: 5m
  members:
    - name: m-{1..{{.members}}}
`

// TestCalibratedHub: a plan's hub: is the calibrated model unless it names a token-bucket
// parameter; its constants and swept values, by their last name, set the calibration of
// each point, and the scenario's own hub gives way to it.
func TestCalibratedHub(t *testing.T) {
	pl, err := Parse("p.yaml", []byte(calibratedPlan))
	if err != nil {
		t.Fatal(err)
	}
	if pl.Hub.Model != Calibrated {
		t.Fatalf("model %q, want %q", pl.Hub.Model, Calibrated)
	}
	var got [][]float64
	for i := range pl.Points() {
		hm, err := pl.HubModelAt(i)
		if err != nil {
			t.Fatal(err)
		}
		c := hm.Calibration
		got = append(got, []float64{float64(hm.Workers), c.APIServer.Cores.Value, c.APIServer.BindingStatus.Value})
		sc, err := pl.Scenario(i)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Hub != nil {
			t.Errorf("point %d: the scenario keeps a hub %+v beside the calibrated model", i, sc.Hub)
		}
	}
	if diff := cmp.Diff([][]float64{{4, 4, 12.5}, {4, 16, 12.5}}, got); diff != "" {
		t.Errorf("workers, cores, bindingStatus by point (-want +got):\n%s", diff)
	}
	// One run of the first point: the calibrated model runs.
	if _, err := pl.RunOne(0); err != nil {
		t.Fatal(err)
	}
}

// TestHubModelErrors: one model's parameters at a time; a calibration constant in range.
func TestHubModelErrors(t *testing.T) {
	for _, tc := range []struct{ name, hub, sweep, want string }{
		{"both models in hub:", "hub: {qps: 50, cores: 4}\n", "", "hub.cores: is a parameter of the calibrated model, and the hub: section already gives the tokenBucket model's"},
		{"sweep of the other model", "hub: {cores: 4}\n", "  hub.qps: [1, 2]\n", "is a parameter of the tokenBucket model, and the plan's hub is the calibrated model"},
		{"constant out of range", "hub: {cores: 0}\n", "", "apiServer.cores: 0 cores is outside"},
		{"unknown", "hub: {corez: 4}\n", "", "corez"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := "name: p\nquestion: q?\nx: members\n" + tc.hub + "sweep:\n  members: [2]\n" + tc.sweep +
				"scenario: |\n  name: s\n  duration: 5m\n  members:\n    - name: m-{1..{{.members}}}\n"
			_, err := Parse("p.yaml", []byte(text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse = %v, want an error with %q", err, tc.want)
			}
		})
	}
}
