package override_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Fixtures from the KubeFleet documentation; brackets name the section each comes from.

// secretReader is the ClusterRole of the CRO how-to [Using the ClusterResourceOverride API › The ClusterResourceSelector object supports the following fields].
const secretReader = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: secret-reader
rules:
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "watch", "list"]
`

// croHeader is the CRO how-to's placement and selector [Using the ClusterResourceOverride API › The ClusterResourceSelector object supports the following fields]; each example adds a policy.
const croHeader = `
apiVersion: placement.kubernetes-fleet.io/v1alpha1
kind: ClusterResourceOverride
metadata:
  name: example-cro
spec:
  placement:
    name: crp-example
  clusterResourceSelectors:
    - group: rbac.authorization.k8s.io
      kind: ClusterRole
      version: v1
      name: secret-reader
`

// croOverrideLabels: "Example: Override Labels" [Using the ClusterResourceOverride API › JSON Patch Override].
const croOverrideLabels = croHeader + `
  policy:
    overrideRules:
      - clusterSelector:
          clusterSelectorTerms:
            - labelSelector:
                matchLabels:
                  env: prod
        jsonPatchOverrides:
          - op: add
            path: /metadata/labels
            value:
              {"cluster-name":"${MEMBER-CLUSTER-NAME}"}
`

// croRemoveVerb: "Example: Remove Verbs" [Using the ClusterResourceOverride API › JSON Patch Override].
const croRemoveVerb = croHeader + `
  policy:
    overrideRules:
      - clusterSelector:
          clusterSelectorTerms:
            - labelSelector:
                matchLabels:
                  env: prod
        jsonPatchOverrides:
          - op: remove
            path: /rules/0/verbs/2
`

// croDelete: "Example: Delete Selected Resource" [Using the ClusterResourceOverride API › Delete].
const croDelete = croHeader + `
  policy:
    overrideRules:
      - clusterSelector:
          clusterSelectorTerms:
            - labelSelector:
                matchLabels:
                  env: test
        overrideType: Delete
`

// croMultiplePatches: "Multiple Override Patches" [Using the ClusterResourceOverride API › Multiple Override Patches].
const croMultiplePatches = croHeader + `
  policy:
    overrideRules:
      - clusterSelector:
          clusterSelectorTerms:
            - labelSelector:
                matchLabels:
                  env: prod
        jsonPatchOverrides:
          - op: remove
            path: /rules/0/verbs/2
          - op: remove
            path: /rules/0/verbs/1
`

// myDeployment is the RO how-to's Deployment [Using the ResourceOverride API › The ResourceSelector object supports the following fields], trimmed of defaults.
const myDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: my-deployment
  namespace: test-namespace
spec:
  replicas: 2
  selector:
    matchLabels:
      app: test-nginx
  template:
    metadata:
      labels:
        app: test-nginx
    spec:
      containers:
      - image: nginx:1.14.2
        imagePullPolicy: IfNotPresent
        name: nginx
        ports:
        - containerPort: 80
          protocol: TCP
`

// roHeader is the RO how-to's placement and selector [Using the ResourceOverride API › The ResourceSelector object supports the following fields].
const roHeader = `
apiVersion: placement.kubernetes-fleet.io/v1alpha1
kind: ResourceOverride
metadata:
  name: example-ro
  namespace: test-namespace
spec:
  placement:
    name: crp-example
  resourceSelectors:
    -  group: apps
       kind: Deployment
       version: v1
       name: my-deployment
`

// roOverrideLabels [Using the ResourceOverride API › The jsonPatchOverrides field supports the following fields].
const roOverrideLabels = roHeader + `
  policy:
    overrideRules:
      - clusterSelector:
          clusterSelectorTerms:
            - labelSelector:
                matchLabels:
                  env: prod
        jsonPatchOverrides:
          - op: add
            path: /metadata/labels
            value:
              {"cluster-name":"${MEMBER-CLUSTER-NAME}"}
`

// roOverrideImage [Using the ResourceOverride API › The jsonPatchOverrides field supports the following fields].
const roOverrideImage = roHeader + `
  policy:
    overrideRules:
      - clusterSelector:
          clusterSelectorTerms:
            - labelSelector:
                matchLabels:
                  env: prod
        jsonPatchOverrides:
          - op: replace
            path: /spec/template/spec/containers/0/image
            value: "nginx:1.20.0"
`

// roDelete [Using the ResourceOverride API › Delete].
const roDelete = roHeader + `
  policy:
    overrideRules:
      - clusterSelector:
          clusterSelectorTerms:
            - labelSelector:
                matchLabels:
                  env: test
        overrideType: Delete
`

// roMultipleRules [Using the ResourceOverride API › Multiple Override Rules].
const roMultipleRules = roHeader + `
  policy:
    overrideRules:
      - clusterSelector:
          clusterSelectorTerms:
            - labelSelector:
                matchLabels:
                  env: prod
        jsonPatchOverrides:
          - op: replace
            path: /spec/template/spec/containers/0/image
            value: "nginx:1.20.0"
      - clusterSelector:
          clusterSelectorTerms:
            - labelSelector:
                matchLabels:
                  env: test
        jsonPatchOverrides:
          - op: replace
            path: /spec/template/spec/containers/0/image
            value: "nginx:latest"
`

// The concept page's examples: a CRO on the namespace and an RO on the ConfigMap [Override › Examples].
const appConfig1 = `
apiVersion: v1
data:
  data: test
kind: ConfigMap
metadata:
  name: app-config-1
  namespace: application-1
`

const cro1Namespace = `
apiVersion: placement.kubernetes-fleet.io/v1alpha1
kind: ClusterResourceOverride
metadata:
  finalizers:
    - kubernetes-fleet.io/override-cleanup
  generation: 1
  name: cro-1
spec:
  placement:
    name: crp-example
  clusterResourceSelectors:
    - group: ""
      kind: Namespace
      name: application-1
      version: v1
  policy:
    overrideRules:
      - clusterSelector:
          clusterSelectorTerms: []
        jsonPatchOverrides:
          - op: add
            path: /metadata/annotations
            value:
              cro-test-annotation: cro-test-annotation-val
`

const ro1ConfigMap = `
apiVersion: placement.kubernetes-fleet.io/v1alpha1
kind: ResourceOverride
metadata:
  finalizers:
  - kubernetes-fleet.io/override-cleanup
  generation: 1
  name: ro-1
  namespace: application-1
spec:
  placement:
    name: crp-example
  policy:
    overrideRules:
    - clusterSelector:
        clusterSelectorTerms: []
      jsonPatchOverrides:
      - op: add
        path: /metadata/annotations
        value:
          ro-test-annotation: ro-test-annotation-val
  resourceSelectors:
  - group: ""
    kind: ConfigMap
    name: app-config-1
    version: v1
`

// The migration tutorial's Deployment and RO [Resource Migration With Overrides › Create Resource Override] (TUT-MIGRATE-PROPERTY-OVERRIDE).
const nginxDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
  namespace: test-app
spec:
  replicas: 2
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.16.1
`

const migrationRO = `
apiVersion: placement.kubernetes-fleet.io/v1alpha1
kind: ResourceOverride
metadata:
  name: ro-1
  namespace: test-app
spec:
  resourceSelectors:
    -  group: apps
       kind: Deployment
       version: v1
       name: nginx-deployment
  policy:
    overrideRules:
      - clusterSelector:
          clusterSelectorTerms:
            - labelSelector:
                matchLabels:
                  fleet.azure.com/location: westeurope
        jsonPatchOverrides:
          - op: replace
            path: /spec/replicas
            value:
              4
`

// The ArgoCD tutorial's Application and RO [KubeFleet and ArgoCD Integration › Enable “Applications in any namespace” in ArgoCD] (TUT-ARGOCD-STAGED).
const guestbookApp = `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook-app
  namespace: guestbook
spec:
  destination:
    namespace: guestbook
    server: https://kubernetes.default.svc
  project: guestbook-project
  source:
    path: content/en/docs/tutorials/ArgoCD/manifests/guestbook
    repoURL: https://github.com/kubefleet-dev/website.git
    targetRevision: main
`

const guestbookRO = `
apiVersion: placement.kubernetes-fleet.io/v1alpha1
kind: ResourceOverride
metadata:
  name: guestbook-app-ro
  namespace: guestbook # ro needs to be created in the same namespace as the resource it overrides
spec:
  placement:
    name: guestbook-crp # specify the CRP name
  policy:
    overrideRules:
    - clusterSelector:
        clusterSelectorTerms:
        - labelSelector: 
            matchExpressions:
            - key: environment
              operator: Exists
      jsonPatchOverrides:
      - op: replace
        path: /spec/source/path # spec.source.path is overridden
        value: "content/en/docs/tutorials/ArgoCD/manifests/guestbook/${MEMBER-CLUSTER-LABEL-KEY-environment}"
      overrideType: JSONPatch
  resourceSelectors:
  - group: argoproj.io
    kind: Application
    name: guestbook-app # name of the Application
    version: v1alpha1
`

// The TSG's ClusterRole (no labels) and CRO with a bad path, and its resolution [CRP Override Failure TSG › ClusterRole].
const tsgCRO = `
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceOverride
metadata:
  name: cro-1
spec:
  clusterResourceSelectors:
  - group: rbac.authorization.k8s.io
    kind: ClusterRole
    name: secret-reader
    version: v1
  policy:
    overrideRules:
    - clusterSelector:
        clusterSelectorTerms:
        - labelSelector:
            matchLabels:
              env: canary
      jsonPatchOverrides:
      - op: add
        path: /metadata/labels/new-label
        value: new-value
`

const tsgCROFixed = `
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceOverride
metadata:
  name: cro-1
spec:
  clusterResourceSelectors:
  - group: rbac.authorization.k8s.io
    kind: ClusterRole
    name: secret-reader
    version: v1
  policy:
    overrideRules:
    - clusterSelector:
        clusterSelectorTerms:
        - labelSelector:
            matchLabels:
              env: canary
      jsonPatchOverrides:
        - op: add
          path: /metadata/labels
          value: 
            newlabel: new-value
`

// TSGMessage is the per-cluster Overridden message of the TSG [CRP Override Failure TSG › ClusterResourcePlacement Status].
const tsgMessage = `Failed to apply the override rules on the resources: add operation does not apply: doc is missing path: "/metadata/labels/new-label": missing value`

// cro builds a one-rule ClusterResourceOverride on secret-reader for the rule given as YAML.
func croRule(name, rule string) string {
	return `
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceOverride
metadata:
  name: ` + name + `
spec:
  clusterResourceSelectors:
    - group: rbac.authorization.k8s.io
      kind: ClusterRole
      version: v1
      name: secret-reader
  policy:
    overrideRules:
` + rule
}

type applyCase struct {
	name     string
	doc      string
	manifest string
	cluster  *member.Member
	cros     []string
	ros      []string
	// want is the expected manifest; "" means the result has none.
	want        string
	wantDeleted bool
	wantCRO     []string
	wantRO      []placement.NamespacedName
	// wantErr is the expected Err message; "" means no error.
	wantErr string
}

func TestApplyWorkedExamples(t *testing.T) {
	prod, test := cluster("member-50", "env=prod"), cluster("member-7", "env=test")
	cases := []applyCase{
		{
			name: "CRO override labels with ${MEMBER-CLUSTER-NAME} on an env=prod cluster", doc: "Using the ClusterResourceOverride API › JSON Patch Override; Override › Each override rule contains the following fields",
			manifest: secretReader, cluster: prod, cros: []string{croOverrideLabels},
			want:    addLabels(secretReader, "cluster-name: member-50"),
			wantCRO: []string{"example-cro-0"},
		},
		{
			name: "CRO override labels skips an env=test cluster", doc: "Using the ClusterResourceOverride API › JSON Patch Override",
			manifest: secretReader, cluster: test, cros: []string{croOverrideLabels},
			want: secretReader,
		},
		{
			name: "CRO remove verb list on env=prod", doc: "Using the ClusterResourceOverride API › JSON Patch Override",
			manifest: secretReader, cluster: prod, cros: []string{croRemoveVerb},
			want: `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: secret-reader
rules:
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "watch"]
`,
			wantCRO: []string{"example-cro-0"},
		},
		{
			name: "CRO multiple patches apply sequentially: [get watch list] -> [get]", doc: "Using the ClusterResourceOverride API › Multiple Override Patches",
			manifest: secretReader, cluster: prod, cros: []string{croMultiplePatches},
			want: `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: secret-reader
rules:
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get"]
`,
			wantCRO: []string{"example-cro-0"},
		},
		{
			name: "CRO Delete keeps the ClusterRole off env=test clusters", doc: "Using the ClusterResourceOverride API › Delete; Using the ClusterResourceOverride API › Verifying the Cluster Resource is Overridden",
			manifest: secretReader, cluster: test, cros: []string{croDelete},
			wantDeleted: true, wantCRO: []string{"example-cro-0"},
		},
		{
			name: "CRO Delete leaves env=prod clusters alone", doc: "Using the ClusterResourceOverride API › Delete",
			manifest: secretReader, cluster: prod, cros: []string{croDelete},
			want: secretReader,
		},
		{
			name: "RO override labels with ${MEMBER-CLUSTER-NAME} on a Deployment", doc: "Using the ResourceOverride API › The jsonPatchOverrides field supports the following fields",
			manifest: myDeployment, cluster: prod, ros: []string{roOverrideLabels},
			want:   myDeploymentLabelled("member-50"),
			wantRO: []placement.NamespacedName{{Namespace: "test-namespace", Name: "example-ro-0"}},
		},
		{
			name: "RO replaces the image on env=prod", doc: "Using the ResourceOverride API › The jsonPatchOverrides field supports the following fields",
			manifest: myDeployment, cluster: prod, ros: []string{roOverrideImage},
			want:   myDeploymentImage("nginx:1.20.0"),
			wantRO: []placement.NamespacedName{{Namespace: "test-namespace", Name: "example-ro-0"}},
		},
		{
			name: "RO Delete on env=test", doc: "Using the ResourceOverride API › Delete",
			manifest: myDeployment, cluster: test, ros: []string{roDelete},
			wantDeleted: true, wantRO: []placement.NamespacedName{{Namespace: "test-namespace", Name: "example-ro-0"}},
		},
		{
			name: "RO multiple rules: env=prod gets nginx:1.20.0", doc: "Using the ResourceOverride API › Multiple Override Rules",
			manifest: myDeployment, cluster: prod, ros: []string{roMultipleRules},
			want:   myDeploymentImage("nginx:1.20.0"),
			wantRO: []placement.NamespacedName{{Namespace: "test-namespace", Name: "example-ro-0"}},
		},
		{
			name: "RO multiple rules: env=test gets nginx:latest", doc: "Using the ResourceOverride API › Multiple Override Rules",
			manifest: myDeployment, cluster: test, ros: []string{roMultipleRules},
			want:   myDeploymentImage("nginx:latest"),
			wantRO: []placement.NamespacedName{{Namespace: "test-namespace", Name: "example-ro-0"}},
		},
		{
			name: "RO multiple rules: a cluster matching neither is unchanged and not listed", doc: "Using the ResourceOverride API › Multiple Override Rules",
			manifest: myDeployment, cluster: cluster("member-1", "env=dev"), ros: []string{roMultipleRules},
			want: myDeployment,
		},
		{
			name: "RO does not apply to a resource of the same name in another namespace", doc: "Override › Resource Selector",
			manifest: replaceNamespace(myDeployment, "other"), cluster: prod, ros: []string{roOverrideImage},
			want: replaceNamespace(myDeployment, "other"),
		},
		{
			name: "CRO selecting a Namespace overrides a ConfigMap in it", doc: "Override › Difference Between ClusterResourceOverride And ResourceOverride; Override › Examples",
			manifest: appConfig1, cluster: cluster("kind-cluster-1"), cros: []string{cro1Namespace},
			want:    appConfig1Annotated("cro-test-annotation", "cro-test-annotation-val"),
			wantCRO: []string{"cro-1-0"},
		},
		{
			name: "CRO selecting a Namespace overrides the Namespace itself", doc: "Override › Difference Between ClusterResourceOverride And ResourceOverride",
			manifest: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: application-1\n",
			cluster:  cluster("kind-cluster-1"), cros: []string{cro1Namespace},
			want:    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: application-1\n  annotations:\n    cro-test-annotation: cro-test-annotation-val\n",
			wantCRO: []string{"cro-1-0"},
		},
		{
			name: "CRO selecting a Namespace does not reach other namespaces", doc: "Override › Difference Between ClusterResourceOverride And ResourceOverride",
			manifest: replaceNamespace(appConfig1, "application-2"), cluster: cluster("kind-cluster-1"), cros: []string{cro1Namespace},
			want: replaceNamespace(appConfig1, "application-2"),
		},
		{
			name: "CRO then RO on the same field: the RO wins", doc: "Override › Difference Between ClusterResourceOverride And ResourceOverride; Override › Examples",
			manifest: appConfig1, cluster: cluster("kind-cluster-1"), cros: []string{cro1Namespace}, ros: []string{ro1ConfigMap},
			want:    appConfig1Annotated("ro-test-annotation", "ro-test-annotation-val"),
			wantCRO: []string{"cro-1-0"},
			wantRO:  []placement.NamespacedName{{Namespace: "application-1", Name: "ro-1-0"}},
		},
		{
			name: "migration tutorial: replicas 4 on westeurope", doc: "Resource Migration With Overrides › Create Resource Override; Resource Migration With Overrides › CRP Status",
			manifest: nginxDeployment, cluster: cluster("aks-member-4", "fleet.azure.com/location=westeurope"), ros: []string{migrationRO},
			want:   replaceReplicas(nginxDeployment, "4"),
			wantRO: []placement.NamespacedName{{Namespace: "test-app", Name: "ro-1-0"}},
		},
		{
			name: "migration tutorial: westus keeps 2 replicas", doc: "Resource Migration With Overrides › Create Resource Override",
			manifest: nginxDeployment, cluster: cluster("aks-member-1", "fleet.azure.com/location=westus"), ros: []string{migrationRO},
			want: nginxDeployment,
		},
		{
			name: "ArgoCD tutorial: member1 (staging) gets the staging path", doc: "KubeFleet and ArgoCD Integration › KubeFleet environment; KubeFleet and ArgoCD Integration › Enable “Applications in any namespace” in ArgoCD",
			manifest: guestbookApp, cluster: cluster("member1", "environment=staging", "team=A"), ros: []string{guestbookRO},
			want:   guestbookPath("staging"),
			wantRO: []placement.NamespacedName{{Namespace: "guestbook", Name: "guestbook-app-ro-0"}},
		},
		{
			name: "ArgoCD tutorial: member2 (canary) gets the canary path", doc: "KubeFleet and ArgoCD Integration › KubeFleet environment; KubeFleet and ArgoCD Integration › Enable “Applications in any namespace” in ArgoCD",
			manifest: guestbookApp, cluster: cluster("member2", "environment=canary", "team=A"), ros: []string{guestbookRO},
			want:   guestbookPath("canary"),
			wantRO: []placement.NamespacedName{{Namespace: "guestbook", Name: "guestbook-app-ro-0"}},
		},
		{
			name: "ArgoCD tutorial: member3 (production) gets the production path", doc: "KubeFleet and ArgoCD Integration › KubeFleet environment; KubeFleet and ArgoCD Integration › Enable “Applications in any namespace” in ArgoCD",
			manifest: guestbookApp, cluster: cluster("member3", "environment=production", "team=A"), ros: []string{guestbookRO},
			want:   guestbookPath("production"),
			wantRO: []placement.NamespacedName{{Namespace: "guestbook", Name: "guestbook-app-ro-0"}},
		},
		{
			name: "ArgoCD tutorial: member4 has no environment label, so the Exists selector skips it", doc: "KubeFleet and ArgoCD Integration › KubeFleet environment",
			manifest: guestbookApp, cluster: cluster("member4", "team=B"), ros: []string{guestbookRO},
			want: guestbookApp,
		},
		{
			name: "TSG: add /metadata/labels/new-label on a ClusterRole without labels fails", doc: "CRP Override Failure TSG › ClusterRole",
			manifest: secretReader, cluster: cluster("kind-cluster-1", "env=canary"), cros: []string{tsgCRO},
			wantCRO: []string{"cro-1-0"},
			wantErr: `add operation does not apply: doc is missing path: "/metadata/labels/new-label": missing value`,
		},
		{
			name: "TSG resolution: add /metadata/labels with a map works", doc: "CRP Override Failure TSG › Resolution",
			manifest: secretReader, cluster: cluster("kind-cluster-1", "env=canary"), cros: []string{tsgCROFixed},
			want:    addLabels(secretReader, "newlabel: new-value"),
			wantCRO: []string{"cro-1-0"},
		},
		{
			name: "TSG CRO on a cluster it does not select: nothing fails", doc: "CRP Override Failure TSG › ClusterRole",
			manifest: secretReader, cluster: cluster("kind-cluster-2", "env=prod"), cros: []string{tsgCRO},
			want: secretReader,
		},
	}
	runApplyCases(t, cases)
}

func TestApplySemantics(t *testing.T) {
	anyCluster := cluster("c1", "env=prod", "region=west")
	cases := []applyCase{
		{
			name: "nil cluster selector selects no cluster", doc: "Override › Each override rule contains the following fields; API Reference › OverrideRule",
			manifest: secretReader, cluster: anyCluster,
			cros: []string{croRule("cro", `
      - jsonPatchOverrides:
          - {op: add, path: /metadata/labels, value: {a: b}}
`)},
			want: secretReader,
		},
		{
			name: "empty clusterSelectorTerms select every cluster", doc: "Override › Each override rule contains the following fields",
			manifest: secretReader, cluster: cluster("bare"),
			cros: []string{croRule("cro", `
      - clusterSelector:
          clusterSelectorTerms: []
        jsonPatchOverrides:
          - {op: add, path: /metadata/labels, value: {a: b}}
`)},
			want: addLabels(secretReader, "a: b"), wantCRO: []string{"cro-0"},
		},
		{
			name: "a selector without terms selects every cluster", doc: "Override › Each override rule contains the following fields",
			manifest: secretReader, cluster: cluster("bare"),
			cros: []string{croRule("cro", `
      - clusterSelector: {}
        jsonPatchOverrides:
          - {op: add, path: /metadata/labels, value: {a: b}}
`)},
			want: addLabels(secretReader, "a: b"), wantCRO: []string{"cro-0"},
		},
		{
			name:     "a term without a labelSelector selects nothing (a nil Kubernetes label selector)",
			manifest: secretReader, cluster: anyCluster,
			cros: []string{croRule("cro", `
      - clusterSelector:
          clusterSelectorTerms: [{}]
        jsonPatchOverrides:
          - {op: add, path: /metadata/labels, value: {a: b}}
`)},
			want: secretReader,
		},
		{
			name:     "an empty labelSelector selects every cluster",
			manifest: secretReader, cluster: cluster("bare"),
			cros: []string{croRule("cro", `
      - clusterSelector:
          clusterSelectorTerms: [{labelSelector: {}}]
        jsonPatchOverrides:
          - {op: add, path: /metadata/labels, value: {a: b}}
`)},
			want: addLabels(secretReader, "a: b"), wantCRO: []string{"cro-0"},
		},
		{
			name: "terms are ORed", doc: "API Reference › ClusterSelector",
			manifest: secretReader, cluster: cluster("c", "region=west"),
			cros: []string{croRule("cro", `
      - clusterSelector:
          clusterSelectorTerms:
            - labelSelector: {matchLabels: {env: prod}}
            - labelSelector: {matchLabels: {region: west}}
        jsonPatchOverrides:
          - {op: add, path: /metadata/labels, value: {a: b}}
`)},
			want: addLabels(secretReader, "a: b"), wantCRO: []string{"cro-0"},
		},
		{
			name: "rules apply in order: the last rule touching a field wins", doc: "Override › Override Policy",
			manifest: secretReader, cluster: anyCluster,
			cros: []string{croRule("cro", `
      - clusterSelector: {clusterSelectorTerms: []}
        jsonPatchOverrides:
          - {op: add, path: /metadata/labels, value: {rule: first}}
      - clusterSelector: {clusterSelectorTerms: []}
        jsonPatchOverrides:
          - {op: replace, path: /metadata/labels/rule, value: second}
`)},
			want: addLabels(secretReader, "rule: second"), wantCRO: []string{"cro-0"},
		},
		{
			name:     "a rule for other clusters is skipped, later rules still apply",
			manifest: secretReader, cluster: anyCluster,
			cros: []string{croRule("cro", `
      - clusterSelector: {clusterSelectorTerms: [{labelSelector: {matchLabels: {env: test}}}]}
        overrideType: Delete
      - clusterSelector: {clusterSelectorTerms: []}
        jsonPatchOverrides:
          - {op: add, path: /metadata/labels, value: {a: b}}
`)},
			want: addLabels(secretReader, "a: b"), wantCRO: []string{"cro-0"},
		},
		{
			name:     "a Delete rule after patches deletes the resource",
			manifest: secretReader, cluster: anyCluster,
			cros: []string{croRule("cro", `
      - clusterSelector: {clusterSelectorTerms: []}
        jsonPatchOverrides:
          - {op: add, path: /metadata/labels, value: {a: b}}
      - clusterSelector: {clusterSelectorTerms: []}
        overrideType: Delete
`)},
			wantDeleted: true, wantCRO: []string{"cro-0"},
		},
		{
			name:     "a Delete from the CRO wins over the RO's patches (the RO is still listed)",
			manifest: appConfig1, cluster: anyCluster,
			cros: []string{`
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceOverride
metadata: {name: ns-delete}
spec:
  clusterResourceSelectors: [{group: "", version: v1, kind: Namespace, name: application-1}]
  policy:
    overrideRules: [{clusterSelector: {clusterSelectorTerms: []}, overrideType: Delete}]
`}, ros: []string{ro1ConfigMap},
			wantDeleted: true, wantCRO: []string{"ns-delete-0"},
			wantRO: []placement.NamespacedName{{Namespace: "application-1", Name: "ro-1-0"}},
		},
		{
			name: "variables are case-sensitive: ${member-cluster-name} stays as written", doc: "API Reference › JSONPatchOverride",
			manifest: secretReader, cluster: anyCluster,
			cros: []string{croRule("cro", `
      - clusterSelector: {clusterSelectorTerms: []}
        jsonPatchOverrides:
          - {op: add, path: /metadata/labels, value: {a: "${member-cluster-name}", b: "${MEMBER-CLUSTER-NAME}", c: "${OTHER}"}}
`)},
			want: addLabels(secretReader, `a: "${member-cluster-name}"`, "b: c1", `c: "${OTHER}"`), wantCRO: []string{"cro-0"},
		},
		{
			name: "several variables in one value, including a prefixed label key", doc: "KubeFleet and ArgoCD Integration › Enable “Applications in any namespace” in ArgoCD",
			manifest: secretReader, cluster: cluster("c9", "fleet.azure.com/location=westeurope", "env=prod"),
			cros: []string{croRule("cro", `
      - clusterSelector: {clusterSelectorTerms: []}
        jsonPatchOverrides:
          - {op: add, path: /metadata/annotations, value: {where: "${MEMBER-CLUSTER-NAME}@${MEMBER-CLUSTER-LABEL-KEY-fleet.azure.com/location}/${MEMBER-CLUSTER-LABEL-KEY-env}"}}
`)},
			want: addAnnotations(secretReader, "where: c9@westeurope/prod"), wantCRO: []string{"cro-0"},
		},
		{
			name: "a label variable the cluster lacks fails, naming the label", doc: "KubeFleet and ArgoCD Integration › Enable “Applications in any namespace” in ArgoCD",
			manifest: guestbookApp, cluster: cluster("member4", "team=B"),
			ros: []string{`
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourceOverride
metadata: {name: ro, namespace: guestbook}
spec:
  resourceSelectors: [{group: argoproj.io, version: v1alpha1, kind: Application, name: guestbook-app}]
  policy:
    overrideRules:
    - clusterSelector: {clusterSelectorTerms: []}
      jsonPatchOverrides:
      - {op: replace, path: /spec/source/path, value: "guestbook/${MEMBER-CLUSTER-LABEL-KEY-environment}"}
`},
			wantRO:  []placement.NamespacedName{{Namespace: "guestbook", Name: "ro-0"}},
			wantErr: `member cluster "member4" has no label "environment", which the reserved variable ${MEMBER-CLUSTER-LABEL-KEY-environment} needs`,
		},
		{
			name: "replace on a path that does not exist fails with the library's error", doc: "API Reference › JSONPatchOverride",
			manifest: secretReader, cluster: anyCluster,
			cros: []string{croRule("cro", `
      - clusterSelector: {clusterSelectorTerms: []}
        jsonPatchOverrides:
          - {op: replace, path: /spec/replicas, value: 3}
`)},
			wantCRO: []string{"cro-0"},
			wantErr: "replace operation does not apply: doc is missing path: /spec/replicas: missing value",
		},
		{
			name:     "remove on a path that does not exist fails",
			manifest: secretReader, cluster: anyCluster,
			cros: []string{croRule("cro", `
      - clusterSelector: {clusterSelectorTerms: []}
        jsonPatchOverrides:
          - {op: remove, path: /metadata/labels/x}
`)},
			wantCRO: []string{"cro-0"},
			wantErr: `remove operation does not apply: doc is missing path: "/metadata/labels/x": missing value`,
		},
		{
			name:     "a CRO selecting a namespaced kind by name does not reach namespaced resources",
			manifest: appConfig1, cluster: anyCluster,
			cros: []string{`
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceOverride
metadata: {name: cm}
spec:
  clusterResourceSelectors: [{group: "", version: v1, kind: ConfigMap, name: app-config-1}]
  policy:
    overrideRules: [{clusterSelector: {clusterSelectorTerms: []}, overrideType: Delete}]
`},
			want: appConfig1,
		},
		{
			name:     "selection is by group, version, kind and name: another version does not match",
			manifest: replaceAPIVersion(secretReader, "rbac.authorization.k8s.io/v1beta1"), cluster: anyCluster,
			cros: []string{croDelete},
			want: replaceAPIVersion(secretReader, "rbac.authorization.k8s.io/v1beta1"),
		},
		{
			name:     "no override selects the resource: a copy comes back",
			manifest: secretReader, cluster: anyCluster,
			want: secretReader,
		},
	}
	runApplyCases(t, cases)
}

func runApplyCases(t *testing.T, cases []applyCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := manifest(t, c.manifest)
			before := in.DeepCopy()
			got := override.Apply(in, c.cluster, croSnapshots(t, c.cros...), roSnapshots(t, c.ros...))
			desc := c.name
			if c.doc != "" {
				desc += " [" + c.doc + "]"
			}
			if diff := cmp.Diff(before.Object, in.Object); diff != "" {
				t.Errorf("Apply(%s) modified its input (-before +after):\n%s", desc, diff)
			}
			gotErr := ""
			if got.Err != nil {
				gotErr = got.Err.Error()
			}
			if gotErr != c.wantErr {
				t.Errorf("Apply(%s).Err = %q, want %q", desc, gotErr, c.wantErr)
			}
			if got.Deleted != c.wantDeleted {
				t.Errorf("Apply(%s).Deleted = %v, want %v", desc, got.Deleted, c.wantDeleted)
			}
			if c.want == "" {
				if got.Manifest != nil {
					t.Errorf("Apply(%s).Manifest = %v, want nil", desc, got.Manifest.Object)
				}
			} else if got.Manifest == nil {
				t.Errorf("Apply(%s).Manifest = nil, want %v", desc, manifest(t, c.want).Object)
			} else if diff := cmp.Diff(manifest(t, c.want).Object, got.Manifest.Object); diff != "" {
				t.Errorf("Apply(%s).Manifest mismatch (-want +got):\n%s", desc, diff)
			}
			if diff := cmp.Diff(c.wantCRO, got.AppliedCRO, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Apply(%s).AppliedCRO mismatch (-want +got):\n%s", desc, diff)
			}
			if diff := cmp.Diff(c.wantRO, got.AppliedRO, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Apply(%s).AppliedRO mismatch (-want +got):\n%s", desc, diff)
			}
		})
	}
}

// TestTSGOverrideBadPath reproduces TSG-OVERRIDE-BADPATH end to end: the per-cluster condition
// carries the library's message, the placement-level one counts the failing cluster, and the
// error is the library's ErrMissing underneath [CRP Override Failure TSG › ClusterResourcePlacement Status].
func TestTSGOverrideBadPath(t *testing.T) {
	cl := cluster("kind-cluster-1", "env=canary")
	cros := croSnapshots(t, tsgCRO)
	res := override.Apply(manifest(t, secretReader), cl, cros, nil)
	if !errors.Is(res.Err, jsonpatch.ErrMissing) {
		t.Errorf("Apply(TSG).Err = %v, want one wrapping jsonpatch.ErrMissing", res.Err)
	}
	var ae *override.ApplyError
	if !errors.As(res.Err, &ae) {
		t.Fatalf("Apply(TSG).Err = %T, want *override.ApplyError", res.Err)
	}
	wantWhere := override.ApplyError{
		Resource: placement.ResourceIdentifier{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "secret-reader"},
		Snapshot: "cro-1-0", Rule: 0,
	}
	if diff := cmp.Diff(wantWhere, *ae, cmpopts.IgnoreFields(override.ApplyError{}, "Err")); diff != "" {
		t.Errorf("Apply(TSG).Err location mismatch (-want +got):\n%s", diff)
	}

	applicableCRO, applicableRO := override.ApplicableFor(cl, []placement.ResourceIdentifier{override.Identify(manifest(t, secretReader))}, cros, nil)
	if diff := cmp.Diff([]string{"cro-1-0"}, applicableCRO); diff != "" || applicableRO != nil {
		t.Errorf("ApplicableFor(TSG) = %v, %v, want [cro-1-0], []", applicableCRO, applicableRO)
	}
	perCluster := override.ClusterCondition(applicableCRO, applicableRO, res.Err)
	wantCluster := condition.False(condition.TypeOverridden, override.ReasonOverriddenFailed, tsgMessage)
	if diff := cmp.Diff(wantCluster, perCluster); diff != "" {
		t.Errorf("ClusterCondition(TSG) mismatch (-want +got):\n%s", diff)
	}
	wantCRP := condition.False(override.TypePlacementOverridden, override.ReasonOverriddenFailed, "Failed to override resources in 1 cluster(s)")
	if diff := cmp.Diff(wantCRP, override.PlacementCondition([]condition.Condition{perCluster})); diff != "" {
		t.Errorf("PlacementCondition(TSG) mismatch (-want +got):\n%s", diff)
	}
}

func TestApplicableFor(t *testing.T) {
	cros := croSnapshots(t, cro1Namespace, croRemoveVerb, croDelete)
	// croRemoveVerb and croDelete share the name example-cro; give the Delete one its own.
	cros[2].Name, cros[2].Override = "delete-cro-0", "delete-cro"
	ros := roSnapshots(t, ro1ConfigMap, roMultipleRules, migrationRO)
	resources := []placement.ResourceIdentifier{
		{Group: "", Version: "v1", Kind: "Namespace", Name: "application-1"},
		{Group: "", Version: "v1", Kind: "ConfigMap", Name: "app-config-1", Namespace: "application-1"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "secret-reader"},
		{Group: "apps", Version: "v1", Kind: "Deployment", Name: "my-deployment", Namespace: "test-namespace"},
		// Enveloped resources are not overridden.
		{Group: "apps", Version: "v1", Kind: "Deployment", Name: "nginx-deployment", Namespace: "test-app", Envelope: &placement.NamespacedName{Namespace: "test-app", Name: "env"}},
	}
	cases := []struct {
		name    string
		cluster *member.Member
		res     []placement.ResourceIdentifier
		wantCRO []string
		wantRO  []placement.NamespacedName
	}{
		{
			name: "env=prod", cluster: cluster("p", "env=prod"), res: resources,
			wantCRO: []string{"cro-1-0", "example-cro-0"},
			wantRO:  []placement.NamespacedName{{Namespace: "application-1", Name: "ro-1-0"}, {Namespace: "test-namespace", Name: "example-ro-0"}},
		},
		{
			name: "env=test", cluster: cluster("t", "env=test"), res: resources,
			wantCRO: []string{"cro-1-0", "delete-cro-0"},
			wantRO:  []placement.NamespacedName{{Namespace: "application-1", Name: "ro-1-0"}, {Namespace: "test-namespace", Name: "example-ro-0"}},
		},
		{
			name: "no labels: only the select-all overrides", cluster: cluster("n"), res: resources,
			wantCRO: []string{"cro-1-0"},
			wantRO:  []placement.NamespacedName{{Namespace: "application-1", Name: "ro-1-0"}},
		},
		{
			name: "westeurope, deployment not enveloped", cluster: cluster("w", "fleet.azure.com/location=westeurope"),
			res:    []placement.ResourceIdentifier{{Group: "apps", Version: "v1", Kind: "Deployment", Name: "nginx-deployment", Namespace: "test-app"}},
			wantRO: []placement.NamespacedName{{Namespace: "test-app", Name: "ro-1-0"}},
		},
		{
			name: "no resources", cluster: cluster("p", "env=prod"),
		},
	}
	for _, c := range cases {
		gotCRO, gotRO := override.ApplicableFor(c.cluster, c.res, cros, ros)
		if diff := cmp.Diff(c.wantCRO, gotCRO, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("ApplicableFor(%s) CRO mismatch (-want +got):\n%s", c.name, diff)
		}
		if diff := cmp.Diff(c.wantRO, gotRO, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("ApplicableFor(%s) RO mismatch (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestForPlacement(t *testing.T) {
	cros := croSnapshots(t, croRemoveVerb, tsgCRO)                   // crp-example, and no placement
	ros := roSnapshots(t, roOverrideImage, migrationRO, guestbookRO) // crp-example, none, guestbook-crp
	gotCRO, gotRO := override.ForPlacement("guestbook-crp", cros, ros)
	var croNames []string
	for _, s := range gotCRO {
		croNames = append(croNames, s.Name)
	}
	var roNames []placement.NamespacedName
	for _, s := range gotRO {
		roNames = append(roNames, s.NamespacedName())
	}
	if diff := cmp.Diff([]string{"cro-1-0"}, croNames); diff != "" {
		t.Errorf("ForPlacement(guestbook-crp) CROs mismatch (-want +got):\n%s", diff)
	}
	wantRO := []placement.NamespacedName{{Namespace: "test-app", Name: "ro-1-0"}, {Namespace: "guestbook", Name: "guestbook-app-ro-0"}}
	if diff := cmp.Diff(wantRO, roNames); diff != "" {
		t.Errorf("ForPlacement(guestbook-crp) ROs mismatch (-want +got):\n%s", diff)
	}

	// placement.scope: Cluster (or empty) refers to the ClusterResourcePlacement of that
	// name; Namespaced to a ResourcePlacement, so to no ClusterResourcePlacement.
	for scope, want := range map[override.PlacementScope]int{"": 2, override.ClusterScope: 2, override.NamespacedScope: 1} {
		scoped := roSnapshots(t, roOverrideImage, migrationRO, guestbookRO)
		for i := range scoped {
			if p := scoped[i].Spec.Placement; p != nil && p.Name == "guestbook-crp" {
				p.Scope = scope
			}
		}
		if _, got := override.ForPlacement("guestbook-crp", nil, scoped); len(got) != want {
			t.Errorf("ForPlacement(guestbook-crp) with scope %q keeps %d ROs, want %d", scope, len(got), want)
		}
	}
}

// TestApplyInvalidSelector: an override that slipped past validation with a label selector
// that does not parse fails loudly on every cluster instead of silently matching none.
func TestApplyInvalidSelector(t *testing.T) {
	snap := override.CROSnapshot{Name: "bad-0", Override: "bad", Spec: override.ClusterResourceOverrideSpec{
		ClusterResourceSelectors: []override.ResourceSelector{{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "secret-reader"}},
		Policy: override.OverridePolicy{OverrideRules: []override.OverrideRule{{
			ClusterSelector: &placement.ClusterSelector{ClusterSelectorTerms: []placement.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}}}}},
			OverrideType: override.DeleteOverrideType,
		}}},
	}}
	got := override.Apply(manifest(t, secretReader), cluster("c"), []override.CROSnapshot{snap}, nil)
	if got.Err == nil || !strings.HasPrefix(got.Err.Error(), "invalid cluster selector: ") || got.Manifest != nil || got.Deleted {
		t.Errorf("Apply(invalid selector) = %+v, want an invalid cluster selector error", got)
	}
	if diff := cmp.Diff([]string{"bad-0"}, got.AppliedCRO); diff != "" {
		t.Errorf("Apply(invalid selector).AppliedCRO mismatch (-want +got):\n%s", diff)
	}
}

// TestJSONValue: values round-trip as raw JSON; null and absent both mean "no value".
func TestJSONValue(t *testing.T) {
	for _, c := range []struct {
		in      string
		wantRaw string
		wantOut string
	}{
		{`{"op":"remove","path":"/a","value":null}`, "", `{"op":"remove","path":"/a"}`},
		{`{"op":"remove","path":"/a"}`, "", `{"op":"remove","path":"/a"}`},
		{`{"op":"add","path":"/a","value":{"b":[1,"x"]}}`, `{"b":[1,"x"]}`, `{"op":"add","path":"/a","value":{"b":[1,"x"]}}`},
		{`{"op":"add","path":"/a","value":4}`, `4`, `{"op":"add","path":"/a","value":4}`},
	} {
		var p override.JSONPatchOverride
		if err := json.Unmarshal([]byte(c.in), &p); err != nil {
			t.Fatalf("Unmarshal(%s) = %v", c.in, err)
		}
		if string(p.Value.Raw) != c.wantRaw {
			t.Errorf("Unmarshal(%s).Value.Raw = %q, want %q", c.in, p.Value.Raw, c.wantRaw)
		}
		out, err := json.Marshal(p)
		if err != nil || string(out) != c.wantOut {
			t.Errorf("Marshal(Unmarshal(%s)) = %s, %v, want %s", c.in, out, err, c.wantOut)
		}
	}
}
