package sim

import (
	"encoding/json"
	"fmt"
	"slices"

	jsonpatch "github.com/evanphx/json-patch/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/fleetsim/fleetsim/agentk8s"
	mhub "github.com/fleetsim/fleetsim/model/hub"
)

// objectKey names an object on a member: group, kind, namespace and name.
func objectKey(o *unstructured.Unstructured) string {
	gvk := o.GroupVersionKind()
	return gvk.Group + "/" + gvk.Kind + "/" + o.GetNamespace() + "/" + o.GetName()
}

// namespaceKey is objectKey of the Namespace name.
func namespaceKey(name string) string { return "/Namespace//" + name }

// appliedWorkOwner is the owner reference of a Work's AppliedWork on a member; its UID is
// derived from the names, so runs stay deterministic.
func appliedWorkOwner(member, work string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: agentk8s.AppliedWorkAPIVersion, Kind: agentk8s.AppliedWorkKind, Name: work,
		UID: types.UID(member + "/" + work)}
}

// MemberObject returns a copy of an object on a member cluster, nil when there is none.
func (s *Sim) MemberObject(member, group, kind, namespace, name string) *unstructured.Unstructured {
	r := s.store.members[member]
	if r == nil || r.agent == nil {
		return nil
	}
	if o := r.agent.objects[group+"/"+kind+"/"+namespace+"/"+name]; o != nil {
		return o.DeepCopy()
	}
	return nil
}

// EditMemberObject changes an object directly on a member cluster, as a person or another
// controller on the member would: an existing object gets the fields of edit merged in (maps
// merged, other values replaced; a null value removes the field) and a new generation; a
// missing one is created from edit, owned by nobody. The member agent's periodic drift check
// sees the change DriftCheckDelay later.
func (s *Sim) EditMemberObject(member string, edit *unstructured.Unstructured) error {
	return s.EditMemberObjectAs(member, DefaultEditManager, edit)
}

// EditMemberObjectAs is EditMemberObject by the field manager manager, which becomes the
// owner of the fields the edit changes or creates: a later server-side apply of a different
// value by the member agent conflicts with it unless forced.
func (s *Sim) EditMemberObjectAs(member, manager string, edit *unstructured.Unstructured) error {
	r := s.store.members[member]
	if r == nil || r.agent == nil {
		return fmt.Errorf("member %q does not exist", member)
	}
	if r.agent.systemd != nil {
		return fmt.Errorf("member %q is a machine: it has no Kubernetes objects", member)
	}
	a := r.agent
	key := objectKey(edit)
	detail := "created " + key
	if a.fields == nil {
		a.fields = fieldOwners{}
	}
	var before map[string]any
	if live := a.objects[key]; live != nil {
		before = live.Object
	}
	defer func() {
		if o := a.objects[key]; o != nil {
			a.fields.update(key, before, o.Object, manager)
		}
	}()
	if live := a.objects[key]; live != nil {
		o := live.DeepCopy()
		merged, err := mergeEdit(o.Object, edit.Object)
		if err != nil {
			return fmt.Errorf("edit %s on member %q: %w", key, member, err)
		}
		o.Object = merged
		o.SetGeneration(live.GetGeneration() + 1)
		a.objects[key] = o
		detail = "edited " + key
	} else {
		// A real API server refuses an object in a namespace it does not have; the simulated
		// member does too, so a scenario plays the same on real members.
		if ns := edit.GetNamespace(); ns != "" && a.objects[namespaceKey(ns)] == nil {
			return fmt.Errorf("create %s on member %q: namespace %q does not exist on the member (create it first with a memberEdit of the Namespace, as a real API server requires)", key, member, ns)
		}
		o := edit.DeepCopy()
		o.SetGeneration(1)
		a.objectsInit()[key] = o
	}
	s.Record("member-edit", member, detail)
	for _, w := range s.store.sortedWorks() {
		if w.Member == member {
			s.scheduleApply(member, w.Binding, w.Name, w.Generation, s.cfg.DriftCheckDelay)
		}
	}
	return nil
}

func (a *agent) objectsInit() map[string]*unstructured.Unstructured {
	if a.objects == nil {
		a.objects = map[string]*unstructured.Unstructured{}
	}
	return a.objects
}

// mergeEdit applies edit to dst as a JSON merge patch (RFC 7386: null removes a field, maps
// merge, anything else replaces), as `kubectl patch --type merge` would on a member.
func mergeEdit(dst, edit map[string]any) (map[string]any, error) {
	d, err := json.Marshal(dst)
	if err != nil {
		return nil, err
	}
	e, err := json.Marshal(edit)
	if err != nil {
		return nil, err
	}
	merged, err := jsonpatch.MergePatch(d, e)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	// utiljson keeps integers int64, as unstructured objects hold them.
	if err := utiljson.Unmarshal(merged, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Get is the member's object of manifest m (a simulated read never fails).
func (m *simMember) Get(o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return m.a.objects[objectKey(o)], nil
}

// Write performs a decision's write on the member's objects: the object gets a new
// generation (1 when created). A server-side apply that changes a field another field
// manager owns fails with the API server's Conflict error unless it forces
// (fieldmanagers.go); no other simulated write fails.
func (m *simMember) Write(d agentk8s.Decision) (*unstructured.Unstructured, error) {
	a := m.a
	o := d.Object.DeepCopy()
	key := objectKey(o)
	gen := int64(1)
	live := a.objects[key]
	var before map[string]any
	if live != nil {
		before = live.Object
	}
	if a.fields == nil {
		a.fields = fieldOwners{}
	}
	if d.Op == agentk8s.OpServerSideApply {
		if err := a.fields.serverSideApply(key, before, o.Object, agentk8s.FieldManager, d.Force); err != nil {
			return nil, err
		}
		a.fields.apply(key, before, d.Object.Object, agentk8s.FieldManager)
	}
	if live != nil {
		gen = live.GetGeneration() + 1
		if d.Op == agentk8s.OpServerSideApply {
			// Server-side apply keeps the fields other managers own. Both objects came from
			// JSON, so the merge cannot fail; if it did, the manifest alone is written.
			if merged, err := mergeEdit(live.Object, o.Object); err == nil {
				o.Object = merged
			}
		}
	}
	o.SetGeneration(gen)
	a.objectsInit()[key] = o
	if d.Op != agentk8s.OpServerSideApply {
		a.fields.update(key, before, o.Object, agentk8s.FieldManager)
	}
	return o, nil
}

// workDeleted: the member's agent removes what the deleted Work applied (WORK-APPLIEDWORK),
// when it can see the hub; otherwise it does so once it is back.
func (s *Sim) workDeleted(w *mhub.Work) {
	r := s.store.members[w.Member]
	if r == nil || r.agent == nil {
		return
	}
	if p := s.store.Placement(w.Placement); w.Abandon && (p == nil || p.Deleting) {
		// The placement is being deleted with deleteStrategy Abandon; a Work dropped for
		// any other reason (the member unscheduled) still removes what it applied.
		if r.agent.abandoned == nil {
			r.agent.abandoned = map[string]bool{}
		}
		r.agent.abandoned[w.Name] = true
	}
	if a := r.agent; !a.crashed && !a.partitioned {
		s.collectGarbage(w.Member)
	}
}

// collectGarbage drops the member objects' owner references to AppliedWorks whose Work is
// gone and deletes the objects left without any owner that the agent had owned: what a
// failed takeover left alone, or another owner holds, stays.
func (s *Sim) collectGarbage(member string) {
	r := s.store.members[member]
	if r == nil || r.agent == nil || len(r.agent.objects) == 0 {
		return
	}
	live := map[string]bool{}
	for _, w := range s.store.sortedWorks() {
		if w.Member == member {
			live[w.Name] = true
		}
	}
	a := r.agent
	for _, key := range sortedKeys(a.objects) {
		o := a.objects[key]
		refs := o.GetOwnerReferences()
		abandon := false
		kept := slices.DeleteFunc(slices.Clone(refs), func(ref metav1.OwnerReference) bool {
			gone := ref.Kind == agentk8s.AppliedWorkKind && !live[ref.Name]
			abandon = abandon || (gone && a.abandoned[ref.Name])
			return gone
		})
		if len(kept) == len(refs) {
			continue
		}
		if len(kept) == 0 && abandon {
			s.Record("member-object-abandoned", member, key)
		}
		if len(kept) == 0 && !abandon {
			delete(a.objects, key)
			s.Record("member-object-deleted", member, key)
			continue
		}
		c := o.DeepCopy()
		c.SetOwnerReferences(kept)
		a.objects[key] = c
	}
	a.since.RetainWorks(func(work string) bool { return live[work] })
	for work := range a.abandoned {
		if !live[work] {
			delete(a.abandoned, work)
		}
	}
}
