package placement

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"pgregory.net/rapid"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/model/member"
)

func decodePolicy(t *testing.T, doc string) *PlacementPolicy {
	t.Helper()
	var p PlacementPolicy
	if err := yaml.UnmarshalStrict([]byte(doc), &p); err != nil {
		t.Fatalf("decode %q: %v", doc, err)
	}
	return &p
}

// TestValidatePolicy covers the field matrix of CRP-POL-FIELDS and the limits of section 22.
func TestValidatePolicy(t *testing.T) {
	cases := []struct {
		name   string
		policy string
		want   []string // "field: type" of each error
	}{
		{"PickAll with required affinity", "placementType: PickAll\naffinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {clusterSelectorTerms: [{labelSelector: {matchLabels: {a: b}}}]}}}", nil},
		{"PickN needs numberOfClusters", "placementType: PickN", []string{"spec.policy.numberOfClusters: Required value"}},
		{"PickN numberOfClusters 0 is allowed", "placementType: PickN\nnumberOfClusters: 0", nil},
		{"negative numberOfClusters", "placementType: PickN\nnumberOfClusters: -1", []string{"spec.policy.numberOfClusters: Invalid value"}},
		{"numberOfClusters only with PickN", "placementType: PickAll\nnumberOfClusters: 2", []string{"spec.policy.numberOfClusters: Forbidden"}},
		{"clusterNames only with PickFixed", "placementType: PickN\nnumberOfClusters: 1\nclusterNames: [a]", []string{"spec.policy.clusterNames: Forbidden"}},
		{"PickFixed with affinity", "placementType: PickFixed\nclusterNames: [a]\naffinity: {clusterAffinity: {}}", []string{"spec.policy.affinity: Forbidden"}},
		{"PickFixed duplicate names", "placementType: PickFixed\nclusterNames: [a, a]", []string{"spec.policy.clusterNames[1]: Duplicate value"}},
		{"topology only with PickN", "placementType: PickAll\ntopologySpreadConstraints: [{topologyKey: zone}]", []string{"spec.policy.topologySpreadConstraints: Forbidden"}},
		{"maxSkew at least 1", "placementType: PickN\nnumberOfClusters: 1\ntopologySpreadConstraints: [{topologyKey: zone, maxSkew: 0}]", []string{"spec.policy.topologySpreadConstraints[0].maxSkew: Invalid value"}},
		{"topologyKey required", "placementType: PickN\nnumberOfClusters: 1\ntopologySpreadConstraints: [{maxSkew: 1}]", []string{"spec.policy.topologySpreadConstraints[0].topologyKey: Required value"}},
		{"whenUnsatisfiable enum", "placementType: PickN\nnumberOfClusters: 1\ntopologySpreadConstraints: [{topologyKey: z, whenUnsatisfiable: Maybe}]", []string{"spec.policy.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value"}},
		{"unknown placement type", "placementType: PickSome", []string{"spec.policy.placementType: Unsupported value"}},
		{"weight range", "placementType: PickN\nnumberOfClusters: 1\naffinity: {clusterAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 101, preference: {labelSelector: {}}}]}}",
			[]string{"spec.policy.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value"}},
		{"property selector needs exactly one value", "placementType: PickAll\naffinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {clusterSelectorTerms: [{propertySelector: {matchExpressions: [{name: n, operator: Ge, values: ['1', '2']}]}}]}}}",
			[]string{"spec.policy.affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[0].propertySelector.matchExpressions[0].values: Invalid value"}},
		{"property value must be a quantity", "placementType: PickAll\naffinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {clusterSelectorTerms: [{propertySelector: {matchExpressions: [{name: n, operator: Ge, values: [lots]}]}}]}}}",
			[]string{"spec.policy.affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[0].propertySelector.matchExpressions[0].values[0]: Invalid value"}},
		{"sorter order enum", "placementType: PickN\nnumberOfClusters: 1\naffinity: {clusterAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {propertySorter: {name: n, sortOrder: Up}}}]}}",
			[]string{"spec.policy.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.propertySorter.sortOrder: Unsupported value"}},
		{"sorter not in a required term", "placementType: PickAll\naffinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {clusterSelectorTerms: [{propertySorter: {name: n, sortOrder: Ascending}}]}}}",
			[]string{"spec.policy.affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[0].propertySorter: Forbidden"}},
		{"bad label selector operator", "placementType: PickAll\naffinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {clusterSelectorTerms: [{labelSelector: {matchExpressions: [{key: a, operator: NotExists}]}}]}}}",
			[]string{"spec.policy.affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[0].labelSelector: Invalid value"}},
		{"empty toleration key needs Exists", "placementType: PickAll\ntolerations: [{value: v}]", []string{"spec.policy.tolerations[0].operator: Invalid value"}},
		{"Exists toleration has no value", "placementType: PickAll\ntolerations: [{key: k, operator: Exists, value: v}]", []string{"spec.policy.tolerations[0].value: Invalid value"}},
		{"toleration effect enum", "placementType: PickAll\ntolerations: [{key: k, value: v, effect: NoExecute}]", []string{"spec.policy.tolerations[0].effect: Unsupported value"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidatePolicy(decodePolicy(t, tc.policy), field.NewPath("spec", "policy"))
			var got []string
			for _, e := range errs {
				got = append(got, e.Field+": "+e.Type.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidatePolicy(%q) (-want +got):\n%s\nerrors: %v", tc.policy, diff, errs)
			}
		})
	}
}

func TestValidatePlacementStrategy(t *testing.T) {
	crp := func(mu, ms string) *ClusterResourcePlacement {
		c := &ClusterResourcePlacement{Spec: PlacementSpec{ResourceSelectors: []ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "a"}}}}
		c.Name = "crp"
		c.Spec.Strategy.RollingUpdate = &RollingUpdateConfig{}
		if mu != "" {
			v := intstr.Parse(mu)
			c.Spec.Strategy.RollingUpdate.MaxUnavailable = &v
		}
		if ms != "" {
			v := intstr.Parse(ms)
			c.Spec.Strategy.RollingUpdate.MaxSurge = &v
		}
		return c
	}
	cases := []struct {
		mu, ms string
		want   string // substring of the aggregate error, "" for valid
	}{
		{"25%", "25%", ""},
		{"0", "1", ""},
		{"0", "0", "cannot be 0 when maxUnavailable is 0"}, // DC-1
		{"0%", "0", "cannot be 0 when maxUnavailable is 0"},
		{"101%", "", "maxUnavailable"},
		{"", "abc", "maxSurge"},
	}
	for _, tc := range cases {
		errs := ValidatePlacement(crp(tc.mu, tc.ms))
		got := ""
		if len(errs) > 0 {
			got = errs.ToAggregate().Error()
		}
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("ValidatePlacement(maxUnavailable %q, maxSurge %q) = %q, want containing %q", tc.mu, tc.ms, got, tc.want)
		}
	}
	for _, tc := range []struct {
		policy  DeletePropagationPolicy
		valid   bool
		abandon bool
	}{{"", true, false}, {DeletePropagationDelete, true, false}, {DeletePropagationAbandon, true, true}, {"Orphan", false, false}} {
		c := crp("", "")
		c.Spec.Strategy.DeleteStrategy = &DeleteStrategy{PropagationPolicy: tc.policy}
		errs := ValidatePlacement(c)
		if (len(errs) == 0) != tc.valid {
			t.Errorf("deleteStrategy %q: errors %v, want valid %t", tc.policy, errs, tc.valid)
		}
		if got := c.Spec.Strategy.Abandons(); got != tc.abandon {
			t.Errorf("deleteStrategy %q: Abandons() = %t, want %t", tc.policy, got, tc.abandon)
		}
	}
	if (RolloutStrategy{}).Abandons() {
		t.Errorf("no deleteStrategy abandons, want Delete")
	}
	noSelectors := &ClusterResourcePlacement{}
	if errs := ValidatePlacement(noSelectors); len(errs) != 2 {
		t.Errorf("ValidatePlacement(empty) = %v, want a missing name and missing selectors", errs)
	}
}

func TestCheckPolicyUpdate(t *testing.T) {
	tol := func(keys ...string) *PlacementPolicy {
		p := &PlacementPolicy{PlacementType: PickAll}
		for _, k := range keys {
			p.Tolerations = append(p.Tolerations, Toleration{Key: k, Operator: TolerationOpExists})
		}
		return p
	}
	cases := []struct {
		name     string
		old, new *PlacementPolicy
		ok       bool
	}{
		{"append a toleration", tol("a"), tol("a", "b"), true},
		{"remove a toleration", tol("a", "b"), tol("a"), false},
		{"change a toleration", tol("a"), tol("b"), false},
		{"switch type", tol(), &PlacementPolicy{PlacementType: PickN}, false},
		{"nil is PickAll", nil, tol(), true},
	}
	for _, tc := range cases {
		if err := CheckPolicyUpdate(tc.old, tc.new); (err == nil) != tc.ok {
			t.Errorf("%s: CheckPolicyUpdate = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// TestDecidePolicySnapshot: new snapshots only for policy changes; numberOfClusters only
// updates the annotation (SNAP-POLICY, DC-10).
func TestDecidePolicySnapshot(t *testing.T) {
	n := func(v int32) *int32 { return &v }
	p2 := &PlacementPolicy{PlacementType: PickN, NumberOfClusters: n(2)}
	first := DecidePolicySnapshot("crp", 1, p2, nil)
	if first.Create == nil || first.Create.Name != "crp-0" || first.Create.NumberOfClusters != 2 || first.Create.PlacementGeneration != 1 {
		t.Fatalf("first snapshot = %+v", first.Create)
	}
	if d := DecidePolicySnapshot("crp", 2, p2, first.Create); d.Create != nil || d.SetNumberOfClusters != nil {
		t.Errorf("unchanged policy: %+v, want nothing", d)
	}
	p3 := &PlacementPolicy{PlacementType: PickN, NumberOfClusters: n(3)}
	if d := DecidePolicySnapshot("crp", 2, p3, first.Create); d.Create != nil || d.SetNumberOfClusters == nil || *d.SetNumberOfClusters != 3 {
		t.Errorf("scale to 3: %+v, want only the annotation set to 3", d)
	}
	changed := &PlacementPolicy{PlacementType: PickN, NumberOfClusters: n(2), Tolerations: []Toleration{{Key: "k", Operator: TolerationOpExists}}}
	if d := DecidePolicySnapshot("crp", 3, changed, first.Create); d.Create == nil || d.Create.Name != "crp-1" || d.Create.Index != 1 {
		t.Errorf("changed policy: %+v, want snapshot crp-1", d)
	}
	if PolicyHash(p2) != PolicyHash(p3) || PolicyHash(p2) == PolicyHash(changed) {
		t.Errorf("PolicyHash must ignore numberOfClusters and only that")
	}
}

func TestTolerates(t *testing.T) {
	taint := member.Taint{Key: "k", Value: "v", Effect: member.NoSchedule}
	cases := []struct {
		t    Toleration
		want bool
	}{
		{Toleration{Key: "k", Value: "v"}, true},
		{Toleration{Key: "k", Value: "v", Operator: TolerationOpEqual, Effect: member.NoSchedule}, true},
		{Toleration{Key: "k", Value: "w"}, false},
		{Toleration{Key: "k", Operator: TolerationOpExists}, true},
		{Toleration{Operator: TolerationOpExists}, true},
		{Toleration{Key: "j", Operator: TolerationOpExists}, false},
		{Toleration{Key: "k", Operator: TolerationOpExists, Effect: "NoExecute"}, false},
	}
	for _, tc := range cases {
		if got := tc.t.Tolerates(taint); got != tc.want {
			t.Errorf("%+v.Tolerates(%v) = %v, want %v", tc.t, taint, got, tc.want)
		}
	}
}

func TestBindingName(t *testing.T) {
	a, b := BindingName("crp-1", "aks-member-1", 0), BindingName("crp-1", "aks-member-1", 1)
	if a == b || !strings.HasPrefix(a, "crp-1-aks-member-1-") || len(a) != len("crp-1-aks-member-1-")+8 {
		t.Errorf("BindingName = %q, %q; want {crp}-{cluster}-{8 hex}, different per attempt", a, b)
	}
	if a != BindingName("crp-1", "aks-member-1", 0) {
		t.Errorf("BindingName is not deterministic")
	}
}

func TestStatusReportingScope(t *testing.T) {
	ns := func(name string) ResourceSelector {
		return ResourceSelector{Version: "v1", Kind: "Namespace", Name: name}
	}
	role := ResourceSelector{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "reader"}
	byLabel := ResourceSelector{Version: "v1", Kind: "Namespace", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}}
	for _, tc := range []struct {
		name      string
		scope     StatusReportingScope
		selectors []ResourceSelector
		valid     bool
		namespace string
	}{
		{"default", "", []ResourceSelector{ns("a"), ns("b")}, true, ""},
		{"cluster scope only", ClusterScopeOnly, []ResourceSelector{ns("a")}, true, ""},
		{"one namespace", NamespaceAccessible, []ResourceSelector{ns("a"), role}, true, "a"},
		{"namespace by labels", NamespaceAccessible, []ResourceSelector{byLabel}, true, ""},
		{"two namespaces", NamespaceAccessible, []ResourceSelector{ns("a"), ns("b")}, false, ""},
		{"no namespace", NamespaceAccessible, []ResourceSelector{role}, false, ""},
		{"unknown scope", "Everywhere", []ResourceSelector{ns("a")}, false, ""},
	} {
		c := &ClusterResourcePlacement{Spec: PlacementSpec{ResourceSelectors: tc.selectors, StatusReportingScope: tc.scope}}
		c.Name = "p"
		errs := ValidatePlacement(c)
		if (len(errs) == 0) != tc.valid {
			t.Errorf("%s: errors %v, want valid %t", tc.name, errs, tc.valid)
		}
		if got := c.Spec.StatusNamespace(); got != tc.namespace {
			t.Errorf("%s: StatusNamespace() = %q, want %q", tc.name, got, tc.namespace)
		}
	}
	for _, tc := range []struct {
		old, new StatusReportingScope
		ok       bool
	}{
		{"", ClusterScopeOnly, true}, {ClusterScopeOnly, "", true}, {NamespaceAccessible, NamespaceAccessible, true},
		{"", NamespaceAccessible, false}, {NamespaceAccessible, ClusterScopeOnly, false},
	} {
		if err := CheckScopeUpdate(tc.old, tc.new); (err == nil) != tc.ok {
			t.Errorf("CheckScopeUpdate(%q, %q) = %v, want ok %t", tc.old, tc.new, err, tc.ok)
		}
	}
}

func TestValidateReportBackStrategy(t *testing.T) {
	dest := func(d ReportBackDestination) *ReportBackDestination { return &d }
	for _, tc := range []struct {
		name   string
		rs     *ReportBackStrategy
		want   string // "" means valid
		mirror bool
	}{
		{"none", nil, "", false},
		{"disabled", &ReportBackStrategy{Type: ReportBackDisabled}, "", false},
		{"mirror to the Work API", &ReportBackStrategy{Type: ReportBackMirror, Destination: dest(ReportBackToWorkAPI)}, "", true},
		{"mirror without destination", &ReportBackStrategy{Type: ReportBackMirror}, "a destination must be specified", true},
		{"mirror to the original resource", &ReportBackStrategy{Type: ReportBackMirror, Destination: dest(ReportBackToOriginalResource)}, `Unsupported value: "OriginalResource"`, true},
		{"no type", &ReportBackStrategy{}, "spec.strategy.reportBackStrategy.type: Required value", false},
		{"unknown type", &ReportBackStrategy{Type: "Copy"}, `Unsupported value: "Copy"`, false},
		{"unknown destination", &ReportBackStrategy{Type: ReportBackMirror, Destination: dest("Elsewhere")}, `Unsupported value: "Elsewhere"`, true},
	} {
		c := &ClusterResourcePlacement{Spec: PlacementSpec{ResourceSelectors: []ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "a"}}}}
		c.Name = "p"
		c.Spec.Strategy.ReportBackStrategy = tc.rs
		got := ValidatePlacement(c).ToAggregate()
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: %v, want valid", tc.name, got)
		case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
			t.Errorf("%s: %v, want an error containing %q", tc.name, got, tc.want)
		}
		if m := tc.rs.Mirrors(); m != tc.mirror {
			t.Errorf("%s: Mirrors() = %t, want %t", tc.name, m, tc.mirror)
		}
	}
}

// TestPropBindingNameIsFNV1a: BindingName folds FNV-1a by hand; its names are those of
// hash/fnv over placement, NUL, cluster, NUL and the attempt in decimal (names reach
// traces, so they must never change).
func TestPropBindingNameIsFNV1a(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p, c := rapid.String().Draw(t, "placement"), rapid.StringN(0, 200, -1).Draw(t, "cluster")
		attempt := rapid.IntRange(-5, 1<<40).Draw(t, "attempt")
		h := fnv.New32a()
		h.Write([]byte(p + "\x00" + c + "\x00" + strconv.Itoa(attempt)))
		want := fmt.Sprintf("%s-%s-%08x", p, c, h.Sum32())
		if got := BindingName(p, c, attempt); got != want {
			t.Fatalf("BindingName(%q, %q, %d) = %q, want %q", p, c, attempt, got, want)
		}
	})
}

// TestValidatePlacementSelectorScope: a ClusterResourcePlacement selects cluster-scoped
// kinds only; one naming a namespaced kind is refused with the words of KubeFleet's
// admission webhook.
func TestValidatePlacementSelectorScope(t *testing.T) {
	const refused = "the resource is not found in schema (please retry) or it is not a cluster scoped resource: "
	cases := []struct {
		sel  ResourceSelector
		want string // the refusal, "" when accepted
	}{
		{ResourceSelector{Version: "v1", Kind: "Namespace", Name: "app"}, ""},
		{ResourceSelector{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "r"}, ""},
		{ResourceSelector{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, ""},
		{ResourceSelector{Group: "placement.kubernetes-fleet.io", Version: "v1beta1", Kind: "ClusterResourceEnvelope", Name: "e"}, ""},
		{ResourceSelector{Group: "example.com", Version: "v1", Kind: "Widget"}, ""}, // unknown here: discovery decides
		{ResourceSelector{Version: "v1", Kind: "ConfigMap", Name: "cm"}, refused + "/v1, Kind=ConfigMap"},
		{ResourceSelector{Group: "apps", Version: "v1", Kind: "Deployment", Name: "web"}, refused + "apps/v1, Kind=Deployment"},
		{ResourceSelector{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}, refused + "rbac.authorization.k8s.io/v1, Kind=Role"},
		{ResourceSelector{Group: "placement.kubernetes-fleet.io", Version: "v1beta1", Kind: "ResourceEnvelope", Name: "e"}, refused + "placement.kubernetes-fleet.io/v1beta1, Kind=ResourceEnvelope"},
	}
	for _, tc := range cases {
		crp := &ClusterResourcePlacement{Spec: PlacementSpec{ResourceSelectors: []ResourceSelector{tc.sel}}}
		crp.Name = "crp"
		var got string
		if errs := ValidatePlacement(crp); len(errs) > 0 {
			got = errs[0].Detail
			if errs[0].Field != "spec.resourceSelectors[0].kind" {
				t.Errorf("%s: refused at %s, want spec.resourceSelectors[0].kind", tc.sel.Kind, errs[0].Field)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ValidatePlacement(selector %s) (-want +got):\n%s", tc.sel.Kind, diff)
		}
		if diff := cmp.Diff(tc.want, SelectorScopeError(tc.sel, KnownNamespaced)); diff != "" {
			t.Errorf("SelectorScopeError(%s) (-want +got):\n%s", tc.sel.Kind, diff)
		}
	}
}
