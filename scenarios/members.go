package scenarios

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fleetsim/fleetsim/model/member"
)

// MaxRangeSize is the most names one {a..b} range may expand to. How many members a
// scenario may define in all is [Limits.MaxMembers].
const MaxRangeSize = 100_000

var memberKeys = []string{"name", "kind", "labels", "taints", "properties", "resources", "heartbeatPeriod", "joinAt", "metadata"}

func (p *parser) parseMembers(n *yaml.Node) ([]MemberGroup, error) {
	items, err := p.list(n, "members")
	if err != nil {
		return nil, err
	}
	var groups []MemberGroup
	total := 0
	for i, item := range items {
		g, err := p.parseMemberGroup(item, i)
		if err != nil {
			return nil, err
		}
		if total += len(g.Names); total > p.opts.Limits.MaxMembers {
			return nil, p.errorf(g.Line, index("members", i), "too many members: %s so far; the limit is %s (raise it with --max-members)", count(float64(total)), count(float64(p.opts.Limits.MaxMembers)))
		}
		groups = append(groups, g)
	}
	p.groups = groups
	return groups, nil
}

// MachineHeartbeatPeriod is the default heartbeat period of kind Machine members.
const MachineHeartbeatPeriod = 15 * time.Second

func (p *parser) parseMemberGroup(n *yaml.Node, i int) (MemberGroup, error) {
	field := index("members", i)
	g := MemberGroup{Line: n.Line, HeartbeatPeriod: member.DefaultHeartbeatPeriod}
	if isNull(n) {
		return g, p.errorf(n.Line, field, "must be a mapping with at least a name")
	}
	f, err := p.fields(n, field, 0, memberKeys...)
	if err != nil {
		return g, err
	}

	name, err := p.requiredString(f, "name")
	if err != nil {
		return g, err
	}
	nameNode := f.get("name")
	names, reason := expandRange(name)
	if reason != "" {
		return g, p.errorf(nameNode.Line, f.child("name"), "%s", reason)
	}
	for _, nm := range names {
		if errs := validation.IsDNS1123Subdomain(nm); len(errs) > 0 {
			return g, p.errorf(nameNode.Line, f.child("name"), "%q is not a valid member name: %s", nm, strings.Join(errs, "; "))
		}
	}
	// Check duplicates before recording, so that a group clashing with itself cannot happen
	// and the error names the earlier definition.
	for _, nm := range names {
		if def, dup := p.members[nm]; dup {
			return g, p.errorf(nameNode.Line, f.child("name"), "member %q is already defined by %s (line %d)", nm, def.field, def.line)
		}
	}
	for _, nm := range names {
		p.members[nm] = memberDef{field: field, line: nameNode.Line, group: i}
	}
	g.Names = names

	kind, err := p.enum(f, "kind", string(member.KindCluster), string(member.KindCluster), string(member.KindMachine))
	if err != nil {
		return g, err
	}
	g.Kind = member.Kind(kind)

	if g.Labels, err = p.labels(f.get("labels"), f.child("labels")); err != nil {
		return g, err
	}
	if g.Taints, err = p.taints(f.get("taints"), f.child("taints")); err != nil {
		return g, err
	}
	if g.Properties, err = p.properties(f.get("properties"), f.child("properties")); err != nil {
		return g, err
	}
	if g.Resources, err = p.resources(f.get("resources"), f.child("resources")); err != nil {
		return g, err
	}
	if g.Kind == member.KindMachine {
		// fleetd beats at half its 30 s machine TTL; at the clusters' 60 s a machine would
		// count as gone half of the time.
		g.HeartbeatPeriod = MachineHeartbeatPeriod
	}
	if hp := f.get("heartbeatPeriod"); hp != nil {
		d, err := p.durationValue(hp, f.child("heartbeatPeriod"))
		if err != nil {
			return g, err
		}
		if d < member.MinHeartbeatPeriod || d > member.MaxHeartbeatPeriod {
			return g, p.errorf(hp.Line, f.child("heartbeatPeriod"), "%s is out of range: must be from %s to %s", d, member.MinHeartbeatPeriod, member.MaxHeartbeatPeriod)
		}
		if d%time.Second != 0 {
			return g, p.errorf(hp.Line, f.child("heartbeatPeriod"), "%s is not a whole number of seconds (heartbeatPeriodSeconds is an integer)", d)
		}
		g.HeartbeatPeriod = d
	}
	if j := f.get("joinAt"); j != nil {
		if g.JoinAt, err = p.simTime(j, f.child("joinAt")); err != nil {
			return g, err
		}
	}
	if md := f.get("metadata"); md != nil {
		if g.Kind != member.KindMachine {
			return g, p.errorf(f.keyLine("metadata"), f.child("metadata"), "only allowed with kind Machine (use labels for clusters)")
		}
		if g.Metadata, err = p.metadata(md, f.child("metadata")); err != nil {
			return g, err
		}
	}
	return g, nil
}

var rangeRE = regexp.MustCompile(`\{([0-9]+)\.\.([0-9]+)\}`)

// expandRange expands the one numeric range {a..b} a member name may hold: c{1..3} → c1 c2 c3;
// a bound written with a leading zero pads every number to the wider bound: c{01..10} → c01 …
// c10. It returns a reason when the name is malformed.
func expandRange(name string) ([]string, string) {
	locs := rangeRE.FindAllStringSubmatchIndex(name, -1)
	switch {
	case len(locs) > 1:
		return nil, fmt.Sprintf("%q has %d ranges; a name may hold at most one {first..last} range", name, len(locs))
	case len(locs) == 0:
		if strings.ContainsAny(name, "{}") {
			return nil, fmt.Sprintf("%q: a range is written {first..last} with decimal numbers, e.g. member-{1..10}", name)
		}
		return []string{name}, ""
	}
	loc := locs[0]
	prefix, suffix := name[:loc[0]], name[loc[1]:]
	if strings.ContainsAny(prefix, "{}") || strings.ContainsAny(suffix, "{}") {
		return nil, fmt.Sprintf("%q: a range is written {first..last} with decimal numbers, e.g. member-{1..10}", name)
	}
	as, bs := name[loc[2]:loc[3]], name[loc[4]:loc[5]]
	a, errA := strconv.ParseInt(as, 10, 64)
	b, errB := strconv.ParseInt(bs, 10, 64)
	if errA != nil || errB != nil {
		return nil, fmt.Sprintf("%q: range bounds are too large", name)
	}
	if a > b {
		return nil, fmt.Sprintf("%q: range start %d is greater than its end %d", name, a, b)
	}
	if b-a >= MaxRangeSize {
		return nil, fmt.Sprintf("%q expands to %d names; a range may expand to at most %d", name, uint64(b-a)+1, MaxRangeSize)
	}
	width := 0
	if (len(as) > 1 && as[0] == '0') || (len(bs) > 1 && bs[0] == '0') {
		width = max(len(as), len(bs))
	}
	names := make([]string, 0, b-a+1)
	for i := a; i <= b; i++ {
		names = append(names, fmt.Sprintf("%s%0*d%s", prefix, width, i, suffix))
	}
	return names, ""
}

// labels reads a label map, checking keys and values as Kubernetes does.
func (p *parser) labels(n *yaml.Node, field string) (map[string]string, error) {
	es, err := p.entries(n, field)
	if err != nil || len(es) == 0 {
		return nil, err
	}
	out := make(map[string]string, len(es))
	for _, e := range es {
		if errs := validation.IsQualifiedName(e.key); len(errs) > 0 {
			return nil, p.errorf(e.line, key(field, e.key), "invalid label key: %s", strings.Join(errs, "; "))
		}
		v, err := p.scalar(e.val, key(field, e.key))
		if err != nil {
			return nil, err
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, p.errorf(e.val.Line, key(field, e.key), "invalid label value %q: %s", v, strings.Join(errs, "; "))
		}
		out[e.key] = v
	}
	return out, nil
}

var taintKeys = []string{"key", "value", "effect"}

func (p *parser) taints(n *yaml.Node, field string) ([]member.Taint, error) {
	items, err := p.list(n, field)
	if err != nil {
		return nil, err
	}
	var out []member.Taint
	seen := map[string]int{}
	for i, item := range items {
		tf := index(field, i)
		f, err := p.fields(item, tf, 0, taintKeys...)
		if err != nil {
			return nil, err
		}
		t, err := p.taint(f)
		if err != nil {
			return nil, err
		}
		id := t.Key + ":" + string(t.Effect)
		if first, dup := seen[id]; dup {
			return nil, p.errorf(item.Line, tf, "duplicate taint %s (same key and effect as %s)", t, index(field, first))
		}
		seen[id] = i
		out = append(out, t)
	}
	return out, nil
}

// taint reads key, value and effect (default NoSchedule) from f.
func (p *parser) taint(f *fields) (member.Taint, error) {
	var t member.Taint
	var err error
	if t.Key, err = p.requiredString(f, "key"); err != nil {
		return t, err
	}
	if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
		return t, p.errorf(f.get("key").Line, f.child("key"), "invalid taint key %q: %s", t.Key, strings.Join(errs, "; "))
	}
	if t.Value, _, err = p.optionalString(f, "value"); err != nil {
		return t, err
	}
	if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
		return t, p.errorf(f.get("value").Line, f.child("value"), "invalid taint value %q: %s", t.Value, strings.Join(errs, "; "))
	}
	effect, err := p.enum(f, "effect", string(member.NoSchedule), string(member.NoSchedule))
	t.Effect = member.TaintEffect(effect)
	return t, err
}

// properties reads non-resource properties: name → quantity.
func (p *parser) properties(n *yaml.Node, field string) (map[string]string, error) {
	es, err := p.entries(n, field)
	if err != nil || len(es) == 0 {
		return nil, err
	}
	out := make(map[string]string, len(es))
	for _, e := range es {
		ef := key(field, e.key)
		if errs := validation.IsQualifiedName(e.key); len(errs) > 0 {
			return nil, p.errorf(e.line, ef, "invalid property name: %s", strings.Join(errs, "; "))
		}
		if strings.HasPrefix(e.key, member.ResourcePropertyPrefix) {
			return nil, p.errorf(e.line, ef, "resource properties come from resources (capacity, allocatable, available), not properties")
		}
		v, _, err := p.quantity(e.val, ef)
		if err != nil {
			return nil, err
		}
		out[e.key] = v
	}
	return out, nil
}

// quantity reads a resource quantity such as 4, 500m or 16Gi, returning its text as written.
func (p *parser) quantity(n *yaml.Node, field string) (string, resource.Quantity, error) {
	if isNull(n) {
		return "", resource.Quantity{}, p.errorf(lineOf(n), field, "a quantity is required (e.g. 4, 500m or 16Gi)")
	}
	s, err := p.scalar(n, field)
	if err != nil {
		return "", resource.Quantity{}, err
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return "", q, p.errorf(n.Line, field, "%q is not a quantity (e.g. 4, 500m or 16Gi): %v", s, err)
	}
	return s, q, nil
}

var resourceKeys = []string{"capacity", "allocatable", "available"}

func (p *parser) resources(n *yaml.Node, field string) (member.ResourceUsage, error) {
	var u member.ResourceUsage
	f, err := p.fields(n, field, 0, resourceKeys...)
	if err != nil {
		return u, err
	}
	for _, part := range []struct {
		name string
		dst  *member.ResourceList
	}{{"capacity", &u.Capacity}, {"allocatable", &u.Allocatable}, {"available", &u.Available}} {
		es, err := p.entries(f.get(part.name), f.child(part.name))
		if err != nil {
			return u, err
		}
		for _, e := range es {
			ef := key(f.child(part.name), e.key)
			if errs := validation.IsQualifiedName(e.key); len(errs) > 0 {
				return u, p.errorf(e.line, ef, "invalid resource name: %s", strings.Join(errs, "; "))
			}
			s, q, err := p.quantity(e.val, ef)
			if err != nil {
				return u, err
			}
			if q.Sign() < 0 {
				return u, p.errorf(e.val.Line, ef, "%s is negative", s)
			}
			if *part.dst == nil {
				*part.dst = member.ResourceList{}
			}
			(*part.dst)[e.key] = q
		}
	}
	return u, nil
}

// metadata reads fleet machine metadata: key → one value.
func (p *parser) metadata(n *yaml.Node, field string) (map[string][]string, error) {
	es, err := p.entries(n, field)
	if err != nil || len(es) == 0 {
		return nil, err
	}
	out := make(map[string][]string, len(es))
	for _, e := range es {
		ef := key(field, e.key)
		if e.key == "" {
			return nil, p.errorf(e.line, field, "metadata keys must not be empty")
		}
		var vals []string
		if e.val != nil && e.val.Kind == yaml.SequenceNode {
			// fleetd's metadata option has one value per key (a repeated key keeps the last).
			return nil, p.errorf(e.line, ef, "a machine has one value per metadata key; a unit's MachineMetadata lists the values it accepts")
		} else {
			v, err := p.scalar(e.val, ef)
			if err != nil {
				return nil, err
			}
			vals = []string{v}
		}
		if len(vals) == 0 {
			return nil, p.errorf(e.line, ef, "needs at least one value")
		}
		for i, v := range vals {
			if v == "" {
				return nil, p.errorf(e.line, ef, "value %d is empty", i)
			}
		}
		out[e.key] = vals
	}
	return out, nil
}
