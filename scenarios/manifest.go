package scenarios

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/apis/kinds"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/staged"
)

// The MemberCluster kind, accepted unchanged from KubeFleet.
const (
	ClusterGroupVersion = "cluster.kubernetes-fleet.io/v1beta1"
	KindMemberCluster   = "MemberCluster"
)

// chunk is the text of one YAML document of an apply string, and the 0-based line of the
// string it starts at.
type chunk struct {
	start int
	text  string
}

// splitDocuments splits an apply string where a line starts with "---" followed by nothing
// but blanks or a comment, as kubectl does.
func splitDocuments(text string) []chunk {
	var out []chunk
	var b strings.Builder
	start := 0
	for i, l := range strings.SplitAfter(text, "\n") {
		if rest, ok := strings.CutPrefix(l, "---"); ok {
			if rest = strings.TrimSpace(rest); rest == "" || rest[0] == '#' {
				out = append(out, chunk{start: start, text: b.String()})
				b.Reset()
				start = i + 1
				continue
			}
		}
		b.WriteString(l)
	}
	return append(out, chunk{start: start, text: b.String()})
}

// parseApply reads the documents of an apply step. keyLine is the line of the apply key.
func (p *parser) parseApply(v *yaml.Node, fieldPath string, keyLine int) ([]Manifest, []createdMember, error) {
	n := resolve(v)
	if isNull(n) || n.Kind != yaml.ScalarNode {
		line := keyLine
		if !isNull(n) {
			line = n.Line
		}
		return nil, nil, p.errorf(line, fieldPath, "must be a string holding YAML manifests separated by --- lines (write `apply: |` and indent the manifests under it)")
	}
	// In a literal block scalar every line of the string is a line of the file, starting
	// on the line after the `|`; other styles fold lines, so they all point at the scalar.
	exact := n.Style&yaml.LiteralStyle != 0
	fileLine := func(rel int) int { // rel: 0-based line of the string
		if exact {
			return n.Line + 1 + rel
		}
		return n.Line
	}

	var manifests []Manifest
	var created []createdMember
	type objectID struct{ kind, namespace, name string }
	seen := map[objectID]int{}
	for _, c := range splitDocuments(n.Value) {
		m, name, err := p.parseManifest(c, fieldPath, len(manifests), fileLine)
		if err != nil {
			return nil, nil, err
		}
		if m == nil {
			continue // an empty document
		}
		id := objectID{m.Object.GetKind(), m.Object.GetNamespace(), m.Object.GetName()}
		if first, dup := seen[id]; dup {
			return nil, nil, p.errorf(m.Line, manifestLabel(index(fieldPath, len(manifests)), id.kind, id.name),
				"the same kind, namespace and name as %s (line %d)", index(fieldPath, first), manifests[first].Line)
		}
		seen[id] = len(manifests)
		p.objects[id.kind+"/"+id.name] = true
		if name != "" {
			created = append(created, createdMember{name: name, line: m.Line})
		}
		manifests = append(manifests, *m)
	}
	if len(manifests) == 0 {
		return nil, nil, p.errorf(n.Line, fieldPath, "holds no manifest")
	}
	return manifests, created, nil
}

func manifestLabel(base, kind, name string) string {
	if kind == "" || name == "" {
		return base
	}
	return fmt.Sprintf("%s (%s %s)", base, kind, name)
}

// parseManifest decodes one document. It returns a nil manifest for an empty document, and
// the member name when the document is a MemberCluster.
func (p *parser) parseManifest(c chunk, fieldPath string, idx int, fileLine func(int) int) (*Manifest, string, error) {
	label := index(fieldPath, idx)
	// at converts a 1-based line of the chunk to a line of the file.
	at := func(line int) int { return fileLine(c.start + max(line, 1) - 1) }

	dec := yaml.NewDecoder(strings.NewReader(c.text))
	var doc yaml.Node
	err := safely(func() error { return dec.Decode(&doc) })
	if errors.Is(err, io.EOF) {
		return nil, "", nil
	}
	if err != nil {
		line, reason := yamlError(err)
		return nil, "", p.errorf(at(line), label, "%s", reason)
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, "", nil
	}
	var next yaml.Node
	switch err := safely(func() error { return dec.Decode(&next) }); {
	case errors.Is(err, io.EOF):
	case err != nil:
		line, reason := yamlError(err)
		return nil, "", p.errorf(at(line), label, "%s", reason)
	default:
		return nil, "", p.errorf(at(next.Line), label, "a second document starts here; separate documents with a line holding only ---")
	}
	root := resolve(doc.Content[0])
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, "", p.errorf(at(lineOf(root)), label, "a manifest must be a mapping, not %s", describe(root))
	}
	docLine := at(root.Line)
	if k, line, first, dup := duplicateKey(root, 0); dup {
		return nil, "", p.errorf(at(line), label, "duplicate key %q (first at line %d)", k, at(first))
	}

	var j []byte
	if err := safely(func() (err error) { j, err = sigsyaml.YAMLToJSON([]byte(c.text)); return err }); err != nil {
		return nil, "", p.errorf(docLine, label, "%s", cleanJSONError(err))
	}
	var obj map[string]any
	if err := safely(func() error { return utiljson.Unmarshal(j, &obj) }); err != nil || obj == nil {
		return nil, "", p.errorf(docLine, label, "a manifest must be a mapping")
	}

	apiVersion, avOK := obj["apiVersion"].(string)
	kind, kindOK := obj["kind"].(string)
	meta, metaOK := obj["metadata"].(map[string]any)
	name, nameOK := meta["name"].(string)
	label = manifestLabel(label, kind, name)
	fail := func(fe *field.Error) error {
		return p.errorf(at(locate(root, fe.Field)), label, "%s", fe.Error())
	}
	for _, f := range []struct {
		path  string
		value any
		ok    bool
	}{{"apiVersion", obj["apiVersion"], avOK}, {"kind", obj["kind"], kindOK}, {"metadata", obj["metadata"], metaOK}, {"metadata.name", meta["name"], nameOK}} {
		fp := field.NewPath(f.path)
		if f.path == "metadata.name" {
			fp = field.NewPath("metadata", "name")
		}
		switch {
		case f.value == nil:
			return nil, "", fail(field.Required(fp, ""))
		case !f.ok && f.path == "metadata":
			return nil, "", fail(field.Invalid(fp, f.value, "must be a mapping"))
		case !f.ok:
			return nil, "", fail(field.Invalid(fp, f.value, "must be a string"))
		case f.value == "":
			return nil, "", fail(field.Required(fp, ""))
		}
	}

	if fe := validateObjectName(apiVersion, kind, name, meta["namespace"]); fe != nil {
		return nil, "", fail(fe)
	}

	// KubeFleet serves its kinds at several versions with one schema and stores them as
	// v1beta1; so does the simulator.
	stored, served, why := kinds.Stored(apiVersion, kind)
	if !served {
		return nil, "", fail(field.Invalid(field.NewPath("apiVersion"), apiVersion, why))
	}
	if stored != apiVersion {
		apiVersion = stored
		obj["apiVersion"] = stored
		if j, err = utiljson.Marshal(obj); err != nil {
			return nil, "", p.errorf(docLine, label, "%s", err)
		}
	}

	var memberName string
	switch {
	case apiVersion == placement.GroupVersion && kind == placement.KindPlacement:
		var crp placement.ClusterResourcePlacement
		var strict []error
		if err := safely(func() (err error) { strict, err = sigsjson.UnmarshalStrict(j, &crp); return err }); err != nil {
			path, reason := decodeError(err)
			return nil, "", p.errorf(at(locate(root, path)), label, "%s", reason)
		}
		if len(strict) > 0 {
			path, reason := decodeError(strict[0])
			return nil, "", p.errorf(at(locate(root, path)), label, "%s", reason)
		}
		if errs := placement.ValidatePlacement(&crp); len(errs) > 0 {
			return nil, "", fail(errs[0])
		}
	case apiVersion == placement.GroupVersion && kind == staged.KindStrategy:
		if fe := validateWaitTimes(obj); fe != nil {
			return nil, "", fail(fe)
		}
		var st staged.ClusterStagedUpdateStrategy
		if path, reason, bad := decodeStrict(j, &st); bad {
			return nil, "", p.errorf(at(locate(root, path)), label, "%s", reason)
		}
		if errs := staged.ValidateStrategy(&st); len(errs) > 0 {
			return nil, "", fail(errs[0])
		}
	case apiVersion == placement.GroupVersion && kind == staged.KindRun:
		var run staged.ClusterStagedUpdateRun
		if path, reason, bad := decodeStrict(j, &run); bad {
			return nil, "", p.errorf(at(locate(root, path)), label, "%s", reason)
		}
		if errs := staged.ValidateRun(&run); len(errs) > 0 {
			return nil, "", fail(errs[0])
		}
	case apiVersion == placement.GroupVersion && (kind == resources.KindResourceEnvelope || kind == resources.KindClusterResourceEnvelope):
		// The envelope CRDs' rules on data, among them at most resources.MaxEnvelopeEntries
		// entries: the API server refuses the same envelope (ENV-CRDS, ENV-MAX-ENTRIES).
		if fe := resources.ValidateEnvelope(&unstructured.Unstructured{Object: obj}); fe != nil {
			return nil, "", fail(fe)
		}
	case apiVersion == ClusterGroupVersion && kind == KindMemberCluster:
		if fe := validateMemberCluster(obj, name); fe != nil {
			return nil, "", fail(fe)
		}
		memberName = name
	}
	return &Manifest{Line: docLine, Object: &unstructured.Unstructured{Object: obj}}, memberName, nil
}

// validateObjectName checks metadata.name and metadata.namespace as the API server does:
// a Namespace's name is a DNS-1123 label, an RBAC object's a path segment (it may hold ':'
// as in system:controller:x), any other object's a DNS-1123 subdomain; a namespace is a
// DNS-1123 label.
func validateObjectName(apiVersion, kind, name string, namespace any) *field.Error {
	np := field.NewPath("metadata", "name")
	var errs []string
	switch {
	case apiVersion == "v1" && kind == "Namespace":
		errs = validation.IsDNS1123Label(name)
	case strings.HasPrefix(apiVersion, "rbac.authorization.k8s.io/"):
		errs = pathSegmentName(name)
	default:
		errs = validation.IsDNS1123Subdomain(name)
	}
	if len(errs) > 0 {
		return field.Invalid(np, name, strings.Join(errs, "; "))
	}
	if namespace == nil {
		return nil
	}
	sp := field.NewPath("metadata", "namespace")
	ns, ok := namespace.(string)
	if !ok {
		return field.Invalid(sp, namespace, "must be a string")
	}
	if ns == "" {
		return nil
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return field.Invalid(sp, ns, strings.Join(errs, "; "))
	}
	return nil
}

// decodeStrict decodes j into out, refusing unknown and duplicate fields; bad says it failed,
// path and reason say where and why.
func decodeStrict(j []byte, out any) (path, reason string, bad bool) {
	var strict []error
	if err := safely(func() (err error) { strict, err = sigsjson.UnmarshalStrict(j, out); return err }); err != nil {
		path, reason = decodeError(err)
		return path, reason, true
	}
	if len(strict) > 0 {
		path, reason = decodeError(strict[0])
		return path, reason, true
	}
	return "", "", false
}

// validateWaitTimes checks each after-stage task's waitTime as written (a parsed duration
// no longer shows "01h" or a bare "0").
func validateWaitTimes(obj map[string]any) *field.Error {
	stages, _, _ := unstructured.NestedSlice(obj, "spec", "stages")
	for i, s := range stages {
		st, _ := s.(map[string]any)
		tasks, _ := st["afterStageTasks"].([]any)
		for k, t := range tasks {
			task, _ := t.(map[string]any)
			if w, ok := task["waitTime"].(string); ok {
				if errs := staged.ValidateWaitTime(w, field.NewPath("spec", "stages").Index(i).Child("afterStageTasks").Index(k).Child("waitTime")); len(errs) > 0 {
					return errs[0]
				}
			}
		}
	}
	return nil
}

// pathSegmentName is the API server's rule for names that need only be a path segment.
func pathSegmentName(name string) []string {
	switch {
	case name == "." || name == "..":
		return []string{fmt.Sprintf("may not be '%s'", name)}
	case strings.ContainsAny(name, "/%"):
		return []string{"may not contain '/' or '%'"}
	}
	return nil
}

// MaxMemberNameLength: a member's name goes into its reserved namespace's, which is a label.
const MaxMemberNameLength = 63

// validateMemberCluster checks what the simulator relies on: a valid name of at most 63
// characters, the heartbeat period's limits and NoSchedule taints (MC-API).
func validateMemberCluster(obj map[string]any, name string) *field.Error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return field.Invalid(field.NewPath("metadata", "name"), name, strings.Join(errs, "; "))
	}
	if len(name) > MaxMemberNameLength {
		return field.TooLong(field.NewPath("metadata", "name"), name, MaxMemberNameLength)
	}
	sp := field.NewPath("spec")
	raw, ok := obj["spec"]
	if !ok || raw == nil {
		return nil
	}
	spec, ok := raw.(map[string]any)
	if !ok {
		return field.Invalid(sp, raw, "must be a mapping")
	}
	if hb, ok := spec["heartbeatPeriodSeconds"]; ok && hb != nil {
		hp := sp.Child("heartbeatPeriodSeconds")
		v, isInt := hb.(int64)
		if !isInt {
			return field.Invalid(hp, hb, "must be an integer")
		}
		lo, hi := int64(member.MinHeartbeatPeriod.Seconds()), int64(member.MaxHeartbeatPeriod.Seconds())
		if v < lo || v > hi {
			return field.Invalid(hp, v, fmt.Sprintf("must be between %d and %d", lo, hi))
		}
	}
	if rt, ok := spec["taints"]; ok && rt != nil {
		tp := sp.Child("taints")
		taints, ok := rt.([]any)
		if !ok {
			return field.Invalid(tp, rt, "must be a list")
		}
		for i, raw := range taints {
			ip := tp.Index(i)
			t, ok := raw.(map[string]any)
			if !ok {
				return field.Invalid(ip, raw, "must be a mapping")
			}
			k, _ := t["key"].(string)
			if k == "" {
				return field.Required(ip.Child("key"), "")
			}
			if errs := validation.IsQualifiedName(k); len(errs) > 0 {
				return field.Invalid(ip.Child("key"), k, strings.Join(errs, "; "))
			}
			if v, ok := t["value"]; ok && v != nil {
				if s, isStr := v.(string); !isStr {
					return field.Invalid(ip.Child("value"), v, "must be a string")
				} else if errs := validation.IsValidLabelValue(s); len(errs) > 0 {
					return field.Invalid(ip.Child("value"), s, strings.Join(errs, "; "))
				}
			}
			e, ok := t["effect"]
			if !ok || e == nil || e == "" {
				return field.Required(ip.Child("effect"), "")
			}
			if e != string(member.NoSchedule) {
				return field.NotSupported(ip.Child("effect"), e, []string{string(member.NoSchedule)})
			}
		}
	}
	return nil
}

var (
	typeErrorRE   = regexp.MustCompile(`^json: cannot unmarshal (.+) into Go struct field [^.\s]*\.(\S+) of type (\S+)$`)
	strictErrorRE = regexp.MustCompile(`^(?:json: )?(unknown|duplicate) field "(.*)"$`)
)

// decodeError turns a strict decoding error into the field path it names and a reason in
// the style of field.Error.
func decodeError(err error) (path, reason string) {
	msg := err.Error()
	if m := typeErrorRE.FindStringSubmatch(msg); m != nil {
		typ := m[3]
		if i := strings.LastIndexByte(typ, '.'); i >= 0 {
			typ = typ[i+1:]
		}
		return m[2], fmt.Sprintf("%s: Invalid value: cannot decode %s as %s", m[2], m[1], typ)
	}
	if m := strictErrorRE.FindStringSubmatch(msg); m != nil {
		return m[2], fmt.Sprintf("%s: %s field", m[2], m[1])
	}
	return "", cleanJSONError(err)
}

func cleanJSONError(err error) string {
	msg := err.Error()
	for _, prefix := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	if rest, ok := strings.CutPrefix(msg, "yaml: "); ok {
		msg = "invalid YAML: " + rest
	}
	return strings.Join(strings.Fields(msg), " ")
}

// duplicateKey finds the first mapping key that appears twice under n, without following
// aliases (their targets are checked where they are defined). It returns the key, its line
// and the line of its first occurrence.
func duplicateKey(n *yaml.Node, depth int) (string, int, int, bool) {
	if n == nil || depth > 10000 {
		return "", 0, 0, false
	}
	switch n.Kind {
	case yaml.MappingNode:
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode && k.ShortTag() != "!!merge" {
				if first, dup := seen[k.Value]; dup {
					return k.Value, k.Line, first, true
				}
				seen[k.Value] = k.Line
			}
			if k, l, f, dup := duplicateKey(n.Content[i+1], depth+1); dup {
				return k, l, f, dup
			}
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			if k, l, f, dup := duplicateKey(c, depth+1); dup {
				return k, l, f, dup
			}
		}
	}
	return "", 0, 0, false
}

// locate returns the line of the deepest node of root that a field path such as
// spec.policy.clusterNames[2] or metadata.labels[example.com/x] reaches; the root's line
// when nothing matches.
func locate(root *yaml.Node, path string) int {
	n, line := root, lineOf(root)
	for _, tok := range splitFieldPath(path) {
		n = resolve(n)
		if n == nil {
			break
		}
		var next *yaml.Node
		nextLine := 0
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == tok {
					next, nextLine = n.Content[i+1], k.Line
					break
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
				nextLine = lineOf(resolve(next))
			}
		}
		if next == nil {
			break
		}
		n, line = next, nextLine
	}
	return line
}

// splitFieldPath splits a field path into keys and indices: a.b[0][k.x].c → a b 0 k.x c.
func splitFieldPath(path string) []string {
	var toks []string
	for i := 0; i < len(path); {
		switch path[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return append(toks, path[i+1:])
			}
			toks = append(toks, path[i+1:i+end])
			i += end + 1
		default:
			end := strings.IndexAny(path[i:], ".[")
			if end < 0 {
				return append(toks, path[i:])
			}
			toks = append(toks, path[i:i+end])
			i += end
		}
	}
	return toks
}
