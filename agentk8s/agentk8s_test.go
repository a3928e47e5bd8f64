package agentk8s

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
)

func obj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	o := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &o.Object); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestAvailability covers AVAIL-DEPLOYMENT ... AVAIL-UNTRACKABLE.
func TestAvailability(t *testing.T) {
	cases := []struct {
		name      string
		doc       string
		tracking  Tracking
		available bool
	}{
		{"namespace is data-only", "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}", DataOnly, true},
		{"config map is data-only", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}", DataOnly, true},
		{"cluster role is data-only", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: a}", DataOnly, true},
		{"deployment fully rolled out", "apiVersion: apps/v1\nkind: Deployment\nspec: {replicas: 2}\nstatus: {updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2}", Trackable, true},
		{"deployment with a bad image", "apiVersion: apps/v1\nkind: Deployment\nspec: {replicas: 2}\nstatus: {updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1}", Trackable, false},
		{"statefulset ready", "apiVersion: apps/v1\nkind: StatefulSet\nspec: {replicas: 3}\nstatus: {updatedReplicas: 3, readyReplicas: 3}", Trackable, true},
		{"daemonset not on every node", "apiVersion: apps/v1\nkind: DaemonSet\nstatus: {desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 2}", Trackable, false},
		{"job with one succeeded pod", "apiVersion: batch/v1\nkind: Job\nstatus: {succeeded: 1}", Trackable, true},
		{"job with one ready pod", "apiVersion: batch/v1\nkind: Job\nstatus: {ready: 1}", Trackable, true},
		{"job still pending", "apiVersion: batch/v1\nkind: Job\nstatus: {}", Trackable, false},
		{"ClusterIP service with an IP", "apiVersion: v1\nkind: Service\nspec: {type: ClusterIP, clusterIP: 10.0.0.1}", Trackable, true},
		{"load balancer without ingress", "apiVersion: v1\nkind: Service\nspec: {type: LoadBalancer, clusterIP: 10.0.0.1}", Trackable, false},
		{"load balancer with a hostname", "apiVersion: v1\nkind: Service\nspec: {type: LoadBalancer}\nstatus: {loadBalancer: {ingress: [{hostname: lb.example}]}}", Trackable, true},
		{"ExternalName service is untrackable", "apiVersion: v1\nkind: Service\nspec: {type: ExternalName}", Untrackable, true},
		{"a custom resource is untrackable", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}", Untrackable, true},
	}
	for _, tc := range cases {
		o := obj(t, tc.doc)
		if got := Classify(o); got != tc.tracking {
			t.Errorf("%s: Classify = %v, want %v", tc.name, got, tc.tracking)
		}
		if got := Available(o); got != tc.available {
			t.Errorf("%s: Available = %v, want %v", tc.name, got, tc.available)
		}
	}
}

func TestSummarise(t *testing.T) {
	ns := placement.ResourceIdentifier{Version: "v1", Kind: "Namespace", Name: "app"}
	dep := placement.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Name: "web", Namespace: "app"}
	crd := placement.ResourceIdentifier{Group: "example.com", Version: "v1", Kind: "Widget", Name: "w"}
	avail := func(c condition.Condition) *condition.Condition { return &c }
	cases := []struct {
		name    string
		results []ManifestResult
		want    placement.WorkReport
	}{
		{
			name:    "all applied and available",
			results: []ManifestResult{{Identifier: ns, Tracking: DataOnly}, {Identifier: dep, Tracking: Trackable, Available: true}},
			want: placement.WorkReport{
				Applied:   condition.True("Applied", "AllWorkHaveBeenApplied", "All corresponding work objects are applied"),
				Available: avail(condition.True("Available", "AllWorkAreAvailable", "All corresponding work objects are available")),
			},
		},
		{
			name:    "an untrackable manifest makes the work not trackable",
			results: []ManifestResult{{Identifier: ns, Tracking: DataOnly}, {Identifier: crd, Tracking: Untrackable}},
			want: placement.WorkReport{
				Applied:   condition.True("Applied", "AllWorkHaveBeenApplied", "All corresponding work objects are applied"),
				Available: avail(condition.True("Available", "WorkNotTrackable", "The availability of work object crp-work is not trackable")),
			},
		},
		{
			name:    "a bad image: applied, not available, listed in failedPlacements (TSG-AVAIL-BADIMAGE)",
			results: []ManifestResult{{Identifier: ns, Tracking: DataOnly}, {Identifier: dep, Tracking: Trackable}},
			want: placement.WorkReport{
				Applied:   condition.True("Applied", "AllWorkHaveBeenApplied", "All corresponding work objects are applied"),
				Available: avail(condition.False("Available", "NotAllWorkAreAvailable", "Work object crp-work is not available")),
				Failed:    []placement.FailedPlacement{{ResourceIdentifier: dep, Condition: condition.False("Available", "ManifestNotAvailableYet", "Manifest is trackable but not available yet")}},
			},
		},
		{
			name:    "an apply failure omits availability",
			results: []ManifestResult{{Identifier: ns, ApplyError: "namespaces \"app\" already exists and is not owned by fleet", Reason: "ManifestsAlreadyOwnedByOthers"}, {Identifier: dep, Tracking: Trackable, Available: true}},
			want: placement.WorkReport{
				Applied: condition.False("Applied", "NotAllWorkHaveBeenApplied", "Work object crp-work is not applied"),
				Failed:  []placement.FailedPlacement{{ResourceIdentifier: ns, Condition: condition.False("Applied", "ManifestsAlreadyOwnedByOthers", "namespaces \"app\" already exists and is not owned by fleet")}},
			},
		},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, Summarise("crp-work", tc.results)); diff != "" {
			t.Errorf("Summarise(%s) (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestSightings(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var s Sightings
	steps := []struct {
		found bool
		now   time.Time
		want  time.Time
	}{
		{found: false, now: t0, want: time.Time{}},
		{found: true, now: t0.Add(time.Minute), want: t0.Add(time.Minute)},
		{found: true, now: t0.Add(2 * time.Minute), want: t0.Add(time.Minute)},
		{found: false, now: t0.Add(3 * time.Minute), want: time.Time{}},
		{found: true, now: t0.Add(4 * time.Minute), want: t0.Add(4 * time.Minute)},
	}
	for i, st := range steps {
		if got := s.FirstSeen("w|drift", st.found, st.now); !got.Equal(st.want) {
			t.Errorf("step %d: FirstSeen(found=%v, %v) = %v, want %v", i, st.found, st.now, got, st.want)
		}
	}
}
