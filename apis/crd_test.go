package apis_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/apis/kinds"
	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
)

// crdWant is what one committed CRD must say.
type crdWant struct {
	group      string
	plural     string
	namespaced bool
	shortNames []string
	status     bool
	// columns are the printer columns, name and JSONPath, in order.
	columns [][2]string
	// rules are messages of CEL rules the schema must contain (anywhere).
	rules []string
}

const (
	clusterGroup   = "cluster.kubernetes-fleet.io"
	placementGroup = "placement.kubernetes-fleet.io"
)

func cond(typ, field string) string { return `.status.conditions[?(@.type=="` + typ + `")].` + field }

var age = [2]string{"Age", ".metadata.creationTimestamp"}

var wantCRDs = map[string]crdWant{
	"MemberCluster": {group: clusterGroup, plural: "memberclusters", shortNames: []string{"cluster"}, status: true,
		columns: [][2]string{
			{"Joined", cond("Joined", "status")}, age,
			{"Member-Agent-Last-Seen", `.status.agentStatus[?(@.type=="MemberAgent")].lastReceivedHeartbeat`},
			{"Node-Count", `.status.properties.kubernetes-fleet\.io/node-count.value`},
			{"Available-CPU", ".status.resourceUsage.available.cpu"},
			{"Available-Memory", ".status.resourceUsage.available.memory"},
			{"Allocatable-CPU", ".status.resourceUsage.allocatable.cpu"},
			{"Allocatable-Memory", ".status.resourceUsage.allocatable.memory"},
		}},
	"InternalMemberCluster": {group: clusterGroup, plural: "internalmemberclusters", namespaced: true, shortNames: []string{"imc"}, status: true,
		columns: [][2]string{{"State", ".spec.state"}, age}},
	"ClusterResourcePlacement": {group: placementGroup, plural: "clusterresourceplacements", shortNames: []string{"crp"}, status: true,
		columns: [][2]string{
			{"Gen", ".metadata.generation"},
			{"Scheduled", cond("ClusterResourcePlacementScheduled", "status")},
			{"Scheduled-Gen", cond("ClusterResourcePlacementScheduled", "observedGeneration")},
			{"Available", cond("ClusterResourcePlacementAvailable", "status")},
			{"Available-Gen", cond("ClusterResourcePlacementAvailable", "observedGeneration")},
			age,
		},
		rules: []string{
			"numberOfClusters is required when placementType is PickN",
			"numberOfClusters is only allowed when placementType is PickN",
			"clusterNames is only allowed when placementType is PickFixed",
			"affinity is not allowed when placementType is PickFixed: clusterNames and affinity are mutually exclusive",
			"topologySpreadConstraints is only allowed when placementType is PickN",
			"placementType is immutable: delete and recreate the placement to change it",
			"tolerations can only be added: existing tolerations cannot be changed or removed",
			"policy can only be removed from a PickAll placement without tolerations: placementType is immutable and tolerations cannot be removed",
			"placementType is immutable: a placement created without a policy is PickAll",
			"name and labelSelector are mutually exclusive",
			"propertySorter is only allowed in preferred terms",
			"propertySelector is only allowed in required terms; preferred terms rank with propertySorter",
			"operator must be Exists when key is empty",
			"value must be empty when operator is Exists",
			"maxSurge cannot be 0 when maxUnavailable is 0",
			"maxUnavailable must not be negative",
			"maxSurge must not be negative",
			"when statusReportingScope is NamespaceAccessible, exactly one resourceSelector with kind 'Namespace' is required",
			"statusReportingScope is immutable",
			"when reportBackStrategy.type is 'Mirror', a destination must be specified",
			"reportBackStrategy.destination OriginalResource is not supported by this hub yet: use WorkAPI",
		}},
	"ClusterResourcePlacementStatus": {group: placementGroup, plural: "clusterresourceplacementstatuses", namespaced: true, shortNames: []string{"crps"},
		columns: [][2]string{{"Resource-Index", ".sourceStatus.observedResourceIndex"}, {"Last-Updated", ".lastUpdatedTime"}, age}},
	"ClusterResourceEnvelope": {group: placementGroup, plural: "clusterresourceenvelopes"},
	"ResourceEnvelope":        {group: placementGroup, plural: "resourceenvelopes", namespaced: true},
	"ClusterSchedulingPolicySnapshot": {group: placementGroup, plural: "clusterschedulingpolicysnapshots", shortNames: []string{"pss", "csps"}, status: true,
		columns: [][2]string{{"Gen", ".metadata.generation"}, age},
		rules:   []string{"the spec of a policy snapshot is immutable"}},
	"ClusterResourceSnapshot": {group: placementGroup, plural: "clusterresourcesnapshots", shortNames: []string{"rss", "crs"}, status: true,
		columns: [][2]string{{"Gen", ".metadata.generation"}, age},
		rules:   []string{"the spec of a resource snapshot is immutable"}},
	"ClusterResourceBinding": {group: placementGroup, plural: "clusterresourcebindings", shortNames: []string{"rb", "crb"}, status: true,
		columns: [][2]string{{"WorkSynchronized", cond("WorkSynchronized", "status")}, {"ResourcesApplied", cond("Applied", "status")}, age}},
	"Work": {group: placementGroup, plural: "works", namespaced: true, shortNames: []string{"work"}, status: true,
		columns: [][2]string{age}},
	"ClusterResourceOverride": {group: placementGroup, plural: "clusterresourceoverrides", shortNames: []string{"cro"},
		rules: []string{
			"labelSelector is not supported: an override selects resources by name",
			"name is required: an override selects resources by name",
			"jsonPatchOverrides is required when overrideType is JSONPatch",
			"jsonPatchOverrides is only allowed when overrideType is JSONPatch",
			"only labelSelector is supported in an override cluster selector",
			"path must start with /",
			"path must not contain empty segments",
			"path cannot point at a TypeMeta field (kind, apiVersion)",
			"path cannot point at any field under status",
			"path cannot point at a metadata field other than labels and annotations",
		}},
	"ResourceOverride": {group: placementGroup, plural: "resourceoverrides", namespaced: true, shortNames: []string{"ro"},
		rules: []string{
			"a ResourceOverride selects namespaced resources; select a Namespace with a ClusterResourceOverride",
			"jsonPatchOverrides is required when overrideType is JSONPatch",
			"path must start with /",
		}},
	"ClusterResourceOverrideSnapshot": {group: placementGroup, plural: "clusterresourceoverridesnapshots", shortNames: []string{"cros"},
		rules: []string{"the spec of an override snapshot is immutable"}},
	"ResourceOverrideSnapshot": {group: placementGroup, plural: "resourceoverridesnapshots", namespaced: true, shortNames: []string{"ros"},
		rules: []string{"the spec of an override snapshot is immutable"}},
	"ClusterStagedUpdateStrategy": {group: placementGroup, plural: "clusterstagedupdatestrategies", shortNames: []string{"csus"},
		rules: []string{"stage names must be unique", "at most one after-stage task of each type", "waitTime is required for a TimedWait task"}},
	"ClusterStagedUpdateRun": {group: placementGroup, plural: "clusterstagedupdateruns", shortNames: []string{"csur", "crsur"}, status: true,
		columns: [][2]string{
			{"Placement", ".spec.placementName"},
			{"Resource-Snapshot-Index", ".spec.resourceSnapshotIndex"},
			{"Policy-Snapshot-Index", ".status.policySnapshotIndexUsed"},
			{"Initialized", cond("Initialized", "status")},
			{"Succeeded", cond("Succeeded", "status")},
			age,
		},
		rules: []string{"the spec of a staged update run is immutable but for state", "metadata.name must be a lowercase RFC 1123 subdomain"}},
	"ClusterApprovalRequest": {group: placementGroup, plural: "clusterapprovalrequests", shortNames: []string{"careq"}, status: true,
		columns: [][2]string{
			{"Update-Run", ".spec.parentStageRollout"},
			{"Stage", ".spec.targetStage"},
			{"Approved", cond("Approved", "status")},
			{"ApprovalAccepted", cond("ApprovalAccepted", "status")},
			age,
		},
		rules: []string{"the spec of an approval request is immutable"}},
	"ClusterResourcePlacementEviction": {group: placementGroup, plural: "clusterresourceplacementevictions", shortNames: []string{"crpe"}, status: true,
		columns: [][2]string{{"Valid", cond("Valid", "status")}, {"Executed", cond("Executed", "status")}},
		rules:   []string{"the spec of an eviction is immutable: delete and re-create the eviction instead"}},
	"ClusterResourcePlacementDisruptionBudget": {group: placementGroup, plural: "clusterresourceplacementdisruptionbudgets", shortNames: []string{"crpdb"},
		rules: []string{"exactly one of maxUnavailable and minAvailable must be set", "maxUnavailable must not be negative", "minAvailable must not be negative"}},
}

// TestCRDs: config/crd/bases holds exactly the kinds of the issue, each with its group,
// scope, short names, printer columns, status subresource and CEL rules.
func TestCRDs(t *testing.T) {
	crds := loadCRDs(t)
	for kind, crd := range crds {
		if crd.Spec.Group == "fleet.fleetsim.io" {
			continue // fleetsim's own kinds (machines, units): see TestFleetCRDs
		}
		if crd.Spec.Group == "multicluster.x-k8s.io" {
			continue // the cluster inventory's ClusterProfile: see apis/multicluster/v1alpha1
		}
		if _, ok := wantCRDs[kind]; !ok {
			t.Errorf("unexpected CRD for kind %s", kind)
		}
	}
	for kind, want := range wantCRDs {
		t.Run(kind, func(t *testing.T) {
			crd := crds[kind]
			if crd == nil {
				t.Fatalf("no CRD for %s in %s", kind, crdDir)
			}
			if crd.Spec.Group != want.group {
				t.Errorf("group %q, want %q", crd.Spec.Group, want.group)
			}
			if crd.Spec.Names.Plural != want.plural {
				t.Errorf("plural %q, want %q", crd.Spec.Names.Plural, want.plural)
			}
			scope := apiextensionsv1.ClusterScoped
			if want.namespaced {
				scope = apiextensionsv1.NamespaceScoped
			}
			if crd.Spec.Scope != scope {
				t.Errorf("scope %s, want %s", crd.Spec.Scope, scope)
			}
			if diff := cmp.Diff(want.shortNames, crd.Spec.Names.ShortNames); diff != "" {
				t.Errorf("short names (-want +got):\n%s", diff)
			}
			wantCategory := "fleet-placement"
			if want.group == clusterGroup {
				wantCategory = "fleet-cluster"
			}
			if diff := cmp.Diff([]string{"fleet", wantCategory}, crd.Spec.Names.Categories); diff != "" {
				t.Errorf("categories (-want +got):\n%s", diff)
			}
			fk, ok := kinds.Lookup(want.group, kind)
			if !ok {
				t.Fatalf("model/fleetapi does not list %s", kind)
			}
			var names []string
			var v apiextensionsv1.CustomResourceDefinitionVersion
			for _, ver := range crd.Spec.Versions {
				names = append(names, ver.Name)
				if !ver.Served || ver.Storage != (ver.Name == "v1beta1") {
					t.Errorf("version %s served=%v storage=%v, want served, stored only as v1beta1", ver.Name, ver.Served, ver.Storage)
				}
				if ver.Name == "v1beta1" {
					v = ver
				}
			}
			if diff := cmp.Diff(fk.Versions, names); diff != "" {
				t.Fatalf("versions (-want +got):\n%s", diff)
			}
			// KubeFleet's versions agree on their schemas, so the CRD serves them all
			// without conversion: every version must be the stored one but for its name.
			for _, ver := range crd.Spec.Versions {
				same := ver.DeepCopy()
				same.Name, same.Storage = v.Name, v.Storage
				if diff := cmp.Diff(&v, same); diff != "" {
					t.Errorf("version %s differs from v1beta1 (-v1beta1 +%s):\n%s", ver.Name, ver.Name, diff)
				}
			}
			if c := crd.Spec.Conversion; c != nil && c.Strategy != apiextensionsv1.NoneConverter {
				t.Errorf("conversion %s, want None", c.Strategy)
			}
			hasStatus := v.Subresources != nil && v.Subresources.Status != nil
			if hasStatus != want.status {
				t.Errorf("status subresource %v, want %v", hasStatus, want.status)
			}
			var cols [][2]string
			for _, c := range v.AdditionalPrinterColumns {
				cols = append(cols, [2]string{c.Name, c.JSONPath})
				wantType := "string"
				if c.Name == "Age" || c.Name == "Member-Agent-Last-Seen" {
					wantType = "date"
				}
				if c.Type != wantType {
					t.Errorf("column %s has type %s, want %s", c.Name, c.Type, wantType)
				}
				wantPriority := int32(0)
				if c.Name == "Allocatable-CPU" || c.Name == "Allocatable-Memory" {
					wantPriority = 1 // shown with -o wide
				}
				if c.Priority != wantPriority {
					t.Errorf("column %s has priority %d, want %d", c.Name, c.Priority, wantPriority)
				}
			}
			if diff := cmp.Diff(want.columns, cols); diff != "" {
				t.Errorf("printer columns (-want +got):\n%s", diff)
			}
			got := map[string]bool{}
			collectRules(v.Schema.OpenAPIV3Schema, got)
			for _, r := range want.rules {
				if !got[r] {
					t.Errorf("no CEL rule with message %q", r)
				}
			}
		})
	}
}

// collectRules gathers the messages of every CEL rule of a schema.
func collectRules(s *apiextensionsv1.JSONSchemaProps, into map[string]bool) {
	if s == nil {
		return
	}
	for _, r := range s.XValidations {
		into[r.Message] = true
	}
	for _, p := range s.Properties {
		collectRules(&p, into)
	}
	if s.Items != nil {
		collectRules(s.Items.Schema, into)
	}
	if s.AdditionalProperties != nil {
		collectRules(s.AdditionalProperties.Schema, into)
	}
}

// TestSchemeRegistersEveryKind: AddToScheme knows every kind that has a CRD, and its list.
func TestSchemeRegistersEveryKind(t *testing.T) {
	s := runtime.NewScheme()
	if err := clusterv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := placementv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for kind, want := range wantCRDs {
		gv := clusterv1beta1.GroupVersion
		if want.group == placementGroup {
			gv = placementv1beta1.GroupVersion
		}
		for _, k := range []string{kind, kind + "List"} {
			if !s.Recognizes(gv.WithKind(k)) {
				t.Errorf("the scheme does not know %s", gv.WithKind(k))
			}
		}
	}
}

// TestFleetCRDs: fleetsim's own group holds Machine and Unit, cluster-scoped, with a status
// subresource and the desired-state enum.
func TestFleetCRDs(t *testing.T) {
	crds := loadCRDs(t)
	for _, kind := range []string{"Machine", "Unit"} {
		crd := crds[kind]
		if crd == nil || crd.Spec.Group != "fleet.fleetsim.io" || crd.Spec.Scope != apiextensionsv1.ClusterScoped {
			t.Fatalf("no cluster-scoped CRD for %s in fleet.fleetsim.io", kind)
		}
		v := crd.Spec.Versions[0]
		if v.Name != "v1alpha1" || v.Subresources == nil || v.Subresources.Status == nil {
			t.Errorf("%s: version %s, want v1alpha1 with a status subresource", kind, v.Name)
		}
	}
	ds := crds["Unit"].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["desiredState"]
	var enum []string
	for _, e := range ds.Enum {
		enum = append(enum, strings.Trim(string(e.Raw), `"`))
	}
	if diff := cmp.Diff([]string{"inactive", "loaded", "launched"}, enum); diff != "" {
		t.Errorf("desiredState enum (-want +got):\n%s", diff)
	}
}
