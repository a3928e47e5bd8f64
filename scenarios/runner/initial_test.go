package runner_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/scenarios/runner"
)

const initialBase = `name: initial
duration: 10m
members:
  - name: alpha
  - name: bravo
  - name: charlie
timeline:
  - at: 1m
    apply: |
      apiVersion: v1
      kind: Namespace
      metadata:
        name: app
      ---
      apiVersion: placement.kubernetes-fleet.io/v1beta1
      kind: ClusterResourcePlacement
      metadata:
        name: web
      spec:
        resourceSelectors:
          - {group: "", version: v1, kind: Namespace, name: app}
        policy:
          placementType: PickN
          numberOfClusters: 2
`

// TestInitialBindingsAreKept: a PickN placement on an empty fleet picks the greatest names
// (charlie, bravo); started with bindings on alpha and bravo it keeps them, as a hub that
// picked them earlier does.
func TestInitialBindingsAreKept(t *testing.T) {
	for _, tc := range []struct {
		name    string
		initial string
		want    []string
	}{
		{name: "no initial state", want: []string{"bravo", "charlie"}},
		{name: "seeded", initial: "initial:\n  bindings:\n    - placement: web\n      clusters: [bravo, alpha]\n", want: []string{"alpha", "bravo"}},
		{name: "seeded beyond N is scaled in by the scheduler", initial: "initial:\n  bindings:\n    - placement: web\n      clusters: [alpha, bravo, charlie]\n", want: []string{"bravo", "charlie"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenarios.Parse("initial.yaml", []byte(initialBase+tc.initial))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := runner.Run(sc, runner.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Placements) != 1 {
				t.Fatalf("placements: %+v", rep.Placements)
			}
			if d := cmp.Diff(tc.want, rep.Placements[0].Clusters); d != "" {
				t.Errorf("clusters (-want +got):\n%s", d)
			}
		})
	}
}

func TestInitialRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, initial, want string
	}{
		{"unknown member", "initial:\n  bindings:\n    - placement: web\n      clusters: [delta]\n", `initial.yaml:28: initial.bindings[0].clusters[0]: unknown member "delta"`},
		{"twice", "initial:\n  bindings:\n    - placement: web\n      clusters: [alpha, alpha]\n", `cluster "alpha" is listed twice`},
		{"unknown key", "initial:\n  binding: []\n", `unknown field "binding"`},
		{"placement twice", "initial:\n  bindings:\n    - placement: web\n    - placement: web\n", `placement web already has its bindings in initial.bindings[0]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenarios.Parse("initial.yaml", []byte(initialBase+tc.initial))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
