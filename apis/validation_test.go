package apis_test

import (
	"fmt"
	"strings"
	"testing"
)

// A case submits obj (an update of old when old is set) and expects the API server to
// reject it with a message containing want, or to accept it when want is empty.
type admission struct {
	name      string
	old, obj  string
	want      string
	wantField string // the field path the error names, when it matters
}

func runAdmissions(t *testing.T, kind string, cases []admission) {
	t.Helper()
	srv := servers(t)[kind]
	if srv == nil {
		t.Fatalf("no CRD for %s", kind)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := decodeObject(t, c.obj)
			var old map[string]any
			if c.old != "" {
				old = decodeObject(t, c.old)
			}
			pruned, errs := srv.Admit(obj, old)
			if len(pruned) > 0 {
				t.Errorf("fields pruned as unknown: %v", pruned)
			}
			got := ""
			if len(errs) > 0 {
				got = errs.ToAggregate().Error()
			}
			switch {
			case c.want == "" && got != "":
				t.Errorf("rejected, want accepted:\n%s", got)
			case c.want != "" && got == "":
				t.Errorf("accepted, want rejected with %q", c.want)
			case c.want != "" && !strings.Contains(got, c.want):
				t.Errorf("rejected with\n%s\nwant a message containing %q", got, c.want)
			case c.wantField != "" && !strings.Contains(got, c.wantField+":"):
				t.Errorf("rejected with\n%s\nwant the error on %s", got, c.wantField)
			}
		})
	}
}

// crp builds a ClusterResourcePlacement around a policy and strategy (YAML at two spaces of
// indentation under spec; either may be empty).
func crp(policy, strategy string) string {
	s := `apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: crp-1
spec:
  resourceSelectors:
  - group: ""
    kind: Namespace
    name: app
    version: v1
`
	if policy != "" {
		s += "  policy:\n" + indentText(policy, 4)
	}
	if strategy != "" {
		s += "  strategy:\n" + indentText(strategy, 4)
	}
	return s
}

func indentText(s string, n int) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		b.WriteString(strings.Repeat(" ", n) + l + "\n")
	}
	return b.String()
}

func TestPlacementValidation(t *testing.T) {
	tolerations := func(ts ...string) string {
		s := "placementType: PickAll\ntolerations:\n"
		for _, t := range ts {
			s += "- " + t + "\n"
		}
		return s
	}
	runAdmissions(t, "ClusterResourcePlacement", []admission{
		{name: "no policy", obj: crp("", "")},
		{name: "PickFixed with tolerations", obj: crp("placementType: PickFixed\nclusterNames: [a]\ntolerations: [{key: k, operator: Exists}]", ""),
			want: "tolerations are not allowed when placementType is PickFixed"},
		{name: "PickAll with affinity and tolerations", obj: crp(`
placementType: PickAll
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - labelSelector:
          matchLabels: {env: prod}
        propertySelector:
          matchExpressions:
          - {name: kubernetes-fleet.io/node-count, operator: Ge, values: ["3"]}
tolerations:
- {key: gpu, operator: Exists}`, "")},
		{name: "PickN with everything", obj: crp(`
placementType: PickN
numberOfClusters: 2
affinity:
  clusterAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: -100
      preference:
        propertySorter: {name: resources.kubernetes-fleet.io/available-cpu, sortOrder: Descending}
topologySpreadConstraints:
- {topologyKey: region, whenUnsatisfiable: ScheduleAnyway}`, `
type: RollingUpdate
rollingUpdate: {maxUnavailable: 0, maxSurge: 1, unavailablePeriodSeconds: 2}
applyStrategy: {type: ServerSideApply, serverSideApplyConfig: {force: true}, whenToTakeOver: IfNoDiff}`)},
		{name: "PickN of zero clusters", obj: crp("placementType: PickN\nnumberOfClusters: 0", "")},
		{name: "PickFixed", obj: crp("placementType: PickFixed\nclusterNames: [member1, member2]", "type: External")},

		{name: "PickN without numberOfClusters", obj: crp("placementType: PickN", ""),
			want: "numberOfClusters is required when placementType is PickN", wantField: "spec.policy"},
		{name: "numberOfClusters with PickAll", obj: crp("numberOfClusters: 2", ""),
			want: "numberOfClusters is only allowed when placementType is PickN"},
		{name: "negative numberOfClusters", obj: crp("placementType: PickN\nnumberOfClusters: -1", ""),
			want: "spec.policy.numberOfClusters: Invalid value: -1: spec.policy.numberOfClusters in body should be greater than or equal to 0"},
		{name: "clusterNames with PickN", obj: crp("placementType: PickN\nnumberOfClusters: 1\nclusterNames: [a]", ""),
			want: "clusterNames is only allowed when placementType is PickFixed"},
		{name: "clusterNames with PickAll", obj: crp("clusterNames: [a]", ""),
			want: "clusterNames is only allowed when placementType is PickFixed"},
		{name: "affinity with PickFixed", obj: crp(`
placementType: PickFixed
clusterNames: [a]
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms: [{labelSelector: {matchLabels: {env: prod}}}]`, ""),
			want: "affinity is not allowed when placementType is PickFixed"},
		{name: "topology spread with PickAll", obj: crp("topologySpreadConstraints: [{topologyKey: region}]", ""),
			want: "topologySpreadConstraints is only allowed when placementType is PickN"},
		{name: "unknown placement type", obj: crp("placementType: PickSome", ""),
			want: `spec.policy.placementType: Unsupported value: "PickSome": supported values: "PickAll", "PickN", "PickFixed"`},
		{name: "more than 100 cluster names", obj: crp("placementType: PickFixed\nclusterNames: ["+strings.Repeat("c,", 100)+"c]", ""),
			want: "spec.policy.clusterNames: Too many: 101: must have at most 100 items"},
		{name: "maxSkew 0", obj: crp("placementType: PickN\nnumberOfClusters: 2\ntopologySpreadConstraints: [{topologyKey: region, maxSkew: 0}]", ""),
			want: "should be greater than or equal to 1"},
		{name: "weight out of range", obj: crp(`
placementType: PickN
numberOfClusters: 1
affinity:
  clusterAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - {weight: 101, preference: {labelSelector: {matchLabels: {a: b}}}}`, ""),
			want: "should be less than or equal to 100"},
		{name: "property selector with two values", obj: crp(`
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - propertySelector:
          matchExpressions: [{name: kubernetes-fleet.io/node-count, operator: Ge, values: ["3", "4"]}]`, ""),
			want: "values: Too many: 2: must have at most 1 item"},
		{name: "property sorter in a required term", obj: crp(`
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - propertySorter: {name: cpu, sortOrder: Ascending}`, ""),
			want: "propertySorter is only allowed in preferred terms"},
		{name: "property selector in a preferred term", obj: crp(`
placementType: PickN
numberOfClusters: 1
affinity:
  clusterAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 10
      preference:
        propertySelector:
          matchExpressions: [{name: kubernetes-fleet.io/node-count, operator: Ge, values: ["3"]}]`, ""),
			want: "propertySelector is only allowed in required terms"},
		{name: "unknown property operator", obj: crp(`
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - propertySelector:
          matchExpressions: [{name: n, operator: In, values: ["3"]}]`, ""),
			want: `Unsupported value: "In"`},
		{name: "toleration without key needs Exists", obj: crp(tolerations("{value: v}"), ""),
			want: "operator must be Exists when key is empty"},
		{name: "toleration Exists with value", obj: crp(tolerations("{key: k, operator: Exists, value: v}"), ""),
			want: "value must be empty when operator is Exists"},
		{name: "toleration effect NoExecute", obj: crp(tolerations("{key: k, value: v, effect: NoExecute}"), ""),
			want: `Unsupported value: "NoExecute": supported values: "NoSchedule"`},
		{name: "selector with name and labelSelector", obj: strings.Replace(crp("", ""), "    name: app\n", "    name: app\n    labelSelector: {matchLabels: {a: b}}\n", 1),
			want: "name and labelSelector are mutually exclusive"},
		{name: "no resource selectors", obj: strings.Replace(crp("", ""), `  resourceSelectors:
  - group: ""
    kind: Namespace
    name: app
    version: v1
`, "  resourceSelectors: []\n", 1),
			want: "spec.resourceSelectors: Invalid value: 0: spec.resourceSelectors in body should have at least 1 items"},
		{name: "revision history limit 0", obj: crp("", "") + "  revisionHistoryLimit: 0\n",
			want: "spec.revisionHistoryLimit: Invalid value: 0: spec.revisionHistoryLimit in body should be greater than or equal to 1"},
		{name: "maxUnavailable and maxSurge both 0", obj: crp("", "rollingUpdate: {maxUnavailable: 0, maxSurge: \"0%\"}"),
			want: "maxSurge cannot be 0 when maxUnavailable is 0"},
		{name: "maxUnavailable over 100%", obj: crp("", "rollingUpdate: {maxUnavailable: \"150%\"}"),
			want: "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"150%\": spec.strategy.rollingUpdate.maxUnavailable in body should match"},
		{name: "negative maxSurge", obj: crp("", "rollingUpdate: {maxSurge: -1}"),
			want: "maxSurge must not be negative"},
		{name: "unknown rollout type", obj: crp("", "type: Canary"),
			want: `spec.strategy.type: Unsupported value: "Canary": supported values: "RollingUpdate", "External"`},
		{name: "unknown apply strategy", obj: crp("", "applyStrategy: {type: ForceApply}"),
			want: `spec.strategy.applyStrategy.type: Unsupported value: "ForceApply"`},
		{name: "unknown comparison option (DC-5 spelling)", obj: crp("", "applyStrategy: {comparisonOption: partialComparison}"),
			want: `Unsupported value: "partialComparison"`},

		// Updates: transition rules.
		{name: "placement type changed", old: crp("placementType: PickAll", ""), obj: crp("placementType: PickN\nnumberOfClusters: 1", ""),
			want: "placementType is immutable"},
		{name: "defaulted placement type made explicit", old: crp("tolerations: [{key: a, operator: Exists}]", ""), obj: crp("placementType: PickAll\ntolerations: [{key: a, operator: Exists}]", "")},
		{name: "numberOfClusters scaled", old: crp("placementType: PickN\nnumberOfClusters: 1", ""), obj: crp("placementType: PickN\nnumberOfClusters: 3", "")},
		{name: "toleration appended", old: crp(tolerations("{key: a, operator: Exists}"), ""), obj: crp(tolerations("{key: a, operator: Exists}", "{key: b, value: c}"), "")},
		{name: "toleration removed", old: crp(tolerations("{key: a, operator: Exists}", "{key: b, value: c}"), ""), obj: crp(tolerations("{key: a, operator: Exists}"), ""),
			want: "tolerations can only be added: existing tolerations cannot be changed or removed"},
		{name: "toleration changed", old: crp(tolerations("{key: a, value: b}"), ""), obj: crp(tolerations("{key: a, value: c}"), ""),
			want: "tolerations can only be added"},
		{name: "all tolerations dropped", old: crp(tolerations("{key: a, operator: Exists}"), ""), obj: crp("placementType: PickAll", ""),
			want: "tolerations can only be added"},
		{name: "PickAll policy removed", old: crp("affinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {clusterSelectorTerms: [{labelSelector: {matchLabels: {a: b}}}]}}}", ""), obj: crp("", "")},
		{name: "PickN policy removed", old: crp("placementType: PickN\nnumberOfClusters: 1", ""), obj: crp("", ""),
			want: "policy can only be removed from a PickAll placement without tolerations"},
		{name: "policy with tolerations removed", old: crp(tolerations("{key: a, operator: Exists}"), ""), obj: crp("", ""),
			want: "policy can only be removed from a PickAll placement without tolerations"},
		{name: "PickAll policy added", old: crp("", ""), obj: crp("placementType: PickAll\ntolerations: [{key: a, operator: Exists}]", "")},
		{name: "PickN policy added", old: crp("", ""), obj: crp("placementType: PickN\nnumberOfClusters: 1", ""),
			want: "placementType is immutable: a placement created without a policy is PickAll"},

		// statusReportingScope (issue 17).
		{name: "NamespaceAccessible with one namespace", obj: crp("", "") + "  statusReportingScope: NamespaceAccessible\n"},
		{name: "NamespaceAccessible with two namespaces", obj: strings.Replace(crp("", ""), "  resourceSelectors:\n",
			"  resourceSelectors:\n  - {group: \"\", version: v1, kind: Namespace, name: other}\n", 1) + "  statusReportingScope: NamespaceAccessible\n",
			want: "when statusReportingScope is NamespaceAccessible, exactly one resourceSelector with kind 'Namespace' is required"},
		{name: "unknown statusReportingScope", obj: crp("", "") + "  statusReportingScope: Everywhere\n",
			want: `spec.statusReportingScope: Unsupported value: "Everywhere"`},
		{name: "statusReportingScope changed", old: crp("", "") + "  statusReportingScope: ClusterScopeOnly\n", obj: crp("", "") + "  statusReportingScope: NamespaceAccessible\n",
			want: "statusReportingScope is immutable"},
		{name: "reportBackStrategy Disabled", obj: crp("", "reportBackStrategy: {type: Disabled}")},
		{name: "reportBackStrategy Mirror to the Work API", obj: crp("", "reportBackStrategy: {type: Mirror, destination: WorkAPI}")},
		{name: "reportBackStrategy Mirror without destination", obj: crp("", "reportBackStrategy: {type: Mirror}"),
			want: "when reportBackStrategy.type is 'Mirror', a destination must be specified"},
		{name: "reportBackStrategy Mirror to the original resource", obj: crp("", "reportBackStrategy: {type: Mirror, destination: OriginalResource}"),
			want: "reportBackStrategy.destination OriginalResource is not supported by this hub yet"},
		{name: "reportBackStrategy of an unknown type", obj: crp("", "reportBackStrategy: {type: Copy}"),
			want: `spec.strategy.reportBackStrategy.type: Unsupported value: "Copy"`},
		{name: "statusReportingScope kept", old: crp("", "") + "  statusReportingScope: NamespaceAccessible\n", obj: crp("placementType: PickAll", "") + "  statusReportingScope: NamespaceAccessible\n"},
	})
}

func TestMemberClusterValidation(t *testing.T) {
	mc := func(spec string) string {
		return "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata:\n  name: member1\nspec:\n  identity: {kind: ServiceAccount, name: agent, namespace: fleet-system}\n" + indentText(spec, 2)
	}
	runAdmissions(t, "MemberCluster", []admission{
		{name: "minimal", obj: mc("")},
		{name: "taint", obj: mc("taints: [{key: k, value: v, effect: NoSchedule}]")},
		{name: "63-character name", obj: strings.Replace(mc(""), "member1", strings.Repeat("m", 63), 1)},
		{name: "64-character name", obj: strings.Replace(mc(""), "member1", strings.Repeat("m", 64), 1), want: "metadata.name must be at most 63 characters"},
		{name: "heartbeat too long", obj: mc("heartbeatPeriodSeconds: 601"),
			want: "spec.heartbeatPeriodSeconds: Invalid value: 601: spec.heartbeatPeriodSeconds in body should be less than or equal to 600"},
		{name: "heartbeat zero", obj: mc("heartbeatPeriodSeconds: 0"), want: "should be greater than or equal to 1"},
		{name: "taint effect NoExecute", obj: mc("taints: [{key: k, effect: NoExecute}]"),
			want: `spec.taints[0].effect: Unsupported value: "NoExecute": supported values: "NoSchedule"`},
		{name: "taint without effect", obj: mc("taints: [{key: k}]"), want: "spec.taints[0].effect: Required value"},
		{name: "no identity", obj: "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata:\n  name: m\nspec: {}\n",
			want: "spec.identity: Required value"},
		{name: "user identity", obj: "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata:\n  name: m\nspec:\n  identity: {kind: User, name: agent}\n"},
		{name: "identity of an unknown kind", obj: "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata:\n  name: m\nspec:\n  identity: {kind: Robot, name: agent}\n",
			want: "identity.kind must be ServiceAccount, User or Group"},
		{name: "service account without namespace", obj: "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata:\n  name: m\nspec:\n  identity: {kind: ServiceAccount, name: agent}\n",
			want: "identity.namespace is required for a ServiceAccount"},
		{name: "deleteOptions Skip", obj: mc("deleteOptions: {validationMode: Skip}")},
		{name: "deleteOptions Strict", obj: mc("deleteOptions: {validationMode: Strict}")},
		{name: "deleteOptions of an unknown mode", obj: mc("deleteOptions: {validationMode: Force}"),
			want: `spec.deleteOptions.validationMode: Unsupported value: "Force": supported values: "Skip", "Strict"`},
	})
	runAdmissions(t, "InternalMemberCluster", []admission{
		{name: "join", obj: "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: InternalMemberCluster\nmetadata: {name: m, namespace: fleet-member-m}\nspec: {state: Join}\n"},
		{name: "unknown state", obj: "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: InternalMemberCluster\nmetadata: {name: m, namespace: fleet-member-m}\nspec: {state: Joining}\n",
			want: `spec.state: Unsupported value: "Joining": supported values: "Join", "Leave"`},
	})
}

func TestSnapshotAndBindingValidation(t *testing.T) {
	pss := func(policy, status string) string {
		return "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterSchedulingPolicySnapshot\nmetadata: {name: crp-1-0}\nspec:\n  policy: " + policy + "\n  policyHash: YWJj\n" + status
	}
	runAdmissions(t, "ClusterSchedulingPolicySnapshot", []admission{
		{name: "status written", old: pss("{placementType: PickN}", ""), obj: pss("{placementType: PickN}", "status: {observedCRPGeneration: 2}\n")},
		{name: "policy changed", old: pss("{placementType: PickN}", ""), obj: pss("{placementType: PickAll}", ""),
			want: "the spec of a policy snapshot is immutable"},
	})
	rss := func(value string) string {
		return `apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceSnapshot
metadata: {name: crp-1-0-snapshot, labels: {kubernetes-fleet.io/is-latest-snapshot: "true"}}
spec:
  selectedResources:
  - {apiVersion: v1, kind: Namespace, metadata: {name: app}}
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: app}, data: {key: ` + value + `}}
`
	}
	runAdmissions(t, "ClusterResourceSnapshot", []admission{
		{name: "no longer latest", old: rss("v1"), obj: strings.Replace(rss("v1"), `"true"`, `"false"`, 1)},
		{name: "content changed", old: rss("v1"), obj: rss("v2"), want: "the spec of a resource snapshot is immutable"},
	})
	rb := func(state string) string {
		return "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourceBinding\nmetadata: {name: crp-1-m-12345678}\nspec: {state: " + state + ", targetCluster: m, clusterDecision: {clusterName: m, selected: true, reason: picked}}\n"
	}
	runAdmissions(t, "ClusterResourceBinding", []admission{
		{name: "bound", obj: rb("Bound")},
		{name: "unknown state", obj: rb("Pending"), want: `spec.state: Unsupported value: "Pending": supported values: "Scheduled", "Bound", "Unscheduled"`},
	})
}

func TestOverrideValidation(t *testing.T) {
	cro := func(selector, rule string) string {
		return `apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceOverride
metadata: {name: cro-1}
spec:
  clusterResourceSelectors:
  - ` + selector + `
  policy:
    overrideRules:
    - ` + rule + "\n"
	}
	sel := "{group: rbac.authorization.k8s.io, version: v1, kind: ClusterRole, name: secret-reader}"
	patch := func(op, path, value string) string {
		s := fmt.Sprintf("{clusterSelector: {clusterSelectorTerms: []}, jsonPatchOverrides: [{op: %s, path: %q", op, path)
		if value != "" {
			s += ", value: " + value
		}
		return s + "}]}"
	}
	runAdmissions(t, "ClusterResourceOverride", []admission{
		{name: "add a label", obj: cro(sel, patch("add", "/metadata/labels/a", `"b"`))},
		{name: "placement scope Cluster", obj: strings.Replace(cro(sel, patch("add", "/metadata/labels/a", `"b"`)), "spec:\n", "spec:\n  placement: {name: crp, scope: Cluster}\n", 1)},
		{name: "placement scope Namespaced", obj: strings.Replace(cro(sel, patch("add", "/metadata/labels/a", `"b"`)), "spec:\n", "spec:\n  placement: {name: crp, scope: Namespaced}\n", 1),
			want: "a ClusterResourceOverride refers to a cluster-scoped placement"},
		{name: "delete", obj: cro(sel, "{clusterSelector: {clusterSelectorTerms: [{labelSelector: {matchLabels: {env: test}}}]}, overrideType: Delete}")},
		{name: "selector by label", obj: cro("{group: '', version: v1, kind: Namespace, labelSelector: {matchLabels: {a: b}}}", patch("add", "/metadata/labels/a", `"b"`)),
			want: "labelSelector is not supported: an override selects resources by name"},
		{name: "selector without name", obj: cro("{group: '', version: v1, kind: Namespace}", patch("add", "/metadata/labels/a", `"b"`)),
			want: "name is required: an override selects resources by name"},
		{name: "path without slash", obj: cro(sel, patch("add", "spec/replicas", "1")), want: "path must start with /"},
		{name: "path with empty segment", obj: cro(sel, patch("add", "/spec//replicas", "1")), want: "path must not contain empty segments"},
		{name: "path to kind", obj: cro(sel, patch("replace", "/kind", `"Role"`)), want: "path cannot point at a TypeMeta field"},
		{name: "path to status", obj: cro(sel, patch("remove", "/status/conditions", "")), want: "path cannot point at any field under status"},
		{name: "path to metadata name", obj: cro(sel, patch("replace", "/metadata/name", `"x"`)),
			want: "path cannot point at a metadata field other than labels and annotations"},
		{name: "unknown op", obj: cro(sel, patch("move", "/spec/a", "1")), want: `Unsupported value: "move": supported values: "add", "remove", "replace"`},
		{name: "JSONPatch without patches", obj: cro(sel, "{clusterSelector: {clusterSelectorTerms: []}}"),
			want: "jsonPatchOverrides is required when overrideType is JSONPatch"},
		{name: "Delete with patches", obj: cro(sel, "{overrideType: Delete, jsonPatchOverrides: [{op: remove, path: /a}]}"),
			want: "jsonPatchOverrides is only allowed when overrideType is JSONPatch"},
		{name: "property selector in cluster selector", obj: cro(sel, `{clusterSelector: {clusterSelectorTerms: [{propertySelector: {matchExpressions: [{name: n, operator: Eq, values: ["1"]}]}}]}, overrideType: Delete}`),
			want: "only labelSelector is supported in an override cluster selector"},
		{name: "no rules", obj: strings.Replace(cro(sel, "x"), "    overrideRules:\n    - x\n", "    overrideRules: []\n", 1),
			want: "spec.policy.overrideRules: Invalid value: 0: spec.policy.overrideRules in body should have at least 1 items"},
	})
	ro := func(kind string) string {
		return `apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourceOverride
metadata: {name: ro-1, namespace: app}
spec:
  resourceSelectors: [{group: "", version: v1, kind: ` + kind + `, name: x}]
  policy:
    overrideRules: [{overrideType: Delete}]
`
	}
	runAdmissions(t, "ResourceOverride", []admission{
		{name: "configmap", obj: ro("ConfigMap")},
		{name: "namespace", obj: ro("Namespace"), want: "a ResourceOverride selects namespaced resources"},
	})
	snap := func(name string) string {
		return `apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceOverrideSnapshot
metadata: {name: cro-1-0, labels: {kubernetes-fleet.io/override-tracking: cro-1, kubernetes-fleet.io/is-latest-snapshot: "true"}}
spec:
  overrideHash: YWJj
  overrideSpec:
    clusterResourceSelectors: [{group: "", version: v1, kind: Namespace, name: ` + name + `}]
    policy:
      overrideRules: [{clusterSelector: {clusterSelectorTerms: []}, jsonPatchOverrides: [{op: add, path: /metadata/labels/a, value: {x: [1, 2]}}]}]
`
	}
	runAdmissions(t, "ClusterResourceOverrideSnapshot", []admission{
		{name: "relabelled", old: snap("app"), obj: strings.Replace(snap("app"), `"true"`, `"false"`, 1)},
		{name: "spec changed", old: snap("app"), obj: snap("other"), want: "the spec of an override snapshot is immutable"},
	})
}

func TestStagedUpdateValidation(t *testing.T) {
	strategy := func(stages string) string {
		return "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterStagedUpdateStrategy\nmetadata: {name: s}\nspec:\n  stages:\n" + indentText(stages, 2)
	}
	runAdmissions(t, "ClusterStagedUpdateStrategy", []admission{
		{name: "two stages", obj: strategy("- {name: staging, afterStageTasks: [{type: TimedWait, waitTime: 1m}, {type: Approval}]}\n- {name: prod, sortingLabelKey: order}")},
		{name: "duplicate stage names", obj: strategy("- {name: a}\n- {name: a}"), want: "stage names must be unique"},
		{name: "stage name with capitals", obj: strategy("- {name: Canary}"), want: `spec.stages[0].name: Invalid value: "Canary": spec.stages[0].name in body should match '^[a-z0-9]+$'`},
		{name: "two approvals", obj: strategy("- {name: a, afterStageTasks: [{type: Approval}, {type: Approval}]}"),
			want: "at most one after-stage task of each type"},
		{name: "three tasks", obj: strategy("- {name: a, afterStageTasks: [{type: Approval}, {type: TimedWait, waitTime: 1m}, {type: Approval}]}"),
			want: "must have at most 2 items"},
		{name: "timed wait without time", obj: strategy("- {name: a, afterStageTasks: [{type: TimedWait}]}"),
			want: "waitTime is required for a TimedWait task"},
		{name: "wait time in days", obj: strategy("- {name: a, afterStageTasks: [{type: TimedWait, waitTime: 1d}]}"),
			want: "spec.stages[0].afterStageTasks[0].waitTime in body should match"},
		{name: "wait time 0", obj: strategy("- {name: a, afterStageTasks: [{type: TimedWait, waitTime: '0'}]}"),
			want: "spec.stages[0].afterStageTasks[0].waitTime in body should match"},
		{name: "wait time 01h", obj: strategy("- {name: a, afterStageTasks: [{type: TimedWait, waitTime: 01h}]}"),
			want: "spec.stages[0].afterStageTasks[0].waitTime in body should match"},
		{name: "wait time 1h30m and 0s", obj: strategy("- {name: a, afterStageTasks: [{type: TimedWait, waitTime: 1h30m}]}\n- {name: b, afterStageTasks: [{type: TimedWait, waitTime: 0s}]}")},
		{name: "maxConcurrency 2 and 50%", obj: strategy("- {name: a, maxConcurrency: 2}\n- {name: b, maxConcurrency: 50%}")},
		{name: "maxConcurrency 0", obj: strategy("- {name: a, maxConcurrency: 0}"), want: "maxConcurrency must be a number of at least 1 or a percentage"},
		{name: "maxConcurrency 0%", obj: strategy("- {name: a, maxConcurrency: 0%}"), want: "maxConcurrency in body should match"},
		{name: "maxConcurrency 101%", obj: strategy("- {name: a, maxConcurrency: 101%}"), want: "maxConcurrency in body should match"},
		{name: "approval before a stage", obj: strategy("- {name: a, beforeStageTasks: [{type: Approval}]}")},
		{name: "timed wait before a stage", obj: strategy("- {name: a, beforeStageTasks: [{type: TimedWait, waitTime: 1m}]}"),
			want: "only an Approval task may run before a stage"},
		{name: "two tasks before a stage", obj: strategy("- {name: a, beforeStageTasks: [{type: Approval}, {type: Approval}]}"),
			want: "must have at most 1 item"},
		{name: "approval with wait time", obj: strategy("- {name: a, afterStageTasks: [{type: Approval, waitTime: 1h}]}"),
			want: "waitTime is not allowed for an Approval task"},
		{name: "no stages", obj: strings.Replace(strategy("- x"), "  stages:\n  - x\n", "  stages: []\n", 1), want: "should have at least 1 items"},
		{name: "32 stages", obj: strategy(strings.Repeat("- {name: a}\n", 32)), want: "must have at most 31 items"},
	})
	run := func(name, index string) string {
		return "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterStagedUpdateRun\nmetadata: {name: " + name + "}\nspec: {placementName: example-placement, resourceSnapshotIndex: \"" + index + "\", stagedRolloutStrategyName: example-strategy}\n"
	}
	noIndex := strings.Replace(run("r", ""), `resourceSnapshotIndex: "", `, "", 1)
	withState := func(obj, state string) string {
		return strings.Replace(obj, "stagedRolloutStrategyName: example-strategy}", "stagedRolloutStrategyName: example-strategy, state: "+state+"}", 1)
	}
	runAdmissions(t, "ClusterStagedUpdateRun", []admission{
		{name: "status written", old: run("example-run", "0"), obj: run("example-run", "0") + "status: {policySnapshotIndexUsed: \"0\", policyObservedClusterCount: 3}\n"},
		{name: "spec changed", old: run("example-run", "0"), obj: run("example-run", "1"), want: "the spec of a staged update run is immutable"},
		{name: "no index: the latest", obj: noIndex},
		{name: "no index, index used reported", old: noIndex, obj: noIndex + "status: {resourceSnapshotIndexUsed: \"2\"}\n"},
		{name: "index set later", old: noIndex, obj: run("r", "2"), want: "the spec of a staged update run is immutable"},
		{name: "index removed", old: run("r", "2"), obj: noIndex, want: "the spec of a staged update run is immutable"},
		{name: "initialize, then run, then stop", old: withState(run("r", "0"), "Initialize"), obj: withState(run("r", "0"), "Run")},
		{name: "run to stop", old: withState(run("r", "0"), "Run"), obj: withState(run("r", "0"), "Stop")},
		{name: "no state to stop", old: run("r", "0"), obj: withState(run("r", "0"), "Stop")},
		{name: "back to initialize", old: withState(run("r", "0"), "Stop"), obj: withState(run("r", "0"), "Initialize"),
			want: "state cannot go back to Initialize"},
		{name: "unknown state", obj: withState(run("r", "0"), "Pause"), want: `spec.state: Unsupported value: "Pause"`},
		{name: "63-character name", obj: run(strings.Repeat("r", 63), "0")},
		{name: "64-character name", obj: run(strings.Repeat("r", 64), "0"), want: "metadata.name must be at most 63 characters"},
		{name: "name not RFC 1123", obj: run("Example_Run", "0"), want: "metadata.name must be a lowercase RFC 1123 subdomain"},
		{name: "missing strategy", obj: "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterStagedUpdateRun\nmetadata: {name: r}\nspec: {placementName: p, resourceSnapshotIndex: \"0\"}\n",
			want: "spec.stagedRolloutStrategyName: Required value"},
		{name: "placement name too long", obj: strings.Replace(run("r", "0"), "example-placement", strings.Repeat("p", 256), 1),
			want: "spec.placementName: Too long: may not be more than 255"},
	})
	approval := func(stage, status string) string {
		return "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterApprovalRequest\nmetadata: {name: example-run-canary}\nspec: {parentStageRollout: example-run, targetStage: " + stage + "}\n" + status
	}
	approved := `status:
  conditions: [{type: Approved, status: "True", reason: lgtm, message: lgtm, lastTransitionTime: "2025-03-12T23:22:55Z", observedGeneration: 1}]
`
	runAdmissions(t, "ClusterApprovalRequest", []admission{
		{name: "approved", old: approval("canary", ""), obj: approval("canary", approved)},
		{name: "retargeted", old: approval("canary", ""), obj: approval("production", ""), want: "the spec of an approval request is immutable"},
	})
}

func TestEvictionValidation(t *testing.T) {
	ev := func(cluster, status string) string {
		return "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacementEviction\nmetadata: {name: test-eviction}\nspec: {placementName: test-crp, clusterName: " + cluster + "}\n" + status
	}
	valid := `status:
  conditions: [{type: Valid, status: "True", reason: ClusterResourcePlacementEvictionValid, message: Eviction is valid, lastTransitionTime: "2025-01-21T15:52:29Z"}]
`
	runAdmissions(t, "ClusterResourcePlacementEviction", []admission{
		{name: "status written", old: ev("kind-cluster-1", ""), obj: ev("kind-cluster-1", valid)},
		{name: "retargeted", old: ev("kind-cluster-1", ""), obj: ev("kind-cluster-2", ""),
			want: "the spec of an eviction is immutable: delete and re-create the eviction instead"},
		{name: "cluster name too long", obj: ev(strings.Repeat("c", 256), ""), want: "spec.clusterName: Too long: may not be more than 255"},
		{name: "no placement", obj: "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacementEviction\nmetadata: {name: e}\nspec: {clusterName: c}\n",
			want: "spec.placementName: Required value"},
	})
	pdb := func(spec string) string {
		return "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacementDisruptionBudget\nmetadata: {name: test-crp}\nspec: " + spec + "\n"
	}
	runAdmissions(t, "ClusterResourcePlacementDisruptionBudget", []admission{
		{name: "minAvailable", obj: pdb("{minAvailable: 1}")},
		{name: "minAvailable percent", obj: pdb(`{minAvailable: "50%"}`)},
		{name: "maxUnavailable 0", obj: pdb("{maxUnavailable: 0}")},
		{name: "both", obj: pdb("{minAvailable: 1, maxUnavailable: 1}"), want: "exactly one of maxUnavailable and minAvailable must be set"},
		{name: "neither", obj: pdb("{}"), want: "exactly one of maxUnavailable and minAvailable must be set"},
		{name: "not a number", obj: pdb(`{maxUnavailable: "one"}`), want: `spec.maxUnavailable: Invalid value: "one": spec.maxUnavailable in body should match`},
		{name: "negative", obj: pdb(`{minAvailable: -1}`), want: "minAvailable must not be negative"},
	})
}

// TestDefaults: the API server fills in what KubeFleet's CRDs default, so `kubectl get -o
// yaml` shows the same object on both hubs.
func TestDefaults(t *testing.T) {
	obj := decodeObject(t, crp("placementType: PickN\nnumberOfClusters: 2\ntopologySpreadConstraints: [{topologyKey: env}]", ""))
	if _, errs := servers(t)["ClusterResourcePlacement"].Admit(obj, nil); len(errs) > 0 {
		t.Fatal(errs)
	}
	tsc := obj["spec"].(map[string]any)["policy"].(map[string]any)["topologySpreadConstraints"].([]any)[0].(map[string]any)
	if got := tsc["whenUnsatisfiable"]; got != "DoNotSchedule" {
		t.Errorf("whenUnsatisfiable defaults to %v, want DoNotSchedule", got)
	}
}

// TestIssue17Defaults: statusReportingScope defaults to ClusterScopeOnly and a MemberCluster's
// deleteOptions.validationMode to Strict, as KubeFleet's CRDs default them.
func TestIssue17Defaults(t *testing.T) {
	obj := decodeObject(t, crp("", ""))
	if _, errs := servers(t)["ClusterResourcePlacement"].Admit(obj, nil); len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := obj["spec"].(map[string]any)["statusReportingScope"]; got != "ClusterScopeOnly" {
		t.Errorf("statusReportingScope defaults to %v, want ClusterScopeOnly", got)
	}
	mc := decodeObject(t, "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata:\n  name: m\nspec:\n  identity: {kind: User, name: agent}\n  deleteOptions: {}\n")
	if _, errs := servers(t)["MemberCluster"].Admit(mc, nil); len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := mc["spec"].(map[string]any)["deleteOptions"].(map[string]any)["validationMode"]; got != "Strict" {
		t.Errorf("deleteOptions.validationMode defaults to %v, want Strict", got)
	}
}
