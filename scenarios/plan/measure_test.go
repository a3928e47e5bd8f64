package plan

import (
	"testing"
)

// A small plan whose runs show every kind of event the collector measures.
const measurePlan = `name: m
repetitions: 2
sample: 5s
sweep:
  members: [3, 6]
scenario: |
  name: s
  duration: 20m
  members:
    - name: m-{1..{{.members}}}
  timeline:
    - at: 1m
      apply: |
        apiVersion: v1
        kind: Namespace
        metadata: {name: app}
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web, namespace: app}
        spec: {template: {spec: {containers: [{name: web, image: web:1}]}}}
        ---
        apiVersion: placement.kubernetes-fleet.io/v1beta1
        kind: ClusterResourcePlacement
        metadata: {name: app}
        spec:
          resourceSelectors: [{group: "", version: v1, kind: Namespace, name: app}]
    - at: 4m
      apply: |
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web, namespace: app}
        spec: {template: {spec: {containers: [{name: web, image: web:2}]}}}
    - at: 8m
      fail: {member: m-1, mode: crash}
    - at: 15m
      restartHub: {}
`

func TestMeasure(t *testing.T) {
	pl, err := Parse("m.yaml", []byte(measurePlan))
	if err != nil {
		t.Fatal(err)
	}
	res, err := pl.Execute(Options{Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 4 {
		t.Fatalf("%d results, want 4", len(res.Results))
	}
	for _, r := range res.Results {
		members := 3 * (r.Point + 1)
		for metric, n := range map[string]int{PlacementScheduled: 1, PlacementAvailable: 1, ClusterScheduled: members, ClusterApplied: members,
			ClusterAvailable: members, RolloutDuration: 1, MemberDetect: 1, HubResync: 1} {
			if got := r.Metrics[metric].N; got != n {
				t.Errorf("run %d: %s has %d samples, want %d", r.Index, metric, got, n)
			}
		}
		// Workloads become available 30 s after they are applied (the simulator's default).
		if v := r.Metrics[ClusterAvailable].Values[0]; v < 30 || v > 35 {
			t.Errorf("run %d: first cluster available after %.3fs, want 30-35s", r.Index, v)
		}
		// A crashed member is noticed once its heartbeats are 5 minutes old at most.
		if v := r.Metrics[MemberDetect].Values[0]; v <= 0 || v > 6*60 {
			t.Errorf("run %d: lost member detected after %.1fs", r.Index, v)
		}
		if len(r.Series) != 20*60/5 {
			t.Errorf("run %d: %d samples, want 240", r.Index, len(r.Series))
		}
		if r.PeakObjects["ClusterResourceBinding"] != members || r.Writes["Work"] == 0 || r.DecisionsPerSecond["scheduler"] <= 0 {
			t.Errorf("run %d: objects %v writes %v decisions %v", r.Index, r.PeakObjects, r.Writes, r.DecisionsPerSecond)
		}
	}
	// Same seed, same run: a second execution, one run at a time, gives the same digest.
	again, err := pl.Execute(Options{Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	if again.Digest != res.Digest {
		t.Errorf("digest %x, then %x", res.Digest, again.Digest)
	}
	// Two shards merge into the whole.
	a, err := pl.Execute(Options{Shard: 0, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	b, err := pl.Execute(Options{Shard: 1, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(pl, []Shard{{"b.json", b}, {"a.json", a}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Digest != res.Digest || len(m.Results) != 4 || m.Results[3].Index != 3 {
		t.Errorf("merged digest %x (%d results), want %x", m.Digest, len(m.Results), res.Digest)
	}
	if _, err := Merge(pl, []Shard{{"a.json", a}}); err == nil {
		t.Error("merging one of two shards succeeded")
	}
}
