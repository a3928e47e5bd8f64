package scenarios

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"
)

// TestExtendIsParseOfTheWholeFile: a Base extended with timeline steps and expectations
// gives what Parse gives for the file with them written in (the steps after the file's
// own, the expectations as the last key), given the nodes with their lines in that file:
// the same steps in time order with their lines and fields, the same expectations, and
// the same *Error (line, field, reason) when the added steps are wrong. The base is not
// changed by an Extend: the next one starts from the file again.
func TestExtendIsParseOfTheWholeFile(t *testing.T) {
	const base = `name: t
seed: 3
duration: 1h
members:
  - name: c{1..2}
  - name: late
    joinAt: 30m
timeline:
  - at: 5m
    name: first
    apply: |
      apiVersion: v1
      kind: Namespace
      metadata:
        name: web
  - at: 1m
    fleetctl: {command: submit, unit: a.service, file: "[Service]\nExecStart=/bin/true\n"}
  - at: 40m
    fail: {member: late}
always: [oneBindingPerCluster]
`
	for _, tc := range []struct {
		name string
		// steps are added to the timeline (indented as its items); expect is the file's
		// expect list (after always).
		steps, expect string
		seed          uint64
		wantErr       *Error
	}{
		{name: "nothing added", seed: 3},
		{name: "member steps between the file's", seed: 9, steps: `  - at: 2m
    fail: {member: c1, mode: partition}
  - at: 5m
    heal: {member: c1}
  - at: 3m
    taint: {member: c2, key: k, effect: NoSchedule}
`},
		{name: "a member created by an added step, used by a later one and expected", seed: 4, steps: `  - at: 10m
    apply: |
      apiVersion: cluster.kubernetes-fleet.io/v1beta1
      kind: MemberCluster
      metadata:
        name: extra
      spec:
        heartbeatPeriodSeconds: 60
  - at: 20m
    delete: {kind: MemberCluster, name: extra}
`, expect: `expect:
  - member:
      name: extra
      condition: {type: Joined, status: "False"}
  - member:
      name: c1
      condition: {type: Healthy, status: "True"}
`},
		{name: "an added step before its member joins", seed: 3, steps: `  - at: 1m
    heal: {member: c1}
  - at: 10m
    fail: {member: late}
`, wantErr: &Error{Path: "t.yaml", Line: 23, Field: "timeline[4].fail.member", Reason: `member "late" does not exist yet at 10m0s: it joins at 30m0s (members[1], line 6)`}},
		{name: "an added step uses a member created later", seed: 3, steps: `  - at: 1m
    fail: {member: extra}
  - at: 2m
    apply: |
      apiVersion: cluster.kubernetes-fleet.io/v1beta1
      kind: MemberCluster
      metadata:
        name: extra
`, wantErr: &Error{Path: "t.yaml", Line: 21, Field: "timeline[3].fail.member", Reason: `member "extra" does not exist yet at 1m0s: the MemberCluster that creates it is applied later (line 24)`}},
		{name: "an added step reuses a step name", seed: 3, steps: `  - at: 2m
    name: first
    restartHub: {}
`, wantErr: &Error{Path: "t.yaml", Line: 21, Field: "timeline[3].name", Reason: `step name "first" is already used by the step at line 10`}},
		{name: "an expectation of an unknown member", seed: 3, expect: `expect:
  - member:
      name: nobody
      condition: {type: Joined, status: "True"}
`, wantErr: &Error{Path: "t.yaml", Line: 23, Field: "expect[0].member.name"}},
		{name: "a fleetctl step against the file's unit states", seed: 3, steps: `  - at: 30s
    fleetctl: {command: start, unit: a.service}
`, wantErr: &Error{Path: "t.yaml", Line: 21, Field: "timeline[3].fleetctl.unit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ParseBase("t.yaml", []byte(base), Options{})
			if err != nil {
				t.Fatal(err)
			}
			// The whole file: the steps at the timeline's end (before always), expect last.
			whole := strings.Replace(base, "always:", tc.steps+"always:", 1) + tc.expect
			whole = strings.Replace(whole, "seed: 3\n", fmt.Sprintf("seed: %d\n", tc.seed), 1)
			want, werr := Parse("t.yaml", []byte(whole))
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(whole), &doc); err != nil {
				t.Fatal(err)
			}
			root := doc.Content[0]
			var steps, expect []*yaml.Node
			for i := 0; i+1 < len(root.Content); i += 2 {
				switch root.Content[i].Value {
				case "timeline":
					steps = root.Content[i+1].Content[b.TimelineLen():]
				case "expect":
					expect = root.Content[i+1].Content
				}
			}
			got, gerr := b.Extend(tc.seed, steps, expect)
			if tc.wantErr != nil {
				var pe, ge *Error
				if !errors.As(werr, &pe) || !errors.As(gerr, &ge) {
					t.Fatalf("Parse: %v, Extend: %v; want both an *Error", werr, gerr)
				}
				if diff := cmp.Diff(pe, ge); diff != "" {
					t.Errorf("Extend's error differs from Parse's (-parse +extend):\n%s", diff)
				}
				if tc.wantErr.Reason == "" {
					tc.wantErr.Reason = pe.Reason // only where it is, not how it is put
				}
				if diff := cmp.Diff(tc.wantErr, pe); diff != "" {
					t.Errorf("Parse's error (-want +got):\n%s", diff)
				}
				return
			}
			if werr != nil || gerr != nil {
				t.Fatalf("Parse: %v, Extend: %v; want both to succeed\n%s", werr, gerr, whole)
			}
			if diff := cmp.Diff(want, got, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
				t.Errorf("Extend differs from Parse of the whole file (-parse +extend):\n%s", diff)
			}
			// The base is unchanged: extending it with nothing gives the file.
			again, err := b.Extend(3, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(b.Scenario(), again, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
				t.Errorf("after an Extend, the base extended with nothing differs from the file (-file +extend):\n%s", diff)
			}
		})
	}
}
