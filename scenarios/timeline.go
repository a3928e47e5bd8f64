package scenarios

import (
	"errors"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/model/member"
)

// actionKinds lists every action, in the order error messages name them.
var actionKinds = []ActionKind{
	ActionApply, ActionDelete, ActionFail, ActionHeal, ActionTaint, ActionUntaint,
	ActionLabel, ActionApprove, ActionRestartHub, ActionWorkload, ActionFleetctl, ActionSkew,
	ActionMemberEdit, ActionPartition, ActionMemberHealth,
}

// ApprovalRequestKind is the kind an `approve` step approves.
const ApprovalRequestKind = "ClusterApprovalRequest"

// AllMembers is the member name of a workload step that applies to every member.
const AllMembers = "*"

var stepKeys = func() []string {
	keys := []string{"at", "name"}
	for _, a := range actionKinds {
		keys = append(keys, string(a))
	}
	return keys
}()

// memberUse is a member name a step refers to; cluster: the step needs a cluster (it
// acts on Kubernetes objects on the member).
type memberUse struct {
	name, field string
	line        int
	cluster     bool
}

// createdMember is a member a MemberCluster manifest creates.
type createdMember struct {
	name string
	line int
}

type parsedStep struct {
	step     Step
	uses     []memberUse
	created  []createdMember
	fleetctl *fleetctlStep
	patterns []patternUse
}

func (p *parser) parseTimeline(n *yaml.Node) ([]Step, error) {
	items, err := p.list(n, "timeline")
	if err != nil {
		return nil, err
	}
	steps := make([]parsedStep, 0, len(items))
	for i, item := range items {
		ps, err := p.parseStep(item, index("timeline", i))
		if err != nil {
			return nil, err
		}
		steps = append(steps, ps)
	}
	p.fileSteps = steps
	return p.orderSteps(steps)
}

// orderSteps puts the steps read from the timeline (in file order) in time order and
// checks what needs them all: the member names they use (defined, or created by an
// earlier step), their name patterns and the fleetctl steps' unit states. steps is not
// changed (Base.Extend reads the file's steps again).
func (p *parser) orderSteps(fileOrder []parsedStep) ([]Step, error) {
	steps := slices.Clone(fileOrder)
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].step.At < steps[j].step.At })
	p.stepNames = map[string]time.Duration{}
	for _, s := range steps {
		if s.step.Name != "" {
			p.stepNames[s.step.Name] = s.step.At
		}
	}

	// Every name a MemberCluster manifest creates, anywhere, for expectations and messages.
	for _, s := range steps {
		for _, c := range s.created {
			if _, ok := p.created[c.name]; !ok {
				p.created[c.name] = c.line
			}
		}
	}
	// A step may only refer to a member defined in `members` or created by a step before it
	// in timeline order.
	createdSoFar := map[string]bool{}
	fleet := newFleetctlTable()
	var out []Step
	for _, s := range steps {
		if s.fleetctl != nil {
			if err := fleet.step(p, &s.step, s.fleetctl); err != nil {
				return nil, err
			}
		}
		for _, u := range s.uses {
			if def, ok := p.members[u.name]; ok {
				if err := p.checkDefinedUse(u, def, s.step.At); err != nil {
					return nil, err
				}
				continue
			}
			if createdSoFar[u.name] {
				continue
			}
			if line, later := p.created[u.name]; later {
				return nil, p.errorf(u.line, u.field, "member %q does not exist yet at %s: the MemberCluster that creates it is applied later (line %d)", u.name, s.step.At, line)
			}
			return nil, p.errorf(u.line, u.field, "unknown member %q: not defined in members, nor created by a MemberCluster manifest", u.name)
		}
		for _, pu := range s.patterns {
			if err := p.checkPattern(pu); err != nil {
				return nil, err
			}
		}
		for _, c := range s.created {
			createdSoFar[c.name] = true
		}
		out = append(out, s.step)
	}
	return out, nil
}

// checkDefinedUse refuses a step's use of a member of `members` that the run would refuse:
// before the member joins (the simulator adds it at joinAt), and an action on Kubernetes
// objects (memberEdit) on a Machine, which has none.
func (p *parser) checkDefinedUse(u memberUse, def memberDef, at time.Duration) error {
	g := p.groups[def.group]
	if at < g.JoinAt {
		return p.errorf(u.line, u.field, "member %q does not exist yet at %s: it joins at %s (%s, line %d)", u.name, at, g.JoinAt, def.field, def.line)
	}
	if u.cluster && g.Kind == member.KindMachine {
		return p.errorf(u.line, u.field, "member %q is a Machine (%s, line %d): memberEdit edits Kubernetes objects on a cluster, and a machine has none", u.name, def.field, def.line)
	}
	return nil
}

func (p *parser) parseStep(n *yaml.Node, field string) (parsedStep, error) {
	var ps parsedStep
	if n.Kind != yaml.MappingNode {
		return ps, p.errorf(n.Line, field, "must be a mapping with at and one action, not %s", describe(n))
	}
	f, err := p.fields(n, field, 0, stepKeys...)
	if err != nil {
		return ps, err
	}
	var actions []string
	for _, a := range actionKinds {
		if f.present(string(a)) {
			actions = append(actions, string(a))
		}
	}
	slices.SortFunc(actions, func(a, b string) int {
		ka, kb := f.keys[a], f.keys[b]
		if ka.Line != kb.Line {
			return ka.Line - kb.Line
		}
		return ka.Column - kb.Column
	})
	switch len(actions) {
	case 0:
		names := make([]string, len(actionKinds))
		for i, a := range actionKinds {
			names[i] = string(a)
		}
		return ps, p.errorf(n.Line, field, "a step needs one action: one of %s", strings.Join(names, ", "))
	case 1:
	default:
		return ps, p.errorf(f.keyLine(actions[1]), field, "a step has exactly one action, found %s and %s", actions[0], actions[1])
	}

	s := &ps.step
	s.Line = n.Line
	s.Field = field
	at := f.get("at")
	if at == nil {
		return ps, p.missing(f, "at")
	}
	if s.At, err = p.simTime(at, f.child("at")); err != nil {
		return ps, err
	}
	if nm := f.get("name"); nm != nil {
		if s.Name, err = p.requiredString(f, "name"); err != nil {
			return ps, err
		}
		if line, dup := p.stepLines[s.Name]; dup {
			return ps, p.errorf(nm.Line, f.child("name"), "step name %q is already used by the step at line %d", s.Name, line)
		}
		p.stepLines[s.Name] = nm.Line
	}

	name := actions[0]
	s.Action = ActionKind(name)
	af := f.child(name)
	aline := f.keyLine(name)
	v := f.vals[name]
	// use reads the action's target: one member (recorded as a reference, checked against
	// the members once every step is read), or a group (a pattern or a label selector) in
	// s.Select, returning "".
	use := func(g *fields, key string, allowAll bool) (string, error) {
		m, sel, err := p.memberTarget(g, allowAll)
		if err != nil {
			return "", err
		}
		if sel != nil {
			s.Select = sel
			if sel.Pattern != "" {
				ps.patterns = append(ps.patterns, patternUse{pattern: sel.Pattern, field: g.child(key), line: g.get(key).Line})
			}
			return "", nil
		}
		if !(allowAll && m == AllMembers) {
			ps.uses = append(ps.uses, memberUse{name: m, field: g.child(key), line: g.get(key).Line})
		}
		return m, nil
	}

	switch s.Action {
	case ActionApply:
		ms, created, err := p.parseApply(v, af, aline)
		if err != nil {
			return ps, err
		}
		s.Apply, ps.created = ms, created

	case ActionDelete:
		g, err := p.fields(v, af, aline, "kind", "name", "namespace")
		if err != nil {
			return ps, err
		}
		ref := &ObjectRef{}
		if ref.Kind, err = p.requiredString(g, "kind"); err != nil {
			return ps, err
		}
		if ref.Name, err = p.requiredString(g, "name"); err != nil {
			return ps, err
		}
		if ref.Namespace, _, err = p.optionalString(g, "namespace"); err != nil {
			return ps, err
		}
		s.Delete = ref

	case ActionFail:
		g, err := p.fields(v, af, aline, "member", "selector", "mode")
		if err != nil {
			return ps, err
		}
		fl := &Fail{}
		if fl.Member, err = use(g, "member", false); err != nil {
			return ps, err
		}
		mode, err := p.enum(g, "mode", string(Crash), string(Crash), string(Partition))
		if err != nil {
			return ps, err
		}
		fl.Mode = FailMode(mode)
		s.Fail = fl

	case ActionHeal:
		g, err := p.fields(v, af, aline, "member", "selector")
		if err != nil {
			return ps, err
		}
		m, err := use(g, "member", false)
		if err != nil {
			return ps, err
		}
		s.Heal = &MemberRef{Member: m}

	case ActionTaint:
		g, err := p.fields(v, af, aline, "member", "selector", "key", "value", "effect")
		if err != nil {
			return ps, err
		}
		ts := &TaintStep{}
		if ts.Member, err = use(g, "member", false); err != nil {
			return ps, err
		}
		if ts.Taint, err = p.taint(g); err != nil {
			return ps, err
		}
		s.Taint = ts

	case ActionUntaint:
		g, err := p.fields(v, af, aline, "member", "selector", "key")
		if err != nil {
			return ps, err
		}
		us := &UntaintStep{}
		if us.Member, err = use(g, "member", false); err != nil {
			return ps, err
		}
		if us.Key, err = p.requiredString(g, "key"); err != nil {
			return ps, err
		}
		if errs := validation.IsQualifiedName(us.Key); len(errs) > 0 {
			return ps, p.errorf(g.get("key").Line, g.child("key"), "invalid taint key %q: %s", us.Key, strings.Join(errs, "; "))
		}
		s.Untaint = us

	case ActionLabel:
		g, err := p.fields(v, af, aline, "member", "selector", "set", "remove")
		if err != nil {
			return ps, err
		}
		ls := &LabelStep{}
		if ls.Member, err = use(g, "member", false); err != nil {
			return ps, err
		}
		if ls.Set, err = p.labels(g.get("set"), g.child("set")); err != nil {
			return ps, err
		}
		items, err := p.list(g.get("remove"), g.child("remove"))
		if err != nil {
			return ps, err
		}
		for i, it := range items {
			k, err := p.scalar(it, index(g.child("remove"), i))
			if err != nil {
				return ps, err
			}
			if errs := validation.IsQualifiedName(k); len(errs) > 0 {
				return ps, p.errorf(it.Line, index(g.child("remove"), i), "invalid label key %q: %s", k, strings.Join(errs, "; "))
			}
			if _, both := ls.Set[k]; both {
				return ps, p.errorf(it.Line, index(g.child("remove"), i), "label %q is both set and removed", k)
			}
			if slices.Contains(ls.Remove, k) {
				return ps, p.errorf(it.Line, index(g.child("remove"), i), "label %q is removed twice", k)
			}
			ls.Remove = append(ls.Remove, k)
		}
		if len(ls.Set) == 0 && len(ls.Remove) == 0 {
			return ps, p.errorf(g.line, af, "needs labels to set or remove")
		}
		s.Label = ls

	case ActionApprove:
		g, err := p.fields(v, af, aline, "name")
		if err != nil {
			return ps, err
		}
		ref := &ObjectRef{Kind: ApprovalRequestKind}
		if ref.Name, err = p.requiredString(g, "name"); err != nil {
			return ps, err
		}
		s.Approve = ref

	case ActionRestartHub:
		if _, err := p.fields(v, af, aline); err != nil {
			return ps, err
		}

	case ActionWorkload:
		g, err := p.fields(v, af, aline, "member", "selector", "kind", "name", "namespace", "image", "behavior")
		if err != nil {
			return ps, err
		}
		w := &WorkloadStep{}
		if w.Member, err = use(g, "member", true); err != nil {
			return ps, err
		}
		if w.Kind, err = p.requiredString(g, "kind"); err != nil {
			return ps, err
		}
		if w.Name, err = p.requiredString(g, "name"); err != nil {
			return ps, err
		}
		if w.Namespace, _, err = p.optionalString(g, "namespace"); err != nil {
			return ps, err
		}
		if w.Image, _, err = p.optionalString(g, "image"); err != nil {
			return ps, err
		}
		if g.get("behavior") == nil {
			return ps, p.missing(g, "behavior")
		}
		b, err := p.enum(g, "behavior", "", string(Available), string(Unavailable), string(ApplyFails))
		if err != nil {
			return ps, err
		}
		w.Behavior = WorkloadBehavior(b)
		s.Workload = w

	case ActionMemberEdit:
		g, err := p.fields(v, af, aline, "member", "selector", "object", "fieldManager")
		if err != nil {
			return ps, err
		}
		e := &MemberEditStep{}
		if e.FieldManager, _, err = p.optionalString(g, "fieldManager"); err != nil {
			return ps, err
		}
		if n := g.get("fieldManager"); n != nil && (e.FieldManager == "" || len(e.FieldManager) > 128) {
			return ps, p.errorf(n.Line, g.child("fieldManager"), "must be 1 to 128 characters, not %q", e.FieldManager)
		}
		if e.Member, err = use(g, "member", false); err != nil {
			return ps, err
		}
		if s.Select == nil {
			ps.uses[len(ps.uses)-1].cluster = true
		}
		if e.Object, err = p.memberEditObject(g); err != nil {
			return ps, err
		}
		s.MemberEdit = e

	case ActionFleetctl:
		g, err := p.fields(v, af, aline, "command", "unit", "file")
		if err != nil {
			return ps, err
		}
		f := &FleetctlStep{}
		if g.get("command") == nil {
			return ps, p.missing(g, "command")
		}
		c, err := p.enum(g, "command", "", string(FleetctlSubmit), string(FleetctlLoad), string(FleetctlStart), string(FleetctlStop), string(FleetctlUnload), string(FleetctlDestroy))
		if err != nil {
			return ps, err
		}
		f.Command = FleetctlCommand(c)
		if f.Unit, err = p.requiredString(g, "unit"); err != nil {
			return ps, err
		}
		if f.File, _, err = p.optionalString(g, "file"); err != nil {
			return ps, err
		}
		if f.Command == FleetctlSubmit && f.File == "" {
			return ps, p.missing(g, "file")
		}
		if f.File != "" {
			switch f.Command {
			case FleetctlSubmit, FleetctlLoad, FleetctlStart:
			default:
				return ps, p.errorf(g.keyLine("file"), g.child("file"), "only submit, load and start take a unit file")
			}
		}
		file, err := p.checkFleetctl(g, f)
		if err != nil {
			return ps, err
		}
		unitLine := g.keyLine("unit")
		ps.fleetctl = &fleetctlStep{file: file, field: af, line: unitLine, commandLine: g.keyLine("command"), fileLine: g.keyLine("file")}
		s.Fleetctl = f

	case ActionSkew:
		g, err := p.fields(v, af, aline, "member", "selector", "offset")
		if err != nil {
			return ps, err
		}
		sk := &SkewStep{}
		if sk.Member, err = use(g, "member", false); err != nil {
			return ps, err
		}
		o := g.get("offset")
		if o == nil {
			return ps, p.missing(g, "offset")
		}
		if sk.Offset, err = p.durationValue(o, g.child("offset")); err != nil {
			return ps, err
		}
		s.Skew = sk

	case ActionPartition:
		g, err := p.fields(v, af, aline, "member", "selector", "for")
		if err != nil {
			return ps, err
		}
		pt := &PartitionStep{}
		if pt.Member, err = use(g, "member", false); err != nil {
			return ps, err
		}
		if d := g.get("for"); d != nil {
			if pt.For, err = p.durationValue(d, g.child("for")); err != nil {
				return ps, err
			}
			if pt.For <= 0 {
				return ps, p.errorf(d.Line, g.child("for"), "must be greater than 0 (leave it out to heal with a heal step)")
			}
		}
		s.Partition = pt

	case ActionMemberHealth:
		g, err := p.fields(v, af, aline, "member", "selector", "healthy")
		if err != nil {
			return ps, err
		}
		mh := &MemberHealthStep{}
		if mh.Member, err = use(g, "member", false); err != nil {
			return ps, err
		}
		h := g.get("healthy")
		if h == nil {
			return ps, p.missing(g, "healthy")
		}
		if mh.Healthy, err = p.boolean(h, g.child("healthy")); err != nil {
			return ps, err
		}
		s.MemberHealth = mh
	}
	return ps, nil
}

// memberEditObject reads the one object of a memberEdit step. The text must hold exactly
// one YAML document: sigs.k8s.io/yaml reads only the first, so a second one (after a ---
// line) would be dropped without a word; it is refused with its line instead.
func (p *parser) memberEditObject(g *fields) (*unstructured.Unstructured, error) {
	doc, err := p.requiredString(g, "object")
	if err != nil {
		return nil, err
	}
	n, field := g.get("object"), g.child("object")
	dec := yaml.NewDecoder(strings.NewReader(doc))
	for i := 0; ; i++ {
		var d yaml.Node
		err := safely(func() error { return dec.Decode(&d) })
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line, reason := yamlError(err)
			return nil, p.errorf(p.lineInScalar(n, max(line, 1)), field, "%s", reason)
		}
		if i > 0 && len(d.Content) > 0 && !isNull(d.Content[0]) {
			line := max(d.Content[0].Line, 1)
			return nil, p.errorf(p.lineInScalar(n, line), field, "a second YAML document starts at line %d of the object; memberEdit edits one object: write one step per object", line)
		}
	}
	o := &unstructured.Unstructured{}
	if err := safely(func() error { return sigsyaml.Unmarshal([]byte(doc), &o.Object) }); err != nil {
		return nil, p.errorf(n.Line, field, "must be one YAML object: %v", err)
	}
	if o.GetAPIVersion() == "" || o.GetKind() == "" || o.GetName() == "" {
		return nil, p.errorf(n.Line, field, "needs apiVersion, kind and metadata.name")
	}
	return o, nil
}
