package hub

// Consistency and parallelism of the hub's decisions.
//
// Decisions read the manager's informer cache, which lags the API server. Three rules keep
// them as safe as decisions on fresh reads:
//
//  1. Read your own writes. Every write a decision makes through the hub's client is
//     remembered with the resourceVersion the API server answered (for a deletion: any later
//     version, or the object gone), the placement the object belongs to (its own name
//     for a placement, the parent-CRP label for bindings, snapshots and Works; none for
//     anything else) and the member it concerns (a MemberCluster or InternalMemberCluster
//     by name, the member's reserved namespace and what is in it, a binding's target).
//     Before a decision reads, it waits until the cache has observed every write the hub
//     made so far to objects of its own placement and to objects of no placement or
//     member (expectations, bounded by expectationWait), and before it first reads a
//     member, for the writes to members; a membership decision waits for the writes
//     concerning its member. A decision reads nothing of another placement or
//     member (its scope, rule 3), so it never decides on less than the previous decisions
//     wrote, and decisions about different placements or members do not wait for each
//     other's writes.
//  2. Write what you read. Every update carries the resourceVersion the decision read, and
//     deletions of objects only the hub writes carry it as a precondition. A decision made
//     on a cache that missed someone else's write (a user, a member agent) fails with a
//     Conflict; a Conflict, AlreadyExists or NotFound from a write retries the decision on
//     fresh objects instead of applying it.
//  3. Serial where decisions overlap. The decisions about a whole placement (policy and
//     resource snapshots, scheduler, rollout, eviction, a staged update run of the
//     placement) are serial per placement: they take the placement's lock exclusively.
//     The decisions about one binding (work generator, Work status fan-in) are serial per
//     binding and take the placement's lock shared: they run in parallel with each other,
//     never beside a placement-wide decision for the same placement (a scheduler's flush
//     cut by a binding-status write would leave a placement half-decided). Decisions about
//     different placements run in parallel, at most Workers at a time. Membership
//     decisions are serial per member (their controller's queue), run Workers at a time
//     for different members, and read only indexed counts of other objects.
//
// A hub that dies at any point leaves a prefix of some decisions' writes; the next hub reads
// what is stored and decides again, as before.

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/membership"
)

// expectationWait bounds how long a decision waits for the cache to observe earlier writes;
// past it the decision goes ahead and relies on resourceVersion preconditions.
const expectationWait = 10 * time.Second

type objectKey struct {
	gvk             schema.GroupVersionKind
	namespace, name string
}

// expectations track the resourceVersions the cache must have observed before the next
// decision reads from it.
type expectations struct {
	mu       sync.Mutex
	observed map[objectKey]uint64       // the newest resourceVersion the informers delivered
	pending  map[objectKey]pendingWrite // what the cache must reach, per object written
	changed  chan struct{}              // closed and replaced when observed moves
	tracked  map[schema.GroupVersionKind]bool
}

// pendingWrite is a write the cache has not shown yet: the resourceVersion (at least) it
// must reach, and whose object it is.
type pendingWrite struct {
	rv uint64
	owner
}

// owner says which decisions read an object: the placement it belongs to, the member it
// concerns and, for a binding or a Work, the binding ("" for none).
type owner struct {
	placement, member, binding string
}

// waitFor says which pending writes a decision waits for.
type waitFor func(k objectKey, o owner) bool

// writesOf waits for the writes to the objects of one placement, to objects of no
// placement and to any object named key (what a decision's lock reads before its placement
// is known).
func writesOf(placement, key string) waitFor {
	return func(k objectKey, o owner) bool {
		if o.placement == "" {
			return o.member == "" || k.name == key
		}
		return o.placement == placement || k.name == key
	}
}

// memberWrites are the writes to members (MemberClusters, their InternalMemberClusters and
// reserved namespaces): a decision waits for them when it first reads a member, as most
// decisions (the fan-in of a member's report) never do.
func memberWrites(_ objectKey, o owner) bool { return o.placement == "" && o.member != "" }

// writesOfBinding is writesOf for a decision about one binding of placement, which reads
// the placement's own objects and that binding and its Work but no other binding or Work:
// fan-ins of a hundred members' reports about one placement then do not wait for each
// other's writes.
func writesOfBinding(placement, binding string) waitFor {
	all := writesOf(placement, binding)
	return func(k objectKey, o owner) bool {
		if o.placement == placement && o.binding != "" && o.binding != binding {
			return false
		}
		return all(k, o)
	}
}

// writesOfMember waits for the writes a membership decision about member reads: its
// MemberCluster, InternalMemberCluster and reserved namespace, and the bindings on it.
func writesOfMember(member string) waitFor {
	return func(_ objectKey, o owner) bool { return o.member == member }
}

// ownerOf says whose an object the hub writes is.
func ownerOf(k objectKey, obj client.Object) owner {
	var o owner
	switch k.gvk.Kind {
	case "ClusterResourcePlacement":
		o.placement = obj.GetName()
	case "MemberCluster", "InternalMemberCluster":
		o.member = obj.GetName()
	case "Namespace":
		o.member, _ = strings.CutPrefix(obj.GetName(), membership.NamespacePrefix)
	}
	if o.placement == "" {
		o.placement = obj.GetLabels()[v1beta1.CRPTrackingLabel]
	}
	if b, ok := obj.(*v1beta1.ClusterResourceBinding); ok {
		o.member, o.binding = b.Spec.TargetCluster, b.Name
	}
	if k.gvk.Kind == "Work" {
		o.binding = obj.GetLabels()[v1beta1.ParentBindingLabel]
	}
	if m, ok := strings.CutPrefix(k.namespace, membership.NamespacePrefix); ok && o.member == "" {
		o.member = m
	}
	return o
}

func newExpectations() *expectations {
	return &expectations{observed: map[objectKey]uint64{}, pending: map[objectKey]pendingWrite{},
		changed: make(chan struct{}), tracked: map[schema.GroupVersionKind]bool{}}
}

func parseRV(rv string) (uint64, bool) {
	n, err := strconv.ParseUint(rv, 10, 64)
	return n, err == nil
}

// observe records what an informer delivered.
func (e *expectations) observe(gvk schema.GroupVersionKind, obj any, added bool) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	rv, ok := parseRV(o.GetResourceVersion())
	if !ok {
		return
	}
	k := objectKey{gvk: gvk, namespace: o.GetNamespace(), name: o.GetName()}
	e.mu.Lock()
	defer e.mu.Unlock()
	if rv <= e.observed[k] && !added {
		return // an older event, or one of an object deleted since
	}
	e.observed[k] = rv
	if want, ok := e.pending[k]; ok && rv >= want.rv {
		delete(e.pending, k)
	}
	close(e.changed)
	e.changed = make(chan struct{})
}

// handler is the informer event handler that feeds observe for one kind.
func (e *expectations) handler(gvk schema.GroupVersionKind) toolscache.ResourceEventHandler {
	e.mu.Lock()
	e.tracked[gvk] = true
	e.mu.Unlock()
	return toolscache.ResourceEventHandlerFuncs{
		// An addition is a new incarnation (or the first list): it replaces a deletion mark.
		AddFunc:    func(o any) { e.observe(gvk, o, true) },
		UpdateFunc: func(_, o any) { e.observe(gvk, o, false) },
		// A deletion's event carries the object as last stored; the deletion itself has a
		// later revision, which no event names: mark the object past any version.
		DeleteFunc: func(o any) {
			if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if c, ok := o.(client.Object); ok {
				k := objectKey{gvk: gvk, namespace: c.GetNamespace(), name: c.GetName()}
				e.mu.Lock()
				e.observed[k] = ^uint64(0) >> 1
				delete(e.pending, k)
				close(e.changed)
				e.changed = make(chan struct{})
				e.mu.Unlock()
			}
		},
	}
}

// expect records that the cache must reach rv for the object, whose it is.
func (e *expectations) expect(k objectKey, rv uint64, o owner) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.tracked[k.gvk] {
		return // no informer tells when it arrives
	}
	if e.observed[k] >= rv {
		return
	}
	if rv > e.pending[k].rv {
		e.pending[k] = pendingWrite{rv: rv, owner: o}
	}
}

// created drops the deletion mark of an object the hub is about to create again, so its
// creation is waited for.
func (e *expectations) created(k objectKey) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.observed[k] == ^uint64(0)>>1 {
		delete(e.observed, k) // deleted before: the new incarnation is not yet observed
	}
}

// wait blocks until the cache observed every write the hub made before the call that which
// selects, ctx ends or expectationWait passes; it reports whether everything arrived. Writes
// made while it waits are not waited for: with many workers writing, there would always be
// some.
func (e *expectations) wait(ctx context.Context, which waitFor) bool {
	e.mu.Lock()
	if len(e.pending) == 0 {
		e.mu.Unlock()
		return true
	}
	want := map[objectKey]uint64{}
	for k, p := range e.pending {
		if which(k, p.owner) {
			want[k] = p.rv
		}
	}
	e.mu.Unlock()
	if len(want) == 0 {
		return true
	}
	// Wall time: waiting for the cache is latency only, whatever the hub's clock says.
	start := time.Now()
	deadline := time.NewTimer(expectationWait)
	defer deadline.Stop()
	defer func() { expectationWaitSeconds.Add(time.Since(start).Seconds()) }()
	for {
		e.mu.Lock()
		for k, rv := range want {
			if e.observed[k] >= rv {
				delete(want, k)
			}
		}
		n, ch := len(want), e.changed
		e.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		case <-deadline.C:
			e.mu.Lock()
			// Give up on what never arrived (an object someone else deleted at once): the
			// preconditions on writes still keep decisions from applying on stale objects.
			for k, rv := range want {
				if e.pending[k].rv <= rv {
					delete(e.pending, k)
				}
			}
			e.mu.Unlock()
			return false
		}
	}
}

// recordingClient is the hub's client with every successful write remembered as an
// expectation.
type recordingClient struct {
	client.Client
	exp *expectations
}

func (c *recordingClient) key(obj client.Object) (objectKey, bool) {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return objectKey{}, false
	}
	return objectKey{gvk: gvk, namespace: obj.GetNamespace(), name: obj.GetName()}, true
}

func (c *recordingClient) wrote(obj client.Object, verb string) {
	if k, ok := c.key(obj); ok {
		writesTotal.WithLabelValues(k.gvk.Kind, verb).Inc()
		if rv, ok := parseRV(obj.GetResourceVersion()); ok {
			c.exp.expect(k, rv, ownerOf(k, obj))
		}
	}
}

func (c *recordingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if k, ok := c.key(obj); ok {
		c.exp.created(k)
	}
	if err := c.Client.Create(ctx, obj, opts...); err != nil {
		return err
	}
	c.wrote(obj, "create")
	return nil
}

func (c *recordingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := c.Client.Update(ctx, obj, opts...); err != nil {
		return err
	}
	c.wrote(obj, "update")
	return nil
}

func (c *recordingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := c.Client.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	c.wrote(obj, "patch")
	return nil
}

// Delete expects the cache to see the object past the version deleted (deleting with a
// finalizer stores a new version) or gone.
func (c *recordingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if err := c.Client.Delete(ctx, obj, opts...); err != nil {
		return err
	}
	if k, ok := c.key(obj); ok {
		writesTotal.WithLabelValues(k.gvk.Kind, "delete").Inc()
		if rv, ok := parseRV(obj.GetResourceVersion()); ok {
			c.exp.expect(k, rv+1, ownerOf(k, obj))
		}
	}
	return nil
}

func (c *recordingClient) Status() client.SubResourceWriter {
	return &recordingStatus{SubResourceWriter: c.Client.Status(), c: c}
}

type recordingStatus struct {
	client.SubResourceWriter
	c *recordingClient
}

func (s *recordingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := s.SubResourceWriter.Update(ctx, obj, opts...); err != nil {
		return err
	}
	s.c.wrote(obj, "update-status")
	return nil
}

func (s *recordingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if err := s.SubResourceWriter.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	s.c.wrote(obj, "patch-status")
	return nil
}

// keyLocks are the per-placement read-write locks and per-binding locks of rule 3.
type keyLocks struct {
	mu         sync.Mutex
	placements map[string]*refLock
	bindings   map[string]*refLock
}

type refLock struct {
	sync.RWMutex
	refs int
}

func (l *keyLocks) get(m *map[string]*refLock, key string) *refLock {
	l.mu.Lock()
	defer l.mu.Unlock()
	if *m == nil {
		*m = map[string]*refLock{}
	}
	r := (*m)[key]
	if r == nil {
		r = &refLock{}
		(*m)[key] = r
	}
	r.refs++
	return r
}

func (l *keyLocks) put(m map[string]*refLock, key string, r *refLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.refs--; r.refs == 0 {
		delete(m, key)
	}
}

// placementWide locks a placement for a decision about all of it; the returned function
// unlocks.
func (l *keyLocks) placementWide(placement string) func() {
	r := l.get(&l.placements, placement)
	r.Lock()
	return func() { r.Unlock(); l.put(l.placements, placement, r) }
}

// binding locks one binding of a placement (placement may be empty when unknown).
func (l *keyLocks) binding(placement, binding string) func() {
	var p *refLock
	if placement != "" {
		p = l.get(&l.placements, placement)
		p.RLock()
	}
	b := l.get(&l.bindings, binding)
	b.Lock()
	return func() {
		b.Unlock()
		l.put(l.bindings, binding, b)
		if p != nil {
			p.RUnlock()
			l.put(l.placements, placement, p)
		}
	}
}
