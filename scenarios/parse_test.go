package scenarios

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/scenarios/input"
)

// quantityCmp compares quantities by value (resource.Quantity has unexported fields).
var quantityCmp = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// ignoreObjects leaves manifest objects out of whole-scenario diffs; tests check them apart.
var ignoreObjects = cmpopts.IgnoreFields(Manifest{}, "Object")

func ptr[T any](v T) *T { return &v }

func q(s string) resource.Quantity { return resource.MustParse(s) }

func TestParseFull(t *testing.T) {
	const path = "testdata/full.yaml"
	got, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%q) = %v, want no error", path, err)
	}
	want := &Scenario{
		Path:        path,
		Name:        "full",
		Description: "Every key of the scenario format, with non-default values.\n",
		Seed:        42,
		Duration:    2*time.Hour + 30*time.Minute,
		Members: []MemberGroup{
			{
				Line:       9,
				Names:      []string{"east-01", "east-02", "east-03"},
				Kind:       member.KindCluster,
				Labels:     map[string]string{"region": "east", "kubernetes.io/env": "prod"},
				Taints:     []member.Taint{{Key: "dedicated", Value: "gpu", Effect: member.NoSchedule}},
				Properties: map[string]string{"kubernetes-fleet.io/node-count": "3"},
				Resources: member.ResourceUsage{
					Capacity:    member.ResourceList{"cpu": q("8"), "memory": q("32Gi")},
					Allocatable: member.ResourceList{"cpu": q("7500m"), "memory": q("30Gi")},
					Available:   member.ResourceList{"cpu": q("4")},
				},
				HeartbeatPeriod: 30 * time.Second,
				JoinAt:          time.Minute,
			},
			{
				Line:            24,
				Names:           []string{"west"},
				Kind:            member.KindCluster,
				Labels:          map[string]string{"region": "west"},
				HeartbeatPeriod: time.Minute,
			},
			{
				Line:            26,
				Names:           []string{"m1", "m2"},
				Kind:            member.KindMachine,
				HeartbeatPeriod: MachineHeartbeatPeriod, // machines default to 15s
				Metadata:        map[string][]string{"region": {"us-west"}, "disk": {"ssd"}},
			},
		},
		Timeline: []Step{
			{Line: 35, At: 0, Action: ActionApply, Apply: []Manifest{{Line: 37}, {Line: 42}}},
			{Line: 55, At: 5 * time.Minute, Action: ActionApply, Apply: []Manifest{{Line: 57}}},
			{Line: 33, At: 10 * time.Minute, Action: ActionFail, Fail: &Fail{Member: "west", Mode: Partition}},
			{Line: 66, At: 10 * time.Minute, Action: ActionHeal, Heal: &MemberRef{Member: "late"}},
			{Line: 68, At: 20 * time.Minute, Action: ActionTaint, Taint: &TaintStep{
				Member: "east-01", Taint: member.Taint{Key: "maintenance", Value: "true", Effect: member.NoSchedule}}},
			{Line: 70, At: 25 * time.Minute, Action: ActionUntaint, Untaint: &UntaintStep{Member: "east-01", Key: "maintenance"}},
			{Line: 72, At: 30 * time.Minute, Action: ActionLabel, Label: &LabelStep{
				Member: "west", Set: map[string]string{"tier": "gold"}, Remove: []string{"region"}}},
			{Line: 77, At: 40 * time.Minute, Action: ActionApprove, Approve: &ObjectRef{Kind: ApprovalRequestKind, Name: "run-canary"}},
			{Line: 79, At: 45 * time.Minute, Action: ActionRestartHub},
			{Line: 81, At: 50 * time.Minute, Action: ActionRestartHub},
			{Line: 83, At: time.Hour, Action: ActionWorkload, Workload: &WorkloadStep{
				Member: "*", Kind: "Deployment", Name: "web", Namespace: "app", Behavior: Unavailable}},
			{Line: 85, At: time.Hour, Action: ActionDelete, Delete: &ObjectRef{Kind: "ClusterResourcePlacement", Name: "crp"}},
			{Line: 87, At: time.Hour, Action: ActionFail, Fail: &Fail{Member: "m1", Mode: Crash}},
		},
		Expect: []Expectation{
			{Line: 91, At: 15 * time.Minute, Placement: &PlacementExpectation{
				Name:         "crp",
				Clusters:     []string{"east-02", "west"},
				ClusterCount: ptr(2),
				Condition:    &ConditionExpectation{Type: "Scheduled", Status: "True", Reason: "SchedulingPolicyFulfilled"},
			}},
			{Line: 97, At: 150 * time.Minute, AtEnd: true, Placement: &PlacementExpectation{Name: "crp", ClusterCount: ptr(0)}},
			{Line: 100, At: 150 * time.Minute, AtEnd: true, Member: &MemberExpectation{
				Name: "late", Condition: &ConditionExpectation{Type: "Joined", Status: "Unknown"}}},
			{Line: 103, At: 150 * time.Minute, AtEnd: true, Placement: &PlacementExpectation{Name: "crp", Clusters: []string{}}},
		},
		Always: []string{"oneBindingPerCluster", "pickNWithinLimit"},
		Faults: &RandomFaults{
			Line:                    109,
			MeanTimeBetweenFailures: time.Hour,
			MeanDuration:            5 * time.Minute,
			Modes:                   []FailMode{Crash},
			Until:                   150 * time.Minute * 3 / 4,
		},
	}
	if diff := cmp.Diff(want, got, quantityCmp, ignoreObjects, cmpopts.IgnoreFields(Step{}, "Field")); diff != "" {
		t.Errorf("Load(%q) mismatch (-want +got):\n%s", path, diff)
	}

	// The manifests themselves.
	type obj struct {
		Line                   int
		APIVersion, Kind, Name string
	}
	var gotObjs []obj
	for _, s := range got.Timeline {
		for _, m := range s.Apply {
			gotObjs = append(gotObjs, obj{m.Line, m.Object.GetAPIVersion(), m.Object.GetKind(), m.Object.GetName()})
		}
	}
	wantObjs := []obj{
		{37, "v1", "Namespace", "app"},
		{42, "placement.kubernetes-fleet.io/v1beta1", "ClusterResourcePlacement", "crp"},
		{57, "cluster.kubernetes-fleet.io/v1beta1", "MemberCluster", "late"},
	}
	if diff := cmp.Diff(wantObjs, gotObjs); diff != "" {
		t.Errorf("Load(%q) manifests mismatch (-want +got):\n%s", path, diff)
	}
	// One object in full: numbers decode as int64, as in any unstructured object.
	wantMC := map[string]any{
		"apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
		"kind":       "MemberCluster",
		"metadata":   map[string]any{"name": "late"},
		"spec": map[string]any{
			"heartbeatPeriodSeconds": int64(15),
			"taints":                 []any{map[string]any{"key": "new", "effect": "NoSchedule"}},
		},
	}
	if diff := cmp.Diff(wantMC, got.Timeline[1].Apply[0].Object.Object); diff != "" {
		t.Errorf("Load(%q) MemberCluster object mismatch (-want +got):\n%s", path, diff)
	}
}

func TestParseDefaults(t *testing.T) {
	const src = `name: defaults
duration: 1h
members:
  - name: c1
timeline:
  - at: 0s
    fail: {member: c1}
  - at: 1m
    taint: {member: c1, key: k}
expect:
  - member: {name: c1, condition: {type: Joined}}
faults:
  meanTimeBetweenFailures: 10m
  meanDuration: 1m
`
	got, err := Parse("defaults.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse(%q) = %v, want no error", src, err)
	}
	want := &Scenario{
		Path:     "defaults.yaml",
		Name:     "defaults",
		Seed:     1,
		Duration: time.Hour,
		Members:  []MemberGroup{{Line: 4, Names: []string{"c1"}, Kind: member.KindCluster, HeartbeatPeriod: member.DefaultHeartbeatPeriod}},
		Timeline: []Step{
			{Line: 6, Field: "timeline[0]", Action: ActionFail, Fail: &Fail{Member: "c1", Mode: Crash}},
			{Line: 8, Field: "timeline[1]", At: time.Minute, Action: ActionTaint, Taint: &TaintStep{Member: "c1", Taint: member.Taint{Key: "k", Effect: member.NoSchedule}}},
		},
		Expect: []Expectation{{Line: 11, At: time.Hour, AtEnd: true, Member: &MemberExpectation{Name: "c1", Condition: &ConditionExpectation{Type: "Joined"}}}},
		Faults: &RandomFaults{Line: 12, MeanTimeBetweenFailures: 10 * time.Minute, MeanDuration: time.Minute, Modes: []FailMode{Crash, Partition}, Until: 45 * time.Minute},
	}
	if diff := cmp.Diff(want, got, quantityCmp); diff != "" {
		t.Errorf("Parse(%q) mismatch (-want +got):\n%s", src, diff)
	}

	// The smallest scenario: only name and duration.
	const minimal = "name: m\nduration: 1s\n"
	got, err = Parse("", []byte(minimal))
	want = &Scenario{Name: "m", Seed: 1, Duration: time.Second}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("Parse(%q) = %+v, %v, want %+v, nil", minimal, got, err, want)
	}
}

func TestExpandRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"plain", []string{"plain"}},
		{"c{1..3}", []string{"c1", "c2", "c3"}},
		{"c{8..11}", []string{"c8", "c9", "c10", "c11"}},
		{"c{01..03}", []string{"c01", "c02", "c03"}},
		{"c{09..11}", []string{"c09", "c10", "c11"}},
		{"c{1..010}", []string{"c001", "c002", "c003", "c004", "c005", "c006", "c007", "c008", "c009", "c010"}},
		{"c{0..2}", []string{"c0", "c1", "c2"}},
		{"{1..2}-east", []string{"1-east", "2-east"}},
		{"a{5..5}b", []string{"a5b"}},
		{"x{007..8}", []string{"x007", "x008"}},
	} {
		got, reason := expandRange(tc.in)
		if reason != "" {
			t.Errorf("expandRange(%q) failed: %s", tc.in, reason)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("expandRange(%q) mismatch (-want +got):\n%s", tc.in, diff)
		}
	}
	for _, bad := range []string{"c{1..2}{3..4}", "c{3..1}", "c{a..b}", "c{1..}", "c{1..2", "c}", "c{0..100000}", "c{1..99999999999999999999}"} {
		if got, reason := expandRange(bad); reason == "" {
			t.Errorf("expandRange(%q) = %d names, want an error", bad, len(got))
		}
	}
	if got, reason := expandRange("c{1..100000}"); reason != "" || len(got) != MaxRangeSize {
		t.Errorf("expandRange(c{1..100000}) = %d names, %q, want %d names", len(got), reason, MaxRangeSize)
	}

	const src = "name: r\nduration: 1h\nmembers:\n  - name: m-{098..101}\n    kind: Machine\n"
	s, err := Parse("r.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse(%q) = %v, want no error", src, err)
	}
	if want := []string{"m-098", "m-099", "m-100", "m-101"}; !slices.Equal(s.Members[0].Names, want) {
		t.Errorf("Parse(%q) names = %v, want %v", src, s.Members[0].Names, want)
	}
}

func TestParseErrors(t *testing.T) {
	const head = "name: t\nduration: 1h\n" // lines 1-2
	const crpHead = "      apiVersion: placement.kubernetes-fleet.io/v1beta1\n      kind: ClusterResourcePlacement\n      metadata: {name: crp}\n"
	const mcHead = "      apiVersion: cluster.kubernetes-fleet.io/v1beta1\n      kind: MemberCluster\n      metadata: {name: late}\n"
	const members = "members:\n  - name: c{1..3}\n"       // lines 3-4
	const apply = "timeline:\n  - at: 0s\n    apply: |\n" // lines 5-7 after members
	for _, tc := range []struct {
		name, src string
		line      int
		field     string
		reason    string // a substring of the reason
	}{
		{"empty file", "", 0, "", "the scenario is empty"},
		{"only a comment", "# nothing\n", 0, "", "the scenario is empty"},
		{"yaml syntax", "name: t\nduration: [1h\n", 2, "", "invalid YAML"},
		{"not a mapping", "- name: t\n", 1, "", "the scenario must be a mapping"},
		{"two documents", head + "---\nname: u\n", 3, "", "one YAML document"},
		{"unknown top-level key", head + "membrs: []\n", 3, "", `unknown field "membrs"`},
		{"duplicate top-level key", head + "name: u\n", 3, "", `duplicate field "name" (first at line 1)`},
		{"merge key", head + "<<: {seed: 2}\n", 3, "", "merge keys"},
		{"missing name", "duration: 1h\n", 1, "name", "required"},
		{"missing duration", "name: t\n", 1, "duration", "required"},
		{"bad duration", "name: t\nduration: 2 hours\n", 2, "duration", `"2 hours" is not a duration`},
		{"duration without unit", "name: t\nduration: 90\n", 2, "duration", `"90" is not a duration`},
		{"zero duration", "name: t\nduration: 0s\n", 2, "duration", "must be greater than 0"},
		{"negative seed", head + "seed: -1\n", 3, "seed", "must be an integer"},
		{"string seed", head + "seed: abc\n", 3, "seed", "must be an integer"},
		{"members not a list", head + "members: {name: a}\n", 3, "members", "must be a list"},
		{"misspelt member key", head + "members:\n  - name: a\n    lables: {x: y}\n", 5, "members[0]", `unknown field "lables"`},
		{"member without name", head + "members:\n  - kind: Cluster\n", 4, "members[0].name", "required"},
		{"two ranges", head + "members:\n  - name: c{1..2}-{1..2}\n", 4, "members[0].name", "at most one {first..last} range"},
		{"reversed range", head + "members:\n  - name: c{5..1}\n", 4, "members[0].name", "greater than its end"},
		{"invalid member name", head + "members:\n  - name: Big_Cluster\n", 4, "members[0].name", `"Big_Cluster" is not a valid member name`},
		{"duplicate member", head + "members:\n  - name: c{1..3}\n  - name: c2\n", 5, "members[1].name", `member "c2" is already defined by members[0] (line 4)`},
		{"bad kind", head + "members:\n  - name: a\n    kind: VM\n", 5, "members[0].kind", `"VM" is not one of Cluster, Machine`},
		{"bad label value", head + "members:\n  - name: a\n    labels:\n      env: not ok\n", 6, "members[0].labels[env]", "invalid label value"},
		{"bad label key", head + "members:\n  - name: a\n    labels: {-x: y}\n", 5, "members[0].labels[-x]", "invalid label key"},
		{"taint effect", head + "members:\n  - name: a\n    taints:\n      - key: k\n        effect: NoExecute\n", 7, "members[0].taints[0].effect", `"NoExecute" is not one of NoSchedule`},
		{"taint without key", head + "members:\n  - name: a\n    taints:\n      - value: v\n", 6, "members[0].taints[0].key", "required"},
		{"duplicate taint", head + "members:\n  - name: a\n    taints: [{key: k}, {key: k, value: v}]\n", 5, "members[0].taints[1]", "duplicate taint"},
		{"bad property", head + "members:\n  - name: a\n    properties:\n      node-count: lots\n", 6, "members[0].properties[node-count]", `"lots" is not a quantity`},
		{"resource property", head + "members:\n  - name: a\n    properties:\n      resources.kubernetes-fleet.io/total-cpu: 4\n", 6, "members[0].properties[resources.kubernetes-fleet.io/total-cpu]", "resource properties come from resources"},
		{"negative resource", head + "members:\n  - name: a\n    resources:\n      capacity: {cpu: -1}\n", 6, "members[0].resources.capacity[cpu]", "negative"},
		{"unknown resource figure", head + "members:\n  - name: a\n    resources:\n      total: {cpu: 1}\n", 6, "members[0].resources", `unknown field "total"`},
		{"heartbeat too long", head + "members:\n  - name: a\n    heartbeatPeriod: 601s\n", 5, "members[0].heartbeatPeriod", "out of range"},
		{"heartbeat not whole seconds", head + "members:\n  - name: a\n    heartbeatPeriod: 1500ms\n", 5, "members[0].heartbeatPeriod", "whole number of seconds"},
		{"joinAt after the end", head + "members:\n  - name: a\n    joinAt: 2h\n", 5, "members[0].joinAt", "after the end of the scenario (duration 1h0m0s)"},
		{"negative joinAt", head + "members:\n  - name: a\n    joinAt: -1s\n", 5, "members[0].joinAt", "negative"},
		{"metadata on a cluster", head + "members:\n  - name: a\n    metadata: {region: west}\n", 5, "members[0].metadata", "only allowed with kind Machine"},
		{"metadata not strings", head + "members:\n  - name: a\n    kind: Machine\n    metadata:\n      region: {a: b}\n", 7, "members[0].metadata[region]", "must be a string"},
		{"step without at", head + members + "timeline:\n  - fail: {member: c1}\n", 6, "timeline[0].at", "required"},
		{"step without action", head + members + "timeline:\n  - at: 1m\n", 6, "timeline[0]", "a step needs one action"},
		{"step with two actions", head + members + "timeline:\n  - at: 1m\n    fail: {member: c1}\n    heal: {member: c1}\n", 8, "timeline[0]", "exactly one action, found fail and heal"},
		{"unknown action", head + members + "timeline:\n  - at: 1m\n    explode: {member: c1}\n", 7, "timeline[0]", `unknown field "explode"`},
		{"bad fail mode", head + members + "timeline:\n  - at: 1m\n    heal: {member: c1}\n  - at: 2m\n    heal: {member: c2}\n  - at: 3m\n    fail: {member: c3, mode: explode}\n", 11, "timeline[2].fail.mode", `"explode" is not one of crash, partition`},
		{"at after the end", head + members + "timeline:\n  - at: 61m\n    heal: {member: c1}\n", 6, "timeline[0].at", "after the end of the scenario"},
		{"at not a duration", head + members + "timeline:\n  - at: soon\n    heal: {member: c1}\n", 6, "timeline[0].at", `"soon" is not a duration`},
		{"unknown member", head + members + "timeline:\n  - at: 1m\n    heal: {member: c4}\n", 7, "timeline[0].heal.member", `unknown member "c4"`},
		{"fail without member", head + members + "timeline:\n  - at: 1m\n    fail:\n      mode: crash\n", 7, "timeline[0].fail.member", "required"},
		{"heal null", head + members + "timeline:\n  - at: 1m\n    heal:\n", 7, "timeline[0].heal.member", "required"},
		{"member created later", head + "timeline:\n  - at: 1m\n    heal: {member: late}\n  - at: 2m\n    apply: |\n" + mcHead, 5, "timeline[0].heal.member", `member "late" does not exist yet at 1m0s: the MemberCluster that creates it is applied later (line 8)`},
		{"label with nothing", head + members + "timeline:\n  - at: 1m\n    label: {member: c1}\n", 7, "timeline[0].label", "needs labels to set or remove"},
		{"label set and removed", head + members + "timeline:\n  - at: 1m\n    label: {member: c1, set: {a: b}, remove: [a]}\n", 7, "timeline[0].label.remove[0]", "both set and removed"},
		{"restartHub with a key", head + "timeline:\n  - at: 1m\n    restartHub: {now: true}\n", 5, "timeline[0].restartHub", `unknown field "now"`},
		{"propagation: both API lists", head + "propagation:\n  skippedAPIs: v1/Secret\n  allowedAPIs: apps\n", 5, "propagation.allowedAPIs", "skipped and allowed propagating APIs are mutually exclusive"},
		{"propagation: a bad entry", head + "propagation:\n  skippedAPIs: a/b/c/d\n", 4, "propagation.skippedAPIs", `skipped propagating APIs: "a/b/c/d": must be <group>`},
		{"propagation: a bad namespace", head + "propagation: {skippedNamespaces: Bad_NS}\n", 3, "propagation.skippedNamespaces", `skipped propagating namespace "Bad_NS"`},
		{"propagation: an unknown key", head + "propagation: {skippedKinds: x}\n", 3, "propagation", `unknown field "skippedKinds"`},
		{"memberEdit: empty fieldManager", head + members + "timeline:\n  - at: 1m\n    memberEdit:\n      member: c1\n      fieldManager: \"\"\n      object: \"apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: a, namespace: b}\"\n", 9, "timeline[0].memberEdit.fieldManager", "must be 1 to 128 characters"},
		{"workload without behavior", head + members + "timeline:\n  - at: 1m\n    workload: {member: '*', kind: Deployment, name: web}\n", 7, "timeline[0].workload.behavior", "required"},
		{"workload bad behavior", head + members + "timeline:\n  - at: 1m\n    workload: {member: c1, kind: Deployment, name: web, behavior: flaky}\n", 7, "timeline[0].workload.behavior", `"flaky" is not one of available, unavailable, applyFails`},
		{"delete without kind", head + "timeline:\n  - at: 1m\n    delete: {name: crp}\n", 5, "timeline[0].delete.kind", "required"},
		{"approve without name", head + "timeline:\n  - at: 1m\n    approve: {}\n", 5, "timeline[0].approve.name", "required"},
		{"apply not a string", head + "timeline:\n  - at: 0s\n    apply:\n      apiVersion: v1\n", 6, "timeline[0].apply", "must be a string holding YAML manifests"},
		{"apply empty", head + "timeline:\n  - at: 0s\n    apply: |\n      # nothing\n      ---\n", 5, "timeline[0].apply", "holds no manifest"},
		{"apply without name", head + apply + "      apiVersion: v1\n      kind: Namespace\n      metadata: {}\n", 8, "timeline[0].apply[0]", "metadata.name: Required value"},
		{"apply without kind", head + apply + "      apiVersion: v1\n      metadata: {name: x}\n", 6, "timeline[0].apply[0]", "kind: Required value"},
		{"apply scalar document", head + apply + "      just text\n", 6, "timeline[0].apply[0]", "a manifest must be a mapping"},
		{"apply YAML syntax", head + apply + "      apiVersion: v1\n      kind: [Namespace\n", 7, "timeline[0].apply[0]", "invalid YAML"},
		{"apply duplicate key", head + apply + "      apiVersion: v1\n      kind: Namespace\n      metadata: {name: a}\n      kind: Secret\n", 9, "timeline[0].apply[0]", `duplicate key "kind" (first at line 7)`},
		{"apply duplicate object", head + apply + "      apiVersion: v1\n      kind: Namespace\n      metadata: {name: a}\n      ---\n      apiVersion: v1\n      kind: Namespace\n      metadata: {name: a}\n", 10, "timeline[0].apply[1] (Namespace a)", "same kind, namespace and name as timeline[0].apply[0] (line 6)"},
		{"crp needs numberOfClusters", head + apply + "      apiVersion: v1\n      kind: Namespace\n      metadata: {name: app}\n      ---\n" + crpHead +
			"      spec:\n        resourceSelectors: [{group: '', version: v1, kind: Namespace, name: app}]\n        policy:\n          placementType: PickN\n",
			15, "timeline[0].apply[1] (ClusterResourcePlacement crp)", "spec.policy.numberOfClusters: Required value: required with placementType PickN"},
		{"crp unknown field", head + apply + crpHead + "      spec:\n        resourceSelectors: [{group: '', version: v1, kind: Namespace, name: app}]\n        polcy: {}\n",
			11, "timeline[0].apply[0] (ClusterResourcePlacement crp)", `spec.polcy: unknown field`},
		{"crp wrong type", head + apply + crpHead + "      spec:\n        resourceSelectors: [{group: '', version: v1, kind: Namespace, name: app}]\n        policy: {placementType: PickN, numberOfClusters: three}\n",
			11, "timeline[0].apply[0] (ClusterResourcePlacement crp)", "spec.policy.numberOfClusters: Invalid value: cannot decode string as int32"},
		{"crp without selectors", head + apply + crpHead + "      spec: {}\n",
			9, "timeline[0].apply[0] (ClusterResourcePlacement crp)", "spec.resourceSelectors: Required value"},
		{"crp unknown apply strategy", head + apply + crpHead + "      spec:\n        resourceSelectors: [{group: '', version: v1, kind: Namespace, name: app}]\n        strategy:\n          applyStrategy: {type: ForceApply}\n",
			12, "timeline[0].apply[0] (ClusterResourcePlacement crp)", `spec.strategy.applyStrategy.type: Unsupported value: "ForceApply"`},
		{"eviction at v1", head + apply + "      apiVersion: placement.kubernetes-fleet.io/v1\n      kind: ClusterResourcePlacementEviction\n      metadata: {name: e}\n",
			6, "timeline[0].apply[0] (ClusterResourcePlacementEviction e)", "ClusterResourcePlacementEviction is served at placement.kubernetes-fleet.io/v1beta1, placement.kubernetes-fleet.io/v1alpha1, not at v1"},
		{"crp at v2", head + apply + "      apiVersion: placement.kubernetes-fleet.io/v2\n      kind: ClusterResourcePlacement\n      metadata: {name: crp}\n",
			6, "timeline[0].apply[0] (ClusterResourcePlacement crp)", "not at v2"},
		{"pick fixed with tolerations", head + apply + crpHead + "      spec:\n        resourceSelectors: [{group: '', version: v1, kind: Namespace, name: app}]\n        policy:\n          placementType: PickFixed\n          clusterNames: [a]\n          tolerations: [{key: k, operator: Exists}]\n",
			14, "timeline[0].apply[0] (ClusterResourcePlacement crp)", "spec.policy.tolerations: Forbidden: not allowed with placementType PickFixed"},
		{"member name of 64 characters", head + apply + "      apiVersion: cluster.kubernetes-fleet.io/v1\n      kind: MemberCluster\n      metadata: {name: " + strings.Repeat("m", 64) + "}\n",
			8, "timeline[0].apply[0] (MemberCluster " + strings.Repeat("m", 64) + ")", "metadata.name: Too long"},
		{"run name of 64 characters", head + apply + "      apiVersion: placement.kubernetes-fleet.io/v1alpha1\n      kind: ClusterStagedUpdateRun\n      metadata: {name: " + strings.Repeat("r", 64) + "}\n      spec: {placementName: p, resourceSnapshotIndex: '0', stagedRolloutStrategyName: s}\n",
			8, "timeline[0].apply[0] (ClusterStagedUpdateRun " + strings.Repeat("r", 64) + ")", "metadata.name: Too long"},
		{"timed wait of 0", head + apply + "      apiVersion: placement.kubernetes-fleet.io/v1\n      kind: ClusterStagedUpdateStrategy\n      metadata: {name: s}\n      spec:\n        stages:\n        - name: a\n          afterStageTasks: [{type: TimedWait, waitTime: '0'}]\n",
			12, "timeline[0].apply[0] (ClusterStagedUpdateStrategy s)", `spec.stages[0].afterStageTasks[0].waitTime: Invalid value: "0"`},
		{"timed wait of 01h", head + apply + "      apiVersion: placement.kubernetes-fleet.io/v1beta1\n      kind: ClusterStagedUpdateStrategy\n      metadata: {name: s}\n      spec:\n        stages:\n        - name: a\n          afterStageTasks: [{type: TimedWait, waitTime: 01h}]\n",
			12, "timeline[0].apply[0] (ClusterStagedUpdateStrategy s)", `waitTime: Invalid value: "01h"`},
		{"approval with waitTime", head + apply + "      apiVersion: placement.kubernetes-fleet.io/v1beta1\n      kind: ClusterStagedUpdateStrategy\n      metadata: {name: s}\n      spec:\n        stages:\n        - name: a\n          afterStageTasks: [{type: Approval, waitTime: 1h}]\n",
			12, "timeline[0].apply[0] (ClusterStagedUpdateStrategy s)", `spec.stages[0].afterStageTasks[0].waitTime: Forbidden`},
		{"member cluster heartbeat", head + apply + mcHead + "      spec:\n        heartbeatPeriodSeconds: 0\n",
			10, "timeline[0].apply[0] (MemberCluster late)", "spec.heartbeatPeriodSeconds: Invalid value: 0: must be between 1 and 600"},
		{"member cluster taint", head + apply + mcHead + "      spec:\n        taints:\n          - key: k\n            effect: NoExecute\n",
			12, "timeline[0].apply[0] (MemberCluster late)", `spec.taints[0].effect: Unsupported value: "NoExecute"`},
		{"folded apply points at the scalar", head + "timeline:\n  - at: 0s\n    apply: \"apiVersion: v1\\nkind: Namespace\\nmetadata: {}\\n\"\n", 5, "timeline[0].apply[0]", "metadata.name: Required value"},
		{"expect not a list", head + "expect: {member: a}\n", 3, "expect", "must be a list"},
		{"expect both", head + members + "expect:\n  - placement: {name: p, clusterCount: 1}\n    member: {name: c1, condition: {type: Joined}}\n", 7, "expect[0]", "exactly one of placement, member, eviction, updateRun, clusterProfile, unit, rollout, peakUnavailable, unhealthy"},
		{"expect neither", head + "expect:\n  - at: 1m\n", 4, "expect[0]", "needs one of placement, member, eviction, updateRun, clusterProfile, unit, rollout, peakUnavailable, unhealthy"},
		{"clusterProfile of an unknown member", head + members + "expect:\n  - clusterProfile: {name: nope, gone: true}\n", 6, "expect[0].clusterProfile.name", `unknown member "nope"`},
		{"clusterProfile condition and gone", head + members + "expect:\n  - clusterProfile: {name: c1, gone: true, condition: {type: ControlPlaneHealthy}}\n", 6, "expect[0].clusterProfile", "either condition or gone"},
		{"clusterProfile gone false", head + members + "expect:\n  - clusterProfile: {name: c1, gone: false}\n", 6, "expect[0].clusterProfile.gone", `must be true, not "false"`},
		{"clusterProfile without condition", head + members + "expect:\n  - clusterProfile: {name: c1}\n", 6, "expect[0].clusterProfile.condition", "required"},
		{"clusterProfile condition with a cluster", head + members + "expect:\n  - clusterProfile: {name: c1, condition: {type: ControlPlaneHealthy, cluster: c2}}\n", 6, "expect[0].clusterProfile.condition", "describes one member already"},
		{"network loss out of range", head + "network: {loss: 1.5}\n", 3, "network.loss", "out of range"},
		{"network unknown distribution", head + "network: {distribution: gaussian}\n", 3, "network.distribution", "gaussian"},
		{"network uniform range reversed", head + "network: {distribution: uniform, min: 2s, max: 1s}\n", 3, "network", "min <= max"},
		{"hub zero workers", head + "hub: {workers: 0}\n", 3, "hub.workers", "must be from 1 to 10000, not 0"},
		{"hub qps not a number", head + "hub: {qps: fast}\n", 3, "hub.qps", "must be a number from 0.01 to 1000000"},
		{"hub calls beyond burst", head + "hub: {burst: 5, callsPerDecision: 6}\n", 3, "hub", "exceeds burst"},
		{"hub unknown key", head + "hub: {threads: 4}\n", 3, "hub", `unknown field "threads"`},
		{"skew needs an offset", head + members + "timeline:\n  - at: 1m\n    skew: {member: c1}\n", 7, "timeline[0].skew.offset", "required"},
		{"memberHealth needs healthy", head + members + "timeline:\n  - at: 1m\n    memberHealth: {member: c1}\n", 7, "timeline[0].memberHealth.healthy", "required"},
		{"memberHealth healthy is a boolean", head + members + "timeline:\n  - at: 1m\n    memberHealth: {member: c1, healthy: sick}\n", 7, "timeline[0].memberHealth.healthy", "must be true or false"},
		{"memberHealth of an unknown member", head + members + "timeline:\n  - at: 1m\n    memberHealth: {member: nope, healthy: false}\n", 7, "timeline[0].memberHealth.member", "nope"},
		{"skew of an unknown member", head + members + "timeline:\n  - at: 1m\n    skew: {member: nope, offset: 1m}\n", 7, "timeline[0].skew.member", "nope"},
		{"member edit without an object", head + "timeline:\n  - at: 1m\n    memberEdit: {member: m1}\n", 5, "timeline[0].memberEdit.object", "required"},
		{"member edit of an object without a name", head + "timeline:\n  - at: 1m\n    memberEdit: {member: m1, object: \"{apiVersion: v1, kind: ConfigMap}\"}\n", 5, "timeline[0].memberEdit.object", "needs apiVersion, kind and metadata.name"},
		{"details without checks", head + "members:\n  - name: m1\nexpect:\n  - placement:\n      name: p\n      details: {cluster: m1}\n", 8, "expect[0].placement.details", "needs at least one of failedReason, driftedPaths and diffedPaths"},
		{"placement expectation without checks", head + "expect:\n  - placement:\n      name: p\n", 4, "expect[0].placement", "needs at least one of clusters, clusterCount, condition, details, statusObject and backReported"},
		{"placement expectation unknown cluster", head + members + "expect:\n  - placement: {name: p, clusters: [c1, c9]}\n", 6, "expect[0].placement.clusters[1]", `unknown member "c9"`},
		{"clusterCount disagrees", head + members + "expect:\n  - placement: {name: p, clusters: [c1, c2], clusterCount: 3}\n", 6, "expect[0].placement.clusterCount", "is 3 but clusters lists 2"},
		{"negative clusterCount", head + "expect:\n  - placement: {name: p, clusterCount: -1}\n", 4, "expect[0].placement.clusterCount", "must not be negative"},
		{"bad condition status", head + "expect:\n  - placement:\n      name: p\n      condition: {type: Ready, status: Maybe}\n", 6, "expect[0].placement.condition.status", `"Maybe" is not one of True, False, Unknown`},
		{"condition without type", head + "expect:\n  - placement:\n      name: p\n      condition:\n        status: \"True\"\n", 7, "expect[0].placement.condition.type", "required"},
		{"member expectation without condition", head + members + "expect:\n  - member: {name: c1}\n", 6, "expect[0].member.condition", "required"},
		{"expect at after end", head + "expect:\n  - at: 2h\n    placement: {name: p, clusterCount: 1}\n", 4, "expect[0].at", "after the end"},
		{"unknown invariant", head + "always: [oneBindingPerCluster, everythingFine]\n", 3, "always[1]", `unknown invariant "everythingFine"; valid names: bindingsOnKnownMembers, globalUnits, memberHeartbeatTimeout, memberReportedUnhealthy, noBindingsOnGoneMembers, noUnitDisplacedByGlobal, noUntoleratedNewBindings, oneBindingPerCluster, pickNWithinLimit, preferredAffinity, rolloutBudgets`},
		{"duplicate invariant", head + "always:\n  - pickNWithinLimit\n  - pickNWithinLimit\n", 5, "always[1]", "listed twice"},
		{"faults without mtbf", head + "faults:\n  meanDuration: 1m\n", 3, "faults.meanTimeBetweenFailures", "required"},
		{"faults bad mode", head + "faults:\n  meanTimeBetweenFailures: 1h\n  meanDuration: 1m\n  modes: [crash, melt]\n", 6, "faults.modes[1]", `"melt" is not one of crash, partition`},
		{"faults until after the end", head + "faults:\n  meanTimeBetweenFailures: 1h\n  meanDuration: 1m\n  until: 3h\n", 6, "faults.until", "after the end"},
		{"faults unknown key", head + "faults:\n  mtbf: 1h\n", 4, "faults", `unknown field "mtbf"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(tc.src))
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("Parse(%q) = %+v, %v, want an *Error at line %d, field %q", tc.src, s, err, tc.line, tc.field)
			}
			if s != nil {
				t.Errorf("Parse(%q) returned a scenario with error %v", tc.src, err)
			}
			if perr.Path != "t.yaml" || perr.Line != tc.line || perr.Field != tc.field || !strings.Contains(perr.Reason, tc.reason) {
				t.Errorf("Parse(%q) = %v, want line %d, field %q, reason containing %q", tc.src, err, tc.line, tc.field, tc.reason)
			}
		})
	}
}

// TestParseHub: the hub key's defaults are fleet hub's flags, and every field is read.
func TestParseHub(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want *Hub
	}{
		{"name: t\nduration: 1h\n", nil},
		{"name: t\nduration: 1h\nhub: {}\n", &Hub{Line: 3, Workers: 8, QPS: 250, Burst: 1000, CallsPerDecision: 10, DecisionTime: 5 * time.Millisecond}},
		{"name: t\nduration: 1h\nhub: {workers: 2, qps: 20.5, burst: 40, callsPerDecision: 0, decisionTime: 1s}\n",
			&Hub{Line: 3, Workers: 2, QPS: 20.5, Burst: 40, CallsPerDecision: 0, DecisionTime: time.Second}},
	} {
		s, err := Parse("t.yaml", []byte(tc.src))
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.src, err)
		}
		if diff := cmp.Diff(tc.want, s.Hub); diff != "" {
			t.Errorf("Parse(%q).Hub (-want +got):\n%s", tc.src, diff)
		}
	}
}

func TestErrorString(t *testing.T) {
	for _, tc := range []struct {
		err  Error
		want string
	}{
		{Error{Path: "quickstart.yaml", Line: 14, Field: "timeline[2].fail.mode", Reason: `"explode" is not one of crash, partition`},
			`quickstart.yaml:14: timeline[2].fail.mode: "explode" is not one of crash, partition`},
		{Error{Line: 7, Field: "members[0]", Reason: `unknown field "lables"`}, `line 7: members[0]: unknown field "lables"`},
		{Error{Path: "a.yaml", Reason: "the scenario is empty"}, "a.yaml: the scenario is empty"},
		{Error{Path: "a.yaml", Line: 3, Reason: "invalid YAML: x"}, "a.yaml:3: invalid YAML: x"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("(%#v).Error() = %q, want %q", tc.err, got, tc.want)
		}
	}

	// The message of a real failure, end to end.
	const src = "name: t\nduration: 1h\nmembers:\n  - name: a\ntimeline:\n  - at: 1m\n    fail: {member: a, mode: explode}\n"
	_, err := Parse("quickstart.yaml", []byte(src))
	if want := `quickstart.yaml:7: timeline[0].fail.mode: "explode" is not one of crash, partition`; err == nil || err.Error() != want {
		t.Errorf("Parse(%q) = %v, want %v", src, err, want)
	}
}

// TestTimelineOrder checks the stable sort and that a MemberCluster applied earlier in
// timeline order (though later in the file) makes its name usable.
func TestTimelineOrder(t *testing.T) {
	const src = `name: order
duration: 1h
timeline:
  - at: 2m
    heal: {member: late}
  - at: 1m
    label: {member: late, set: {a: b}}
  - at: 1m
    restartHub:
  - at: 0s
    apply: |
      apiVersion: cluster.kubernetes-fleet.io/v1beta1
      kind: MemberCluster
      metadata: {name: late}
`
	s, err := Parse("order.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse(%q) = %v, want no error", src, err)
	}
	var got []int
	for _, st := range s.Timeline {
		got = append(got, st.Line)
	}
	if want := []int{10, 6, 8, 4}; !slices.Equal(got, want) {
		t.Errorf("Parse(%q) step lines = %v, want %v", src, got, want)
	}
	if l := s.Timeline[0].Apply[0].Line; l != 12 {
		t.Errorf("Parse(%q) manifest line = %d, want 12", src, l)
	}
}

// TestManifestLines checks document lines in a block scalar with blank lines, comments,
// separators with comments, and keep/strip chomping.
func TestManifestLines(t *testing.T) {
	const src = `name: lines
duration: 1h
timeline:
  - at: 0s
    apply: |-

      # a leading comment
      apiVersion: v1
      kind: Namespace
      metadata: {name: a}
      --- # second
      ---

      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: b
        namespace: a
      data: {k: v}
`
	s, err := Parse("lines.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse(%q) = %v, want no error", src, err)
	}
	var got []int
	for _, m := range s.Timeline[0].Apply {
		got = append(got, m.Line)
	}
	if want := []int{8, 14}; !slices.Equal(got, want) {
		t.Errorf("Parse(%q) manifest lines = %v, want %v", src, got, want)
	}
	if ns := s.Timeline[0].Apply[1].Object.GetNamespace(); ns != "a" {
		t.Errorf("Parse(%q) second manifest namespace = %q, want %q", src, ns, "a")
	}
}

func TestLoad(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want fs.ErrNotExist", err)
	}
	// An input that never ends is refused at the bound, not read until memory runs out.
	if _, err := Load("/dev/zero"); !errors.As(err, new(*input.TooLargeError)) {
		t.Errorf("Load(/dev/zero) = %v, want an *input.TooLargeError", err)
	}
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("Load(%q) = %v, want no error", f, err)
		}
	}
}

// TestReadmeExample keeps the annotated example of README.md valid, and identical to
// testdata/example.yaml.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- example -->\n```yaml\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no ```yaml block after <!-- example -->")
	}
	if _, err := Parse("README.md example", m[1]); err != nil {
		t.Errorf("Parse(README example) = %v, want no error", err)
	}
	example, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(example), string(m[1])); diff != "" {
		t.Errorf("README example differs from testdata/example.yaml (-file +readme):\n%s", diff)
	}
}

func TestInvariantNames(t *testing.T) {
	got := InvariantNames()
	if len(got) != len(Invariants) || !slices.IsSorted(got) {
		t.Errorf("InvariantNames() = %v, want the %d keys of Invariants, sorted", got, len(Invariants))
	}
	// README.md documents every invariant.
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, what := range Invariants {
		if row := "| `" + name + "` | " + what + " |"; !strings.Contains(string(readme), row) {
			t.Errorf("README.md lacks the row %q", row)
		}
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{
		"",
		"name: t\nduration: 1h\nmembers:\n  - name: c{01..10}\n",
		"name: t\nduration: 1h\ntimeline:\n  - at: 0s\n    apply: |\n      apiVersion: v1\n      kind: A\n      metadata: {name: a}\n      ---\n      x: &a [*a]\n",
		"a: &a [*a, *a]\nb: *a\n",
		"name: &n t\nduration: 1h\nmembers: [{name: *n}]\nalways: [*n]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("Parse(%q) = %v (%T), want an *Error", data, err, err)
			}
			if s != nil {
				t.Fatalf("Parse(%q) returned a scenario and error %v", data, err)
			}
			return
		}
		if s.Name == "" || s.Duration <= 0 {
			t.Fatalf("Parse(%q) = %+v, a scenario without name or duration", data, s)
		}
		for i, st := range s.Timeline {
			if st.At < 0 || st.At > s.Duration || (i > 0 && st.At < s.Timeline[i-1].At) {
				t.Fatalf("Parse(%q): step %d at %s out of order or range", data, i, st.At)
			}
		}
	})
}

// TestParseServedVersions: the scenario format takes every version KubeFleet serves and
// stores it as v1beta1, as the hub does.
func TestParseServedVersions(t *testing.T) {
	src := "name: t\nduration: 1h\ntimeline:\n  - at: 0s\n    apply: |\n" +
		"      apiVersion: placement.kubernetes-fleet.io/v1\n      kind: ClusterResourcePlacement\n      metadata: {name: crp}\n" +
		"      spec:\n        resourceSelectors: [{group: '', version: v1, kind: Namespace, name: app}]\n      ---\n" +
		"      apiVersion: placement.kubernetes-fleet.io/v1alpha1\n      kind: ClusterResourceOverride\n      metadata: {name: cro}\n      ---\n" +
		"      apiVersion: cluster.kubernetes-fleet.io/v1\n      kind: MemberCluster\n      metadata: {name: late}\n"
	s, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range s.Timeline[0].Apply {
		got = append(got, m.Object.GetAPIVersion()+" "+m.Object.GetKind())
	}
	want := []string{
		"placement.kubernetes-fleet.io/v1beta1 ClusterResourcePlacement",
		"placement.kubernetes-fleet.io/v1beta1 ClusterResourceOverride",
		"cluster.kubernetes-fleet.io/v1beta1 MemberCluster",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored versions (-want +got):\n%s", diff)
	}
}

// TestHubBounds: a scenario's hub: section is bounded as a plan's hub model is, so a hub of
// 10^18 workers is refused at its line instead of allocating a slot per worker.
func TestHubBounds(t *testing.T) {
	head := "name: h\nduration: 10m\nmembers:\n  - name: m1\nhub:\n"
	for _, tc := range []struct {
		name, hub, field, reason string
	}{
		{"workers", "  workers: 1000000000000000000\n", "hub.workers", "must be from 1 to 10000, not 1000000000000000000"},
		{"burst", "  burst: 9223372036854775807\n", "hub.burst", "must be from 1 to 1000000, not 9223372036854775807"},
		{"qps", "  qps: 1e300\n", "hub.qps", `must be a number from 0.01 to 1000000, not "1e300"`},
		{"decisionTime", "  decisionTime: 1000h\n", "hub.decisionTime", "must be from 0s to 1m0s, not 1000h0m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("h.yaml", []byte(head+tc.hub))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse = %v, want an *Error", err)
			}
			if diff := cmp.Diff([]any{6, tc.field, tc.reason}, []any{e.Line, e.Field, e.Reason}); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := Parse("h.yaml", []byte(head+"  workers: 10000\n  burst: 1000000\n  qps: 1000000\n  decisionTime: 1m\n")); err != nil {
		t.Errorf("the bounds themselves: %v", err)
	}
}
