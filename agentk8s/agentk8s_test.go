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

// TestAvailability covers AVAIL-*: each kind KubeFleet's agent tracks, in each state that
// decides it, and the kinds it does not track.
func TestAvailability(t *testing.T) {
	const dep = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 2}\nspec: {replicas: 3}\n"
	const sts = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s, generation: 2}\nspec: {replicas: 3}\n"
	const ds = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d, generation: 4}\n"
	const crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n"
	const pdb = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p, generation: 1}\n"
	cases := []struct {
		name      string
		doc       string
		tracking  Tracking
		available bool
	}{
		{"namespace is data-only", "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}", DataOnly, true},
		{"config map is data-only", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}", DataOnly, true},
		{"cluster role is data-only", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: a}", DataOnly, true},
		{"service account is data-only", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}", DataOnly, true},
		{"network policy is data-only", "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: a}", DataOnly, true},
		{"limit range is data-only", "apiVersion: v1\nkind: LimitRange\nmetadata: {name: a}", DataOnly, true},
		{"resource quota is data-only", "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: a}", DataOnly, true},
		{"storage class is data-only", "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: a}", DataOnly, true},
		{"priority class is data-only", "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: a}", DataOnly, true},
		{"ingress class is data-only", "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: a}", DataOnly, true},
		{"controller revision is data-only", "apiVersion: apps/v1\nkind: ControllerRevision\nmetadata: {name: a}", DataOnly, true},
		{"CSI driver is data-only", "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: a}", DataOnly, true},
		{"CSI node is data-only", "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: a}", DataOnly, true},
		{"CSI storage capacity is data-only", "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: a}", DataOnly, true},

		{"deployment fully rolled out", dep + "status: {observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3}", Trackable, true},
		{"deployment right after an update (status of the previous generation)", dep + "status: {observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3}", Trackable, false},
		{"deployment with one unavailable replica", dep + "status: {observedGeneration: 2, updatedReplicas: 3, availableReplicas: 3, unavailableReplicas: 1}", Trackable, false},
		{"deployment with a bad image", dep + "status: {observedGeneration: 2, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1}", Trackable, false},
		{"deployment with old replicas still available", dep + "status: {observedGeneration: 2, updatedReplicas: 2, availableReplicas: 3}", Trackable, false},
		{"deployment without replicas wants one", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 1}\nstatus: {observedGeneration: 1, updatedReplicas: 1, availableReplicas: 1}", Trackable, true},
		{"deployment never observed", dep, Trackable, false},

		{"statefulset ready", sts + "status: {observedGeneration: 2, availableReplicas: 3, currentReplicas: 3, updatedReplicas: 3, currentRevision: r2, updateRevision: r2}", Trackable, true},
		{"statefulset of an older generation", sts + "status: {observedGeneration: 1, availableReplicas: 3, currentReplicas: 3, updatedReplicas: 3, currentRevision: r2, updateRevision: r2}", Trackable, false},
		{"statefulset still rolling (revisions differ)", sts + "status: {observedGeneration: 2, availableReplicas: 3, currentReplicas: 3, updatedReplicas: 3, currentRevision: r1, updateRevision: r2}", Trackable, false},
		{"statefulset with a replica down", sts + "status: {observedGeneration: 2, availableReplicas: 2, currentReplicas: 3, updatedReplicas: 3, currentRevision: r2, updateRevision: r2}", Trackable, false},

		{"daemonset on every node", ds + "status: {observedGeneration: 4, desiredNumberScheduled: 3, currentNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3}", Trackable, true},
		{"daemonset not available on every node", ds + "status: {observedGeneration: 4, desiredNumberScheduled: 3, currentNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 2}", Trackable, false},
		{"daemonset still updating", ds + "status: {observedGeneration: 4, desiredNumberScheduled: 3, currentNumberScheduled: 3, updatedNumberScheduled: 2, numberAvailable: 3}", Trackable, false},
		{"daemonset of an older generation", ds + "status: {observedGeneration: 3, desiredNumberScheduled: 3, currentNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3}", Trackable, false},

		{"ClusterIP service with an IP", "apiVersion: v1\nkind: Service\nspec: {type: ClusterIP, clusterIP: 10.0.0.1, clusterIPs: [10.0.0.1]}", Trackable, true},
		{"default-typed service with an IP", "apiVersion: v1\nkind: Service\nspec: {clusterIPs: [10.0.0.1]}", Trackable, true},
		{"NodePort service without an IP yet", "apiVersion: v1\nkind: Service\nspec: {type: NodePort}", Trackable, false},
		{"load balancer without ingress", "apiVersion: v1\nkind: Service\nspec: {type: LoadBalancer, clusterIP: 10.0.0.1}", Trackable, false},
		{"load balancer with a hostname", "apiVersion: v1\nkind: Service\nspec: {type: LoadBalancer}\nstatus: {loadBalancer: {ingress: [{hostname: lb.example}]}}", Trackable, true},
		{"load balancer with an IP", "apiVersion: v1\nkind: Service\nspec: {type: LoadBalancer}\nstatus: {loadBalancer: {ingress: [{ip: 1.2.3.4}]}}", Trackable, true},
		{"ExternalName service is untrackable", "apiVersion: v1\nkind: Service\nspec: {type: ExternalName}", Untrackable, true},

		{"CRD established with names accepted", crd + "status: {conditions: [{type: NamesAccepted, status: 'True'}, {type: Established, status: 'True'}]}", Trackable, true},
		{"CRD not yet established", crd + "status: {conditions: [{type: NamesAccepted, status: 'True'}, {type: Established, status: 'False'}]}", Trackable, false},
		{"CRD with a name conflict", crd + "status: {conditions: [{type: NamesAccepted, status: 'False'}, {type: Established, status: 'True'}]}", Trackable, false},

		{"PDB allowing disruptions", pdb + "status: {observedGeneration: 1, disruptionsAllowed: 1, conditions: [{type: DisruptionAllowed, status: 'True'}]}", Trackable, true},
		{"PDB allowing none, condition agrees", pdb + "status: {observedGeneration: 1, disruptionsAllowed: 0, conditions: [{type: DisruptionAllowed, status: 'False'}]}", Trackable, true},
		{"PDB whose condition is stale", pdb + "status: {observedGeneration: 1, disruptionsAllowed: 2, conditions: [{type: DisruptionAllowed, status: 'False'}]}", Trackable, false},
		{"PDB not yet observed", pdb + "status: {disruptionsAllowed: 0}", Trackable, false},

		{"a job is untrackable", "apiVersion: batch/v1\nkind: Job\nstatus: {}", Untrackable, true},
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
				Applied:   condition.True("Applied", "AllManifestsApplied", "All the specified manifests have been applied"),
				Available: avail(condition.True("Available", "AllManifestsAvailable", "All of the applied manifests are available")),
			},
		},
		{
			name:    "an untrackable manifest makes the work not trackable",
			results: []ManifestResult{{Identifier: ns, Tracking: DataOnly}, {Identifier: crd, Tracking: Untrackable}},
			want: placement.WorkReport{
				Applied:   condition.True("Applied", "AllManifestsApplied", "All the specified manifests have been applied"),
				Available: avail(condition.True("Available", "WorkNotTrackable", "Some of the applied manifests cannot be tracked for availability")),
			},
		},
		{
			name:    "a bad image: applied, not available, listed in failedPlacements (TSG-AVAIL-BADIMAGE)",
			results: []ManifestResult{{Identifier: ns, Tracking: DataOnly}, {Identifier: dep, Tracking: Trackable}},
			want: placement.WorkReport{
				Applied:   condition.True("Applied", "AllManifestsApplied", "All the specified manifests have been applied"),
				Available: avail(condition.False("Available", "SomeManifestsAreNotAvailable", "Some manifests are not available (1 of 2 manifests are available)")),
				Failed:    []placement.FailedPlacement{{ResourceIdentifier: dep, Condition: condition.False("Available", "ManifestNotAvailableYet", "Manifest is not yet available; Fleet will check again later")}},
			},
		},
		{
			name:    "an apply failure omits availability",
			results: []ManifestResult{{Identifier: ns, ApplyError: "namespaces \"app\" already exists and is not owned by fleet", Reason: "ManifestsAlreadyOwnedByOthers"}, {Identifier: dep, Tracking: Trackable, Available: true}},
			want: placement.WorkReport{
				Applied: condition.False("Applied", "SomeManifestsAreNotApplied", "Failed to apply all manifests (1 of 2 manifests are applied)"),
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
