package scenarios

import (
	"slices"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// Condition statuses an expectation may ask for.
var conditionStatuses = []string{"True", "False", "Unknown"}

func (p *parser) parseExpect(n *yaml.Node) ([]Expectation, error) {
	items, err := p.list(n, "expect")
	if err != nil {
		return nil, err
	}
	var out []Expectation
	for i, item := range items {
		e, err := p.parseExpectation(item, index("expect", i))
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (p *parser) parseExpectation(n *yaml.Node, fieldPath string) (Expectation, error) {
	e := Expectation{Line: n.Line}
	if n.Kind != yaml.MappingNode {
		return e, p.errorf(n.Line, fieldPath, "must be a mapping with placement or member, not %s", describe(n))
	}
	kinds := append([]string{"placement", "member", "eviction", "updateRun", "clusterProfile", "unit"}, measuredKinds...)
	f, err := p.fields(n, fieldPath, 0, append([]string{"at"}, kinds...)...)
	if err != nil {
		return e, err
	}
	measured := slices.ContainsFunc(measuredKinds, f.present)
	if at := f.get("at"); at != nil && measured {
		return e, p.errorf(f.keyLine("at"), f.child("at"), "rollout, peakUnavailable and unhealthy are measured over the whole run and take no at (rollout has from, peakUnavailable from and until)")
	} else if at != nil {
		if e.At, err = p.simTime(at, f.child("at")); err != nil {
			return e, err
		}
	} else {
		e.At, e.AtEnd = p.duration, true
	}
	var present []string
	for _, k := range kinds {
		if f.present(k) {
			present = append(present, k)
		}
	}
	switch len(present) {
	case 0:
		return e, p.errorf(n.Line, fieldPath, "an expectation needs one of %s", strings.Join(kinds, ", "))
	case 1:
	default:
		later := present[0]
		for _, k := range present[1:] {
			if f.keyLine(k) > f.keyLine(later) {
				later = k
			}
		}
		return e, p.errorf(f.keyLine(later), fieldPath, "an expectation has exactly one of %s, found %s", strings.Join(kinds, ", "), strings.Join(present, " and "))
	}
	switch k := present[0]; k {
	case "placement":
		e.Placement, err = p.placementExpectation(f.vals[k], f.child(k), f.keyLine(k))
	case "member":
		e.Member, err = p.memberExpectation(f.vals[k], f.child(k), f.keyLine(k))
	case "eviction":
		e.Eviction, err = p.objectExpectation(f.vals[k], f.child(k), f.keyLine(k), "ClusterResourcePlacementEviction")
	case "updateRun":
		e.UpdateRun, err = p.objectExpectation(f.vals[k], f.child(k), f.keyLine(k), "ClusterStagedUpdateRun")
	case "clusterProfile":
		e.ClusterProfile, err = p.clusterProfileExpectation(f.vals[k], f.child(k), f.keyLine(k))
	case "unit":
		e.Unit, err = p.unitExpectation(f.vals[k], f.child(k), f.keyLine(k))
	case "rollout":
		e.Rollout, err = p.rolloutExpectation(f.vals[k], f.child(k), f.keyLine(k))
	case "peakUnavailable":
		e.Peak, err = p.peakExpectation(f.vals[k], f.child(k), f.keyLine(k))
	case "unhealthy":
		e.Unhealthy, err = p.unhealthyExpectation(f.vals[k], f.child(k), f.keyLine(k))
	}
	return e, err
}

func (p *parser) unitExpectation(n *yaml.Node, fieldPath string, keyLine int) (*UnitExpectation, error) {
	f, err := p.fields(n, fieldPath, keyLine, "name", "state", "machine", "machines")
	if err != nil {
		return nil, err
	}
	ue := &UnitExpectation{}
	if ue.Name, err = p.requiredString(f, "name"); err != nil {
		return nil, err
	}
	if f.get("state") == nil && f.get("machine") == nil && f.get("machines") == nil {
		return nil, p.errorf(f.line, fieldPath, "needs at least one of state, machine and machines")
	}
	if f.get("state") != nil {
		if ue.State, err = p.enum(f, "state", "", "inactive", "loaded", "launched"); err != nil {
			return nil, err
		}
	}
	if ue.Machine, _, err = p.optionalString(f, "machine"); err != nil {
		return nil, err
	}
	if ue.Machine != "" && ue.Machine != "-" && !p.knownMember(ue.Machine) {
		return nil, p.errorf(f.get("machine").Line, f.child("machine"), "unknown machine %q: not defined in members", ue.Machine)
	}
	if m := f.get("machines"); m != nil {
		items, err := p.list(m, f.child("machines"))
		if err != nil {
			return nil, err
		}
		ue.Machines = make([]string, 0, len(items))
		for i, it := range items {
			cf := index(f.child("machines"), i)
			name, err := p.scalar(it, cf)
			if err != nil {
				return nil, err
			}
			if !p.knownMember(name) {
				return nil, p.errorf(it.Line, cf, "unknown machine %q: not defined in members", name)
			}
			ue.Machines = append(ue.Machines, name)
		}
		slices.Sort(ue.Machines)
	}
	return ue, nil
}

func (p *parser) objectExpectation(n *yaml.Node, fieldPath string, keyLine int, kind string) (*ObjectExpectation, error) {
	f, err := p.fields(n, fieldPath, keyLine, "name", "condition")
	if err != nil {
		return nil, err
	}
	oe := &ObjectExpectation{}
	if oe.Name, err = p.requiredString(f, "name"); err != nil {
		return nil, err
	}
	c := f.get("condition")
	if c == nil {
		return nil, p.missing(f, "condition")
	}
	if oe.Condition, err = p.condition(c, f.child("condition")); err != nil {
		return nil, err
	}
	if err := p.checkCreated(f, "name", kind, oe.Name); err != nil {
		return nil, err
	}
	return oe, nil
}

func (p *parser) clusterProfileExpectation(n *yaml.Node, fieldPath string, keyLine int) (*ClusterProfileExpectation, error) {
	f, err := p.fields(n, fieldPath, keyLine, "name", "condition", "gone")
	if err != nil {
		return nil, err
	}
	ce := &ClusterProfileExpectation{}
	if ce.Name, err = p.requiredString(f, "name"); err != nil {
		return nil, err
	}
	if !p.knownMember(ce.Name) {
		return nil, p.errorf(f.get("name").Line, f.child("name"), "unknown member %q: not defined in members, nor created by a MemberCluster manifest", ce.Name)
	}
	if g := f.get("gone"); g != nil {
		if f.present("condition") {
			return nil, p.errorf(f.keyLine("gone"), fieldPath, "a clusterProfile expectation has either condition or gone, not both")
		}
		v, err := p.scalar(g, f.child("gone"))
		if err != nil {
			return nil, err
		}
		if v != "true" {
			return nil, p.errorf(g.Line, f.child("gone"), "must be true, not %q", v)
		}
		ce.Gone = true
		return ce, nil
	}
	c := f.get("condition")
	if c == nil {
		return nil, p.missing(f, "condition")
	}
	if ce.Condition, err = p.condition(c, f.child("condition")); err != nil {
		return nil, err
	}
	if ce.Condition.Cluster != "" {
		return nil, p.errorf(f.keyLine("condition"), f.child("condition"), "cluster is for placement conditions; a ClusterProfile describes one member already")
	}
	return ce, nil
}

func (p *parser) placementExpectation(n *yaml.Node, fieldPath string, keyLine int) (*PlacementExpectation, error) {
	f, err := p.fields(n, fieldPath, keyLine, "name", "clusters", "clusterCount", "condition", "details", "statusObject", "backReported")
	if err != nil {
		return nil, err
	}
	pe := &PlacementExpectation{}
	if pe.Name, err = p.requiredString(f, "name"); err != nil {
		return nil, err
	}
	if f.get("clusters") == nil && f.get("clusterCount") == nil && f.get("condition") == nil && f.get("details") == nil && f.get("statusObject") == nil && f.get("backReported") == nil {
		return nil, p.errorf(f.line, fieldPath, "needs at least one of clusters, clusterCount, condition, details, statusObject and backReported")
	}
	if br := f.get("backReported"); br != nil {
		bf, err := p.fields(br, f.child("backReported"), f.keyLine("backReported"), "cluster", "objects")
		if err != nil {
			return nil, err
		}
		pe.BackReported = &BackReportedExpectation{Objects: []string{}}
		if pe.BackReported.Cluster, err = p.requiredString(bf, "cluster"); err != nil {
			return nil, err
		}
		if o := bf.get("objects"); o != nil {
			items, err := p.list(o, bf.child("objects"))
			if err != nil {
				return nil, err
			}
			for i, it := range items {
				v, err := p.scalar(it, index(bf.child("objects"), i))
				if err != nil {
					return nil, err
				}
				pe.BackReported.Objects = append(pe.BackReported.Objects, v)
			}
		}
	}
	if so := f.get("statusObject"); so != nil {
		sf, err := p.fields(so, f.child("statusObject"), f.keyLine("statusObject"), "namespace", "absent")
		if err != nil {
			return nil, err
		}
		pe.StatusObject = &StatusObjectExpectation{}
		if a := sf.get("absent"); a != nil {
			v, err := p.scalar(a, sf.child("absent"))
			if err != nil {
				return nil, err
			}
			if v != "true" && v != "false" {
				return nil, p.errorf(a.Line, sf.child("absent"), "must be true or false, not %q", v)
			}
			pe.StatusObject.Absent = v == "true"
		}
		if !pe.StatusObject.Absent {
			if pe.StatusObject.Namespace, err = p.requiredString(sf, "namespace"); err != nil {
				return nil, err
			}
		}
	}
	if d := f.get("details"); d != nil {
		if pe.Details, err = p.details(d, f.child("details"), f.keyLine("details")); err != nil {
			return nil, err
		}
	}
	if c := f.get("clusters"); c != nil {
		items, err := p.list(c, f.child("clusters"))
		if err != nil {
			return nil, err
		}
		pe.Clusters = make([]string, 0, len(items))
		for i, it := range items {
			cf := index(f.child("clusters"), i)
			name, err := p.scalar(it, cf)
			if err != nil {
				return nil, err
			}
			if name == "" {
				return nil, p.errorf(it.Line, cf, "a cluster name is required")
			}
			if slices.Contains(pe.Clusters, name) {
				return nil, p.errorf(it.Line, cf, "cluster %q is listed twice", name)
			}
			if !p.knownMember(name) {
				return nil, p.errorf(it.Line, cf, "unknown member %q: not defined in members, nor created by a MemberCluster manifest", name)
			}
			pe.Clusters = append(pe.Clusters, name)
		}
		slices.Sort(pe.Clusters)
	}
	if c := f.get("clusterCount"); c != nil {
		v, err := p.int(c, f.child("clusterCount"))
		if err != nil {
			return nil, err
		}
		if v < 0 {
			return nil, p.errorf(c.Line, f.child("clusterCount"), "must not be negative")
		}
		if pe.Clusters != nil && len(pe.Clusters) != v {
			return nil, p.errorf(c.Line, f.child("clusterCount"), "is %d but clusters lists %d", v, len(pe.Clusters))
		}
		pe.ClusterCount = &v
	}
	if c := f.get("condition"); c != nil {
		if pe.Condition, err = p.condition(c, f.child("condition")); err != nil {
			return nil, err
		}
	}
	// Last, so that what is wrong in the expectation itself is said first.
	if err := p.checkPlacementCreated(f, "name", pe.Name); err != nil {
		return nil, err
	}
	return pe, nil
}

func (p *parser) memberExpectation(n *yaml.Node, fieldPath string, keyLine int) (*MemberExpectation, error) {
	f, err := p.fields(n, fieldPath, keyLine, "name", "condition", "object", "gone")
	if err != nil {
		return nil, err
	}
	me := &MemberExpectation{}
	if me.Name, err = p.requiredString(f, "name"); err != nil {
		return nil, err
	}
	if !p.knownMember(me.Name) {
		return nil, p.errorf(f.get("name").Line, f.child("name"), "unknown member %q: not defined in members, nor created by a MemberCluster manifest", me.Name)
	}
	if g := f.get("gone"); g != nil {
		if f.present("condition") || f.present("object") {
			return nil, p.errorf(f.keyLine("gone"), fieldPath, "a member expectation has one of condition, object and gone")
		}
		v, err := p.scalar(g, f.child("gone"))
		if err != nil {
			return nil, err
		}
		if v != "true" {
			return nil, p.errorf(g.Line, f.child("gone"), "must be true, not %q", v)
		}
		me.Gone = true
		return me, nil
	}
	if o := f.get("object"); o != nil {
		if f.present("condition") {
			return nil, p.errorf(f.keyLine("condition"), fieldPath, "a member expectation has either condition or object, not both")
		}
		if me.Object, err = p.memberObject(o, f.child("object"), f.keyLine("object")); err != nil {
			return nil, err
		}
		return me, nil
	}
	c := f.get("condition")
	if c == nil {
		return nil, p.missing(f, "condition")
	}
	if me.Condition, err = p.condition(c, f.child("condition")); err != nil {
		return nil, err
	}
	return me, nil
}

func (p *parser) condition(n *yaml.Node, fieldPath string) (*ConditionExpectation, error) {
	f, err := p.fields(n, fieldPath, 0, "type", "status", "reason", "cluster")
	if err != nil {
		return nil, err
	}
	c := &ConditionExpectation{}
	if c.Type, err = p.requiredString(f, "type"); err != nil {
		return nil, err
	}
	if s := f.get("status"); s != nil {
		// YAML reads a plain True or False as a boolean; keep the text as written.
		if c.Status, err = p.scalar(s, f.child("status")); err != nil {
			return nil, err
		}
		if err := p.oneOf(s, f.child("status"), c.Status, conditionStatuses...); err != nil {
			return nil, err
		}
	}
	if c.Reason, _, err = p.optionalString(f, "reason"); err != nil {
		return nil, err
	}
	if c.Cluster, _, err = p.optionalString(f, "cluster"); err != nil {
		return nil, err
	}
	if c.Cluster != "" && !p.knownMember(c.Cluster) {
		return nil, p.errorf(f.get("cluster").Line, f.child("cluster"), "unknown member %q: not defined in members, nor created by a MemberCluster manifest", c.Cluster)
	}
	return c, nil
}

func (p *parser) parseAlways(n *yaml.Node) ([]string, error) {
	items, err := p.list(n, "always")
	if err != nil {
		return nil, err
	}
	var out []string
	for i, it := range items {
		fp := index("always", i)
		name, err := p.scalar(it, fp)
		if err != nil {
			return nil, err
		}
		if _, ok := Invariants[name]; !ok {
			return nil, p.errorf(it.Line, fp, "unknown invariant %q; valid names: %s", name, strings.Join(InvariantNames(), ", "))
		}
		if slices.Contains(out, name) {
			return nil, p.errorf(it.Line, fp, "invariant %q is listed twice", name)
		}
		out = append(out, name)
	}
	return out, nil
}

func (p *parser) parseFaults(n *yaml.Node, keyLine int) (*RandomFaults, error) {
	f, err := p.fields(n, "faults", keyLine, "meanTimeBetweenFailures", "meanDuration", "modes", "until")
	if err != nil {
		return nil, err
	}
	rf := &RandomFaults{Line: keyLine}
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{{"meanTimeBetweenFailures", &rf.MeanTimeBetweenFailures}, {"meanDuration", &rf.MeanDuration}} {
		v := f.get(d.name)
		if v == nil {
			return nil, p.missing(f, d.name)
		}
		if *d.dst, err = p.durationValue(v, f.child(d.name)); err != nil {
			return nil, err
		}
		if *d.dst <= 0 {
			return nil, p.errorf(v.Line, f.child(d.name), "must be greater than 0")
		}
	}
	if m := f.get("modes"); m != nil {
		items, err := p.list(m, f.child("modes"))
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			return nil, p.errorf(m.Line, f.child("modes"), "must not be empty (leave it out for both crash and partition)")
		}
		for i, it := range items {
			fp := index(f.child("modes"), i)
			s, err := p.scalar(it, fp)
			if err != nil {
				return nil, err
			}
			if err := p.oneOf(it, fp, s, string(Crash), string(Partition)); err != nil {
				return nil, err
			}
			if slices.Contains(rf.Modes, FailMode(s)) {
				return nil, p.errorf(it.Line, fp, "mode %q is listed twice", s)
			}
			rf.Modes = append(rf.Modes, FailMode(s))
		}
	} else {
		rf.Modes = []FailMode{Crash, Partition}
	}
	if u := f.get("until"); u != nil {
		if rf.Until, err = p.simTime(u, f.child("until")); err != nil {
			return nil, err
		}
		if rf.Until == 0 {
			return nil, p.errorf(u.Line, f.child("until"), "must be greater than 0")
		}
	} else {
		rf.Until = p.duration - p.duration/4 // 3/4 of it, without overflow
	}
	return rf, nil
}

// details parses a placement expectation's details: a cluster and what its failed, drifted
// and diffed placements hold.
func (p *parser) details(n *yaml.Node, fieldPath string, keyLine int) (*DetailsExpectation, error) {
	f, err := p.fields(n, fieldPath, keyLine, "cluster", "failedReason", "driftedPaths", "diffedPaths")
	if err != nil {
		return nil, err
	}
	d := &DetailsExpectation{}
	if d.Cluster, err = p.requiredString(f, "cluster"); err != nil {
		return nil, err
	}
	if !p.knownMember(d.Cluster) {
		return nil, p.errorf(f.get("cluster").Line, f.child("cluster"), "unknown member %q: not defined in members, nor created by a MemberCluster manifest", d.Cluster)
	}
	if d.FailedReason, _, err = p.optionalString(f, "failedReason"); err != nil {
		return nil, err
	}
	paths := func(key string) ([]string, error) {
		c := f.get(key)
		if c == nil {
			return nil, nil
		}
		items, err := p.list(c, f.child(key))
		if err != nil {
			return nil, err
		}
		out := make([]string, 0, len(items))
		for i, it := range items {
			v, err := p.scalar(it, index(f.child(key), i))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		slices.Sort(out)
		return out, nil
	}
	if d.DriftedPaths, err = paths("driftedPaths"); err != nil {
		return nil, err
	}
	if d.DiffedPaths, err = paths("diffedPaths"); err != nil {
		return nil, err
	}
	if d.FailedReason == "" && d.DriftedPaths == nil && d.DiffedPaths == nil {
		return nil, p.errorf(f.line, fieldPath, "needs at least one of failedReason, driftedPaths and diffedPaths")
	}
	return d, nil
}

func (p *parser) memberObject(n *yaml.Node, fieldPath string, keyLine int) (*MemberObjectExpectation, error) {
	f, err := p.fields(n, fieldPath, keyLine, "group", "kind", "namespace", "name", "state")
	if err != nil {
		return nil, err
	}
	o := &MemberObjectExpectation{}
	if o.Kind, err = p.requiredString(f, "kind"); err != nil {
		return nil, err
	}
	if o.Name, err = p.requiredString(f, "name"); err != nil {
		return nil, err
	}
	if o.Group, _, err = p.optionalString(f, "group"); err != nil {
		return nil, err
	}
	if o.Namespace, _, err = p.optionalString(f, "namespace"); err != nil {
		return nil, err
	}
	if o.State, err = p.requiredString(f, "state"); err != nil {
		return nil, err
	}
	switch o.State {
	case ObjectOwned, ObjectUnowned, ObjectAbsent:
	default:
		return nil, p.errorf(f.get("state").Line, f.child("state"), "must be %s, %s or %s, not %q", ObjectOwned, ObjectUnowned, ObjectAbsent, o.State)
	}
	return o, nil
}
