package properties

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

type fixedVersion string

func (v fixedVersion) ServerVersion() (*version.Info, error) {
	return &version.Info{GitVersion: string(v)}, nil
}

func node(name string, cpu, memory string, labels map[string]string) *corev1.Node {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: corev1.NodeStatus{Capacity: l, Allocatable: l}}
}

func pod(name, nodeName, cpu string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
		Status: corev1.PodStatus{Phase: phase}}
}

// quantities renders a collection's figures as strings, for readable diffs.
func quantities(c Collection) map[string]string {
	out := map[string]string{}
	for k, v := range c.Properties {
		out["property "+k] = v
	}
	for what, l := range map[string]corev1.ResourceList{"capacity": c.Usage.Capacity, "allocatable": c.Usage.Allocatable, "available": c.Usage.Available} {
		for n, q := range l {
			out[what+" "+string(n)] = q.String()
		}
	}
	return out
}

func TestCollect(t *testing.T) {
	nodes := []client.Object{
		node("n1", "4", "8Gi", map[string]string{"example.com/cost-per-cpu-core": "0.5"}),
		node("n2", "2", "4Gi", map[string]string{"example.com/cost-per-cpu-core": "0.2"}),
		node("n3", "2", "4Gi", nil),
	}
	pods := []client.Object{
		pod("running", "n1", "1500m", corev1.PodRunning),
		pod("done", "n1", "2", corev1.PodSucceeded), // finished: requests nothing
		pod("pending", "", "2", corev1.PodPending),  // not bound to a node: requests nothing
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet-system", Name: "props"},
		Data: map[string]string{"ranks": "example.com/region-rank: 3\nexample.com/bad: cheap", "builtin": "kubernetes-fleet.io/node-count: 99", "list": "- 1"}}
	base := map[string]string{
		"property kubernetes-fleet.io/node-count": "3", "property k8s.io/k8s-version": "v1.33.0",
		"capacity cpu": "8", "capacity memory": "16Gi", "allocatable cpu": "8", "allocatable memory": "16Gi",
		"available cpu": "6500m", "available memory": "16Gi",
	}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	cases := []struct {
		name       string
		config     Config
		objects    []client.Object
		want       map[string]string
		wantReason string
	}{
		{"kubernetes", Config{}, nil, base, ReasonCollected},
		{"configurable node labels: the mean over the nodes carrying the label", Config{Provider: "configurable",
			NodeLabels: map[string]string{"example.com/cost-per-cpu-core": "example.com/cost-per-cpu-core", "example.com/none": "example.com/absent"}},
			nil, with(map[string]string{"property example.com/cost-per-cpu-core": "350m"}), ReasonCollected},
		{"configurable ConfigMap: bad entries left out and named", Config{Provider: "configurable", ConfigMap: "fleet-system/props"},
			[]client.Object{cm}, with(map[string]string{"property example.com/region-rank": "3"}), ReasonCollectionPartial},
		{"configurable missing ConfigMap: the built-in properties still reported", Config{Provider: "configurable", ConfigMap: "fleet-system/absent"},
			nil, base, ReasonCollectionPartial},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.config)
			if err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithObjects(append(append(append([]client.Object{}, nodes...), pods...), tc.objects...)...).Build()
			switch p := p.(type) {
			case *Kubernetes:
				p.Client, p.Version = c, fixedVersion("v1.33.0")
			case *Configurable:
				p.Client, p.Version = c, fixedVersion("v1.33.0")
			}
			got := p.Collect(context.Background())
			if got.Err != nil {
				t.Fatal(got.Err)
			}
			if diff := cmp.Diff(tc.want, quantities(got)); diff != "" {
				t.Errorf("collected (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]metav1.Condition{{Type: ConditionTypeCollectionSucceeded, Reason: tc.wantReason}}, got.Conditions,
				cmpopts.IgnoreFields(metav1.Condition{}, "Status", "Message")); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigurableNamesWhatItLeavesOut(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet-system", Name: "props"},
		Data: map[string]string{"a": "example.com/bad: cheap\nexample.com/cost: '0.25'", "b": "kubernetes-fleet.io/node-count: 99", "c": "- 1", "d": "x: {z: 1}"}}
	p := &Configurable{ConfigMap: client.ObjectKey{Namespace: "fleet-system", Name: "props"}}
	p.Client = fake.NewClientBuilder().WithObjects(cm).Build()
	got := p.Collect(context.Background())
	if diff := cmp.Diff(map[string]string{"property example.com/cost": "250m", "property kubernetes-fleet.io/node-count": "0",
		"capacity cpu": "0", "capacity memory": "0", "allocatable cpu": "0", "allocatable memory": "0", "available cpu": "0", "available memory": "0"},
		quantities(got)); diff != "" {
		t.Errorf("collected (-want +got):\n%s", diff)
	}
	want := `ConfigMap fleet-system/props: data[a]: property example.com/bad: value "cheap" is not a quantity; ` +
		`ConfigMap fleet-system/props: data[b]: property name "kubernetes-fleet.io/node-count": reported by the built-in provider, cannot be declared; ` +
		`ConfigMap fleet-system/props: data[c]: not a mapping of property names to quantities: json: cannot unmarshal array into Go value of type map[string]interface {}; ` +
		`ConfigMap fleet-system/props: data[d]: property x: value map[z:1] is not a quantity`
	if len(got.Conditions) != 1 || got.Conditions[0].Message != want || got.Conditions[0].Status != metav1.ConditionFalse {
		t.Errorf("conditions = %+v; want one False with message %q", got.Conditions, want)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		config Config
		want   string
	}{
		{Config{Provider: "azure"}, `unknown property provider "azure": must be one of configurable, kubernetes`},
		{Config{ConfigMap: "a/b"}, "need --property-provider configurable"},
		{Config{Provider: "configurable", ConfigMap: "a/b/c"}, `properties ConfigMap "a/b/c": must be <namespace>/<name>`},
		{Config{Provider: "configurable", NodeLabels: map[string]string{"Not A Name": "x"}}, `property name "Not A Name"`},
		{Config{Provider: "configurable", NodeLabels: map[string]string{"resources.kubernetes-fleet.io/total-cpu": "x"}}, "reported by the built-in provider"},
		{Config{Provider: "configurable", NodeLabels: map[string]string{"example.com/a": "bad label!"}}, `node label "bad label!"`},
	} {
		_, err := New(tc.config)
		if err == nil || !contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v; want an error containing %q", tc.config, err, tc.want)
		}
	}
}

func TestMeanOfLabelRefusesNonQuantity(t *testing.T) {
	_, _, err := MeanOfLabel([]corev1.Node{*node("n1", "1", "1Gi", map[string]string{"cost": "high"})}, "cost")
	if err == nil || err.Error() != `node n1: label cost="high" is not a quantity` {
		t.Errorf("MeanOfLabel = %v", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
