package triggers

// Change is a kind of change to a stored object.
type Change string

const (
	MemberCreated        Change = "member created"
	MemberLeaving        Change = "member is leaving"
	MemberLabelsChanged  Change = "member labels changed"
	MemberTaintAdded     Change = "member taint added"
	MemberTaintRemoved   Change = "member taint removed"
	MemberBecameEligible Change = "member became eligible"
	MemberStatusChanged  Change = "member status changed"
	MemberHealthLost     Change = "member no longer healthy"
	MemberPropsChanged   Change = "member properties changed"
	PlacementChanged     Change = "placement spec changed"
	PlacementDeleted     Change = "placement deleted"
	PolicySnapshotNew    Change = "policy snapshot created or scaled"
	BindingChanged       Change = "binding created or changed"
	BindingStatusChanged Change = "binding status changed"
	BindingDeleted       Change = "binding deleted"
	RequeueAfter         Change = "requeue time reached"
	HubStarted           Change = "hub controllers started"
	HubResourceChanged   Change = "hub resource created, changed or deleted"
	ResourceSnapshotNew  Change = "resource snapshot created"
	OverrideChanged      Change = "override snapshot created"
	WorkStatusChanged    Change = "member reported work status"
	EvictionCreated      Change = "eviction created"
	UpdateRunChanged     Change = "staged update run created or changed"
	ApprovalChanged      Change = "approval request approved"
	// Units and machines (the CoreOS-fleet half).
	UnitChanged      Change = "unit submitted, changed or destroyed"
	MachineChanged   Change = "machine registered, its metadata changed, or removed"
	MachineHeartbeat Change = "machine heartbeat or unit states reported"
)

// Controller names a hub reconciler.
type Controller string

const (
	Membership     Controller = "membership"
	PolicySnapshot Controller = "policy-snapshot"
	Scheduler      Controller = "scheduler"
	Rollout        Controller = "rollout"
	WorkGenerator  Controller = "work-generator"
	Eviction       Controller = "eviction"
	StagedUpdate   Controller = "staged-update"
	UnitEngine     Controller = "unit-engine"
)

// Scope says which keys of the controller a change queues.
type Scope string

const (
	// ThisObject: the key of the changed object itself.
	ThisObject Scope = "this object"
	// AllPlacements: every placement.
	AllPlacements Scope = "every placement"
	// OwningPlacement: the placement the changed object belongs to.
	OwningPlacement Scope = "its placement"
	// TargetMember: the member a binding targets.
	TargetMember Scope = "its member"
	// AllMembers: every member.
	AllMembers Scope = "every member"
	// PlacementBindings: every binding of the placement.
	PlacementBindings Scope = "its placement's bindings"
	// AllRuns: every staged update run.
	AllRuns Scope = "every staged update run"
	// AllEvictions: every eviction.
	AllEvictions Scope = "every eviction"
	// AllUnits: every unit (the engine schedules them in one decision).
	AllUnits Scope = "every unit"
)

// Target is one controller and the keys it must reconcile.
type Target struct {
	Controller Controller
	Scope      Scope
}

// table is the whole trigger table (CRP-POL-IDE, MC-*, SNAP-*, ROLL-ALGORITHM triggers).
// Notably absent: a taint being added wakes no scheduler (adding a taint never moves a
// placement, TAINT-NO-EVICT), and resource-only changes never reschedule.
var table = map[Change][]Target{
	MemberCreated:        {{Membership, ThisObject}},
	MemberLeaving:        {{Membership, ThisObject}, {Scheduler, AllPlacements}},
	MemberLabelsChanged:  {{Scheduler, AllPlacements}},
	MemberTaintAdded:     nil,
	MemberTaintRemoved:   {{Scheduler, AllPlacements}},
	MemberBecameEligible: {{Membership, ThisObject}, {Scheduler, AllPlacements}},
	MemberStatusChanged:  {{Membership, ThisObject}},
	MemberHealthLost:     {{Scheduler, AllPlacements}},
	MemberPropsChanged:   {{Scheduler, AllPlacements}},
	PlacementChanged:     {{PolicySnapshot, ThisObject}, {Scheduler, ThisObject}, {Rollout, ThisObject}, {WorkGenerator, PlacementBindings}},
	PlacementDeleted:     {{PolicySnapshot, ThisObject}},
	PolicySnapshotNew:    {{Scheduler, OwningPlacement}, {Rollout, OwningPlacement}},
	BindingChanged:       {{Rollout, OwningPlacement}, {WorkGenerator, ThisObject}, {StagedUpdate, AllRuns}},
	BindingStatusChanged: {{Rollout, OwningPlacement}, {StagedUpdate, AllRuns}},
	BindingDeleted:       {{Scheduler, OwningPlacement}, {Membership, TargetMember}, {WorkGenerator, ThisObject}, {Rollout, OwningPlacement}},
	RequeueAfter:         {{Membership, ThisObject}},
	HubStarted:           {{Membership, AllMembers}, {PolicySnapshot, AllPlacements}, {Scheduler, AllPlacements}, {Rollout, AllPlacements}, {WorkGenerator, PlacementBindings}, {StagedUpdate, AllRuns}, {Eviction, AllEvictions}},
	HubResourceChanged:   {{PolicySnapshot, AllPlacements}},
	ResourceSnapshotNew:  {{Rollout, OwningPlacement}},
	OverrideChanged:      {{Rollout, AllPlacements}, {WorkGenerator, PlacementBindings}},
	WorkStatusChanged:    {{Rollout, OwningPlacement}, {StagedUpdate, AllRuns}},
	EvictionCreated:      {{Eviction, ThisObject}},
	UpdateRunChanged:     {{StagedUpdate, ThisObject}},
	ApprovalChanged:      {{StagedUpdate, AllRuns}},
	UnitChanged:          {{UnitEngine, AllUnits}},
	MachineChanged:       {{UnitEngine, AllUnits}},
	// A heartbeat moves nothing: a machine is lost when its TTL runs out, and the engine
	// looks again at that time by itself (a timed wake, like RequeueAfter).
	MachineHeartbeat: nil,
}

// For returns the controllers a change wakes, in a fixed order.
func For(c Change) []Target { return table[c] }

// Changes lists every change the table knows, for documentation and tests.
func Changes() []Change {
	return []Change{MemberCreated, MemberLeaving, MemberLabelsChanged, MemberTaintAdded, MemberTaintRemoved,
		MemberBecameEligible, MemberStatusChanged, MemberHealthLost, MemberPropsChanged, PlacementChanged, PlacementDeleted,
		PolicySnapshotNew, BindingChanged, BindingStatusChanged, BindingDeleted, RequeueAfter, HubStarted, HubResourceChanged,
		ResourceSnapshotNew, OverrideChanged, WorkStatusChanged, EvictionCreated, UpdateRunChanged, ApprovalChanged,
		UnitChanged, MachineChanged, MachineHeartbeat}
}
