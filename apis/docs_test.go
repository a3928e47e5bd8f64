package apis_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"sort"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/prod/testenv"
)

// docManifest is one fleet manifest found in a text (the KubeFleet documentation, or a file
// of this repository): where it starts (the file and the 1-based line of its apiVersion)
// and its text, dedented.
type docManifest struct {
	file string
	line int
	text string
}

func (m docManifest) String() string { return fmt.Sprintf("%s:%d", m.file, m.line) }

var (
	fleetAPIVersionRE = regexp.MustCompile(`^(\s*)apiVersion:\s*(cluster|placement)\.kubernetes-fleet\.io/\S+\s*$`)
	topLevelKeyRE     = regexp.MustCompile(`^(apiVersion|kind|metadata|spec|status|data):`)
	shellVarRE        = regexp.MustCompile(`\$\{?([A-Z][A-Z0-9_]*)\}?`)
)

// docsEnv names the directory holding the KubeFleet documentation as text files (*.txt),
// which the repository does not carry; whoever has a copy sets it (CI too) to check it.
const docsEnv = "FLEETSIM_KUBEFLEET_DOCS"

// repoRoot is the repository's top directory.
func repoRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..")
}

// extractDocManifests finds every fleet manifest (an object of a kubernetes-fleet.io group)
// in a text rendering of documentation: a block that starts with an apiVersion line not
// inside a list, at any indentation (shell heredocs are indented), and runs while lines are
// deeper than that line or are one of an object's top-level keys at its indentation. A
// blank line ends the block unless a top-level key follows it; `---` and `EOF` end it.
// Shell variables ($NAME) are replaced as the heredoc's shell would, by a lowercase value.
func extractDocManifests(file string, text string) []docManifest {
	lines := strings.Split(text, "\n")
	var out []docManifest
	for i := 0; i < len(lines); i++ {
		m := fleetAPIVersionRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent := m[1]
		var body []string
		j := i
		for ; j < len(lines); j++ {
			l := strings.TrimRight(lines[j], " \t\r")
			if j > i && strings.TrimSpace(l) == "" {
				// a blank line: go on only when a top-level key follows
				k := j
				for k < len(lines) && strings.TrimSpace(lines[k]) == "" {
					k++
				}
				if k < len(lines) && strings.HasPrefix(lines[k], indent) && topLevelKeyRE.MatchString(lines[k][len(indent):]) {
					for ; j < k; j++ {
						body = append(body, "")
					}
					j--
					continue
				}
				break
			}
			if !strings.HasPrefix(l, indent) {
				break
			}
			rest := l[len(indent):]
			if j > i && (rest == "---" || rest == "EOF") {
				break
			}
			if rest != "" && rest[0] != ' ' && rest[0] != '\t' && !topLevelKeyRE.MatchString(rest) && !strings.HasPrefix(rest, "#") {
				break
			}
			body = append(body, rest)
		}
		t := strings.Join(body, "\n") + "\n"
		t = shellVarRE.ReplaceAllStringFunc(t, func(v string) string {
			name := shellVarRE.FindStringSubmatch(v)[1]
			return strings.ReplaceAll(strings.ToLower(name), "_", "-")
		})
		out = append(out, docManifest{file: file, line: i + 1, text: t})
		i = j - 1
	}
	return out
}

// verdict is why a manifest is refused: a part of the API server's refusal and the reason
// the text earns it.
type verdict struct{ want, why string }

// docVerdicts are the KubeFleet documentation's manifests that a KubeFleet hub refuses too,
// keyed by the line of the documentation's text rendering their apiVersion stands on, with a
// part of the refusal and why the documentation earns it. Every other manifest must be
// accepted.
var docVerdicts = map[int]verdict{
	200:   {`uid mismatch`, "a dump (kubectl get -o yaml) of a live object: its metadata.uid names an object no hub has, so apply refuses it (KubeFleet's hub too)"},
	250:   {`uid mismatch`, "a dump (kubectl get -o yaml) of a live object: its metadata.uid names an object no hub has, so apply refuses it (KubeFleet's hub too)"},
	603:   {`uid mismatch`, "a dump (kubectl get -o yaml) of a live object: its metadata.uid names an object no hub has, so apply refuses it (KubeFleet's hub too)"},
	772:   {`error parsing YAML`, "elision inside a dump: `metadata: ...` or a bare `...` line is not YAML"},
	1135:  {`uid mismatch`, "a dump (kubectl get -o yaml) of a live object: its metadata.uid names an object no hub has, so apply refuses it (KubeFleet's hub too)"},
	1190:  {`uid mismatch`, "a dump (kubectl get -o yaml) of a live object: its metadata.uid names an object no hub has, so apply refuses it (KubeFleet's hub too)"},
	2654:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	2686:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	2727:  {`preference: expected map`, "typo: the preferred term's preference is written as a list (`- labelSelector:`), not a mapping"},
	2863:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	2897:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	2945:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	2987:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	3016:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	3045:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	3088:  {`labelSelector.region: field not declared in schema`, "typo: labels written directly under labelSelector, without matchLabels"},
	3113:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	3148:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	3239:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	3293:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	3328:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	3410:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	3432:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	3507:  {`metricSorter: field not declared in schema`, "outdated name: the preferred term's sorter is propertySorter"},
	3530:  {`expected map, got &{...}`, "elision: the documentation writes `...` for the parts it leaves out (resourceSelectors, policy or strategy)"},
	3893:  {`spec.policy: Required value`, "fragment: shows only the override's resource selectors; an override needs its policy"},
	4250:  {`spec.policy: Required value`, "fragment: shows only the override's resource selectors; an override needs its policy"},
	5598:  {`Unsupported value: "fullComparison"`, "typo: the comparison option is FullComparison, capitalised"},
	5877:  {`error parsing YAML`, "elision inside a dump: `metadata: ...` or a bare `...` line is not YAML"},
	5956:  {`error parsing YAML`, "elision inside a dump: `metadata: ...` or a bare `...` line is not YAML"},
	6147:  {`error parsing YAML`, "elision inside a dump: `metadata: ...` or a bare `...` line is not YAML"},
	6556:  {`uid mismatch`, "a dump (kubectl get -o yaml) of a live object: its metadata.uid names an object no hub has, so apply refuses it (KubeFleet's hub too)"},
	6994:  {`uid mismatch`, "a dump (kubectl get -o yaml) of a live object: its metadata.uid names an object no hub has, so apply refuses it (KubeFleet's hub too)"},
	8320:  {`uid mismatch`, "a dump (kubectl get -o yaml) of a live object: its metadata.uid names an object no hub has, so apply refuses it (KubeFleet's hub too)"},
	8616:  {`uid mismatch`, "a dump (kubectl get -o yaml) of a live object: its metadata.uid names an object no hub has, so apply refuses it (KubeFleet's hub too)"},
	8657:  {`uid mismatch`, "a dump (kubectl get -o yaml) of a live object: its metadata.uid names an object no hub has, so apply refuses it (KubeFleet's hub too)"},
	10057: {`uid mismatch`, "a dump (kubectl get -o yaml) of a live object: its metadata.uid names an object no hub has, so apply refuses it (KubeFleet's hub too)"},
}

// TestDocumentationManifests applies every fleet manifest of the KubeFleet documentation
// as `kubectl apply --server-side --dry-run=server` does, with strict field validation, to a
// real kube-apiserver serving config/crd/bases. Each is accepted, or refused with the error
// docVerdicts names (the documentation's typos, elisions and dumps of live objects). The
// documentation is not part of this repository: the test reads the *.txt files of the
// directory $FLEETSIM_KUBEFLEET_DOCS names, and is skipped, saying so, without it.
func TestDocumentationManifests(t *testing.T) {
	dir := os.Getenv(docsEnv)
	if dir == "" {
		t.Skipf("%s is not set: set it to a directory of the KubeFleet documentation as text (*.txt) to check its manifests; TestProjectManifests checks this repository's own", docsEnv)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	if len(files) == 0 {
		t.Fatalf("%s=%s: no *.txt documents there", docsEnv, dir)
	}
	var docs []docManifest
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, extractDocManifests(filepath.Base(f), string(b))...)
	}
	if len(docs) < 80 {
		t.Fatalf("extracted %d fleet manifests from the documentation, want the 80 or more it holds", len(docs))
	}
	applyManifests(t, docs, func(d docManifest) (verdict, bool) { v, ok := docVerdicts[d.line]; return v, ok }, func(seen map[string]bool) {
		var stale []int
		for line := range docVerdicts {
			found := false
			for k := range seen {
				if strings.HasSuffix(k, fmt.Sprintf(":%d", line)) {
					found = true
				}
			}
			if !found {
				stale = append(stale, line)
			}
		}
		sort.Ints(stale)
		if len(stale) > 0 {
			t.Errorf("docVerdicts names lines no extracted manifest starts at: %v", stale)
		}
	})
}

// TestProjectManifests applies every fleet manifest this repository ships (the scenario
// library's and config/'s) to a real kube-apiserver serving config/crd/bases, as
// TestDocumentationManifests does: what a user copies out of a scenario must be accepted by
// the production hub unchanged.
func TestProjectManifests(t *testing.T) {
	root := repoRoot()
	var files []string
	for _, pattern := range []string{"scenarios/*.yaml", "config/*/*.yaml"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	var docs []docManifest
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		docs = append(docs, extractDocManifests(rel, string(b))...)
	}
	if len(docs) < 100 {
		t.Fatalf("extracted %d fleet manifests from the scenario library and config/, want the 100 or more they hold", len(docs))
	}
	applyManifests(t, docs, func(d docManifest) (verdict, bool) { v, ok := projectVerdicts[d.String()]; return v, ok }, func(seen map[string]bool) {
		for k := range projectVerdicts {
			if !seen[k] {
				t.Errorf("projectVerdicts names %s, where no extracted manifest starts", k)
			}
		}
	})
}

// projectVerdicts are the repository's manifests that the API server must refuse, keyed by
// file:line: scenarios that show a refusal on purpose.
var projectVerdicts = map[string]verdict{}

// applyManifests applies docs to a fresh API server and checks each against its verdict
// (none: accepted). checkStale is handed the manifests seen, by file:line.
func applyManifests(t *testing.T, docs []docManifest, verdictOf func(docManifest) (verdict, bool), checkStale func(seen map[string]bool)) {
	t.Helper()
	cfg := testenv.Start(t)
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))

	// The namespaces the manifests name exist, as they would on a user's hub.
	namespaces := map[string]bool{"default": true}
	for _, d := range docs {
		var obj map[string]any
		if yaml.Unmarshal([]byte(d.text), &obj) == nil {
			if md, ok := obj["metadata"].(map[string]any); ok {
				if ns, ok := md["namespace"].(string); ok && ns != "" {
					namespaces[ns] = true
				}
			}
		}
	}
	for ns := range namespaces {
		if ns == "default" {
			continue
		}
		nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("namespace %s: %v", ns, err)
		}
	}

	apply := func(d docManifest) error {
		j, err := yaml.YAMLToJSON([]byte(d.text))
		if err != nil {
			return fmt.Errorf("error parsing YAML: %w", err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			return fmt.Errorf("error decoding: %w", err)
		}
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("resource mapping not found for name: %q: %w", u.GetName(), err)
		}
		r := dyn.Resource(m.Resource)
		var ri dynamic.ResourceInterface = r
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := u.GetNamespace()
			if ns == "" {
				ns = "default"
			}
			ri = r.Namespace(ns)
		}
		_, err = ri.Patch(ctx, u.GetName(), types.ApplyPatchType, j, metav1.PatchOptions{
			FieldManager:    "kubectl",
			DryRun:          []string{metav1.DryRunAll},
			FieldValidation: "Strict",
		})
		return err
	}

	var accepted, refused []string
	seen := map[string]bool{}
	for _, d := range docs {
		err := apply(d)
		v, listed := verdictOf(d)
		seen[d.String()] = true
		switch {
		case err == nil && listed:
			t.Errorf("%s: accepted, want refused with %q (%s)\n%s", d, v.want, v.why, d.text)
		case err == nil:
			accepted = append(accepted, d.String())
		case !listed:
			t.Errorf("%s: refused: %v\n%s", d, err, d.text)
		case !strings.Contains(err.Error(), v.want):
			t.Errorf("%s: refused with %v, want %q (%s)", d, err, v.want, v.why)
		default:
			refused = append(refused, d.String())
		}
	}
	checkStale(seen)
	t.Logf("%d manifests: %d accepted, %d refused as their text earns", len(docs), len(accepted), len(refused))
}

// TestExtractDocManifests: the extractor takes heredocs, stops at prose and list items
// outside the object, and keeps blank lines between top-level keys.
func TestExtractDocManifests(t *testing.T) {
	text := `Intro text:

apiVersion: placement.kubernetes-fleet.io/v1
kind: ClusterResourcePlacement
metadata:
  name: crp-1
spec:
  resourceSelectors:
  - group: ""

status: {}
When To Use it
    cat <<EOF | kubectl apply -f -
    apiVersion: cluster.kubernetes-fleet.io/v1beta1
    kind: MemberCluster
    metadata:
        name: $MEMBER_CLUSTER
    EOF
  ownerReferences:
  - apiVersion: placement.kubernetes-fleet.io/v1
`
	got := extractDocManifests("doc", text)
	want := []docManifest{
		{"doc", 3, "apiVersion: placement.kubernetes-fleet.io/v1\nkind: ClusterResourcePlacement\nmetadata:\n  name: crp-1\nspec:\n  resourceSelectors:\n  - group: \"\"\n\nstatus: {}\n"},
		{"doc", 14, "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata:\n    name: member-cluster\n"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d manifests %q, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("manifest %d:\n got %q\nwant %q", i, got[i], want[i])
		}
	}
}
