package scenarios

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/resources"
)

// Scenario is a parsed, validated scenario file. Every element remembers the line it came
// from so that runtime failures can point at the file too.
type Scenario struct {
	Path        string
	Name        string
	Description string
	Seed        uint64        // default 1
	Duration    time.Duration // simulated time to run
	Members     []MemberGroup
	Timeline    []Step // sorted by At; steps at equal At keep file order
	Expect      []Expectation
	Always      []string // invariant names checked after every event
	Faults      *RandomFaults
	Network     *Network
	Hub         *Hub
	// Propagation is the hub's propagation filter (`propagation:`), as `fleet hub`'s
	// --skipped-propagating-apis, --allowed-propagating-apis and
	// --skipped-propagating-namespaces set it.
	Propagation *resources.Filter
	// Initial is the state the scenario starts in (`initial:`, scenarios/initial.go).
	Initial *Initial
}

// Hub models the production hub's decision capacity (`hub:`): Workers decisions at once,
// each waiting for CallsPerDecision API requests from a token bucket of QPS per second
// holding Burst, then taking DecisionTime.
type Hub struct {
	Line             int
	Workers          int
	QPS              float64
	Burst            int
	CallsPerDecision int
	DecisionTime     time.Duration
}

// Network describes messages from members to the hub: a delay distribution and a loss rate.
type Network struct {
	Line int
	// Distribution is constant (Mean), uniform (Min..Max) or exponential (Mean, capped at Max
	// when given).
	Distribution   string
	Mean, Min, Max time.Duration
	Loss           float64
}

// MemberGroup is one `members` entry, already expanded: Names holds every generated name.
type MemberGroup struct {
	Line            int
	Names           []string
	Kind            member.Kind // Cluster (default) or Machine
	Labels          map[string]string
	Taints          []member.Taint
	Properties      map[string]string // non-resource properties as quantity strings, validated
	Resources       member.ResourceUsage
	HeartbeatPeriod time.Duration // default 60s, 1s..600s
	JoinAt          time.Duration
	// Metadata is fleet machine metadata (kind: Machine); key → values.
	Metadata map[string][]string
}

// ActionKind names the single action of a timeline step.
type ActionKind string

const (
	ActionApply      ActionKind = "apply"
	ActionDelete     ActionKind = "delete"
	ActionFail       ActionKind = "fail"
	ActionHeal       ActionKind = "heal"
	ActionTaint      ActionKind = "taint"
	ActionUntaint    ActionKind = "untaint"
	ActionLabel      ActionKind = "label"
	ActionApprove    ActionKind = "approve"
	ActionRestartHub ActionKind = "restartHub"
	ActionWorkload   ActionKind = "workload"
	ActionFleetctl   ActionKind = "fleetctl"
	ActionSkew       ActionKind = "skew"
	ActionMemberEdit ActionKind = "memberEdit"
	ActionPartition  ActionKind = "partition"
	// ActionMemberHealth makes a member agent report its cluster unhealthy (or healthy
	// again) from its next heartbeat on.
	ActionMemberHealth ActionKind = "memberHealth"
)

// Step is one timeline entry: a time and exactly one action (the field named by Action is set).
type Step struct {
	Line int
	// Field is the step's path in the file, e.g. timeline[3], for messages at run time.
	Field  string
	At     time.Duration
	Action ActionKind
	// Name, when set (`name:`), lets expectations measure from this step (rollout from).
	Name string
	// Select, when set, is the group of members the member step acts on (a name pattern or
	// a label selector); the step's Member field is then "" and the step runs once per
	// selected member, in name order.
	Select *MemberSelector

	Apply    []Manifest
	Delete   *ObjectRef
	Fail     *Fail
	Heal     *MemberRef
	Taint    *TaintStep
	Untaint  *UntaintStep
	Label    *LabelStep
	Approve  *ObjectRef
	Workload *WorkloadStep
	Fleetctl *FleetctlStep
	Skew     *SkewStep
	// MemberEdit changes or creates an object directly on a member cluster.
	MemberEdit *MemberEditStep
	// Partition cuts members off from the hub (and from the rest of the fleet).
	Partition *PartitionStep
	// MemberHealth sets the health the member agent reports.
	MemberHealth *MemberHealthStep
}

// MemberHealthStep sets the health a member agent reports in its heartbeats: Healthy false
// is a cluster whose agent finds it unhealthy (the hub then shows the member Healthy=False
// and schedules nothing new to it); true reports it healthy again.
type MemberHealthStep struct {
	Member  string
	Healthy bool
}

// PartitionStep cuts the selected members off the network: a partition between that group
// and the hub with the rest of the fleet (members talk only to the hub, so this is every
// connection the group has). For, when set, heals the partition after that long; otherwise
// a heal step ends it.
type PartitionStep struct {
	Member string
	For    time.Duration
}

// MemberEditStep edits an object directly on a member cluster, as someone with access to the
// member would (to script drift and takeover): Object's fields are merged into the object on
// the member (a null removes a field), or, when the member has no such object, Object is
// created there, owned by nobody.
type MemberEditStep struct {
	Member string
	Object *unstructured.Unstructured
	// FieldManager is who edits (default kubectl-edit): it becomes the owner of the fields
	// it changes, so a later server-side apply of other values conflicts with it.
	FieldManager string
}

// SkewStep sets a member agent's clock offset: its heartbeats carry its own time, so a clock
// running behind makes the member look disconnected.
type SkewStep struct {
	Member string
	Offset time.Duration
}

// FleetctlCommand is a unit command as fleetctl offers it.
type FleetctlCommand string

const (
	FleetctlSubmit  FleetctlCommand = "submit"
	FleetctlLoad    FleetctlCommand = "load"
	FleetctlStart   FleetctlCommand = "start"
	FleetctlStop    FleetctlCommand = "stop"
	FleetctlUnload  FleetctlCommand = "unload"
	FleetctlDestroy FleetctlCommand = "destroy"
)

// FleetctlStep runs a fleetctl-like command on a unit. File is the unit file text: required
// for submit, and submits the unit first when given to load or start (as fleetctl does).
type FleetctlStep struct {
	Command FleetctlCommand
	Unit    string
	File    string
}

// Manifest is one YAML document of an `apply` step.
type Manifest struct {
	Line   int // line in the scenario file where the document starts
	Object *unstructured.Unstructured
}

type ObjectRef struct {
	Kind      string
	Name      string
	Namespace string
}

type MemberRef struct{ Member string }

type FailMode string

const (
	Crash     FailMode = "crash"
	Partition FailMode = "partition"
)

type Fail struct {
	Member string
	Mode   FailMode
}

type TaintStep struct {
	Member string
	Taint  member.Taint // effect defaults to NoSchedule
}

type UntaintStep struct {
	Member string
	Key    string
}

type LabelStep struct {
	Member string
	Set    map[string]string
	Remove []string
}

type WorkloadBehavior string

const (
	Available   WorkloadBehavior = "available"
	Unavailable WorkloadBehavior = "unavailable"
	ApplyFails  WorkloadBehavior = "applyFails"
)

type WorkloadStep struct {
	Member    string // a member name or "*"
	Kind      string
	Name      string
	Namespace string
	// Image, when set, limits the step to versions of the object whose pod template runs
	// that container image (to script "the new image is bad").
	Image    string
	Behavior WorkloadBehavior
}

// Expectation is one `expect` entry, checked at At (or at the end when AtEnd).
type Expectation struct {
	Line      int
	At        time.Duration
	AtEnd     bool
	Placement *PlacementExpectation
	Member    *MemberExpectation
	// Eviction and UpdateRun check a condition of a ClusterResourcePlacementEviction or a
	// ClusterStagedUpdateRun.
	Eviction  *ObjectExpectation
	UpdateRun *ObjectExpectation
	// ClusterProfile checks the ClusterProfile the hub publishes for a member.
	ClusterProfile *ClusterProfileExpectation
	Unit           *UnitExpectation
	// Rollout, Peak and Unhealthy are measured over the whole run (see measures in
	// scenarios/runner) and checked at its end; they take no `at`.
	Rollout   *RolloutExpectation
	Peak      *PeakExpectation
	Unhealthy *UnhealthyExpectation
}

// RolloutExpectation: the rollout of Placement that starts at From (a step's time, or an
// instant) completes within Within of it, or by the instant By (one of them is set).
// The rollout is that of the first resource snapshot the placement takes at or after From
// (or, when it takes none, the placement's current one); it completes when the placement
// is Available at that snapshot or a later one.
type RolloutExpectation struct {
	Placement string
	From      time.Duration
	// FromStep is the named step From comes from ("" for an instant).
	FromStep string
	Within   time.Duration // 0: not asked
	By       time.Duration
	HasBy    bool
}

// PeakExpectation: the most clusters unavailable at once, between From and Until, is at
// most AtMost, or at most Percent % of the scope's clusters. The scope is Placement (the
// clusters it selects), Group (members chosen by a name pattern or label selector), or,
// with neither, the whole fleet. A cluster is unavailable when a placement selects it,
// it has been Available for that placement before, and it is not now.
type PeakExpectation struct {
	Placement string
	Group     *MemberSelector
	AtMost    int
	Percent   float64
	IsPercent bool
	From      time.Duration
	Until     time.Duration // the scenario's duration when not given
}

// UnhealthyExpectation: the total time during which at least one member of Group was
// unhealthy in the hub's view (Joined or Healthy not True, after it had joined) is at
// most AtMost.
type UnhealthyExpectation struct {
	Group  *MemberSelector
	AtMost time.Duration
}

// UnitExpectation expects a fleet unit's state and where it runs. Machine is the one
// machine a unit is scheduled to ("" checks nothing; "-" means unscheduled); Machines is the
// exact set of machines running a global unit (or running a unit at all, for duplicates).
type UnitExpectation struct {
	Name     string
	State    string // inactive, loaded, launched or failed; "" checks nothing
	Machine  string
	Machines []string
}

// ClusterProfileExpectation expects the member Name's ClusterProfile (in fleet-system) to
// have Condition, or, with Gone, not to exist.
type ClusterProfileExpectation struct {
	Name      string
	Condition *ConditionExpectation
	Gone      bool
}

// ObjectExpectation expects a condition on a named object.
type ObjectExpectation struct {
	Name      string
	Condition *ConditionExpectation
}

type PlacementExpectation struct {
	Name         string
	Clusters     []string // exact sorted set, when non-nil
	ClusterCount *int
	Condition    *ConditionExpectation
	// Details checks one cluster's failed, drifted and diffed placements.
	Details *DetailsExpectation
	// StatusObject checks the placement's ClusterResourcePlacementStatus
	// (statusReportingScope NamespaceAccessible).
	StatusObject *StatusObjectExpectation
	// BackReported checks what the placement's Work on one cluster reports back in its
	// status (strategy.reportBackStrategy Mirror to WorkAPI).
	BackReported *BackReportedExpectation
}

// BackReportedExpectation: Objects is the exact list, in manifest order, of the objects the
// Work on Cluster reports back, as "Kind/name" or "Kind/namespace/name"; empty means the
// Work reports nothing back.
type BackReportedExpectation struct {
	Cluster string
	Objects []string
}

// StatusObjectExpectation: with Absent, the placement keeps no ClusterResourcePlacementStatus;
// otherwise one exists in Namespace and mirrors the placement's status (every condition but
// ClusterResourcePlacementStatusSynced, with the same status and reason).
type StatusObjectExpectation struct {
	Namespace string
	Absent    bool
}

// DetailsExpectation checks a cluster's entry in placementStatuses: FailedReason, when set,
// is the reason of a failedPlacements condition; DriftedPaths and DiffedPaths, when not nil,
// are the exact sorted sets of paths in its driftedPlacements and diffedPlacements (empty:
// none).
type DetailsExpectation struct {
	Cluster      string
	FailedReason string
	DriftedPaths []string
	DiffedPaths  []string
}

type MemberExpectation struct {
	Name      string
	Condition *ConditionExpectation
	// Object, when set, checks an object on the member cluster instead of a condition.
	Object *MemberObjectExpectation
	// Gone, instead of a condition, expects the member to have left the fleet: its
	// MemberCluster is removed.
	Gone bool
}

// MemberObjectExpectation checks one object on a member cluster: State is ObjectOwned (it
// exists and a Work's AppliedWork owns it), ObjectUnowned (it exists, owned by no
// AppliedWork) or ObjectAbsent.
type MemberObjectExpectation struct {
	Group, Kind, Namespace, Name string
	State                        string
}

// Member object states.
const (
	ObjectOwned   = "owned"
	ObjectUnowned = "unowned"
	ObjectAbsent  = "absent"
)

// ConditionExpectation: Status and Reason are optional ("" matches any). Cluster, for a
// placement, checks that cluster's entry in placementStatuses instead of the placement's
// own conditions.
type ConditionExpectation struct {
	Type    string
	Status  string
	Reason  string
	Cluster string
}

// RandomFaults asks the simulator for a seeded random fault schedule.
type RandomFaults struct {
	Line int
	// MeanTimeBetweenFailures per member, and MeanDuration of a failure.
	MeanTimeBetweenFailures time.Duration
	MeanDuration            time.Duration
	// Modes to draw from; default both crash and partition.
	Modes []FailMode
	// Until: no new failure starts after this time, and all heal by it (default: 3/4 of duration).
	Until time.Duration
}

// Invariants are the names `always` accepts, each with what it checks after every event.
// Package model/invariants implements them; the parser only checks names.
var Invariants = map[string]string{
	"oneBindingPerCluster":     "no placement has two Scheduled or Bound bindings on one cluster",
	"pickNWithinLimit":         "the scheduler never picks a cluster that takes a PickN placement beyond numberOfClusters",
	"topologySpread":           "after the scheduler picks clusters for a PickN placement, no DoNotSchedule topology spread constraint has a skew above maxSkew (measured over the domains of the placement's clusters)",
	"preferredAffinity":        "after the scheduler picks clusters for a PickN placement scored only by preferred label-selector affinity terms, no eligible cluster it left out (Joined, Healthy, not leaving, no untolerated taint, no binding of the placement) matches terms of a greater total weight than a cluster it just picked",
	"noUntoleratedNewBindings": "no binding is created on a cluster with a NoSchedule taint the placement does not tolerate",
	"bindingsOnKnownMembers":   "every new binding targets a member that exists and is not leaving",
	"noBindingsOnGoneMembers":  "no binding targets a member that has left the fleet (a member leaves only once no binding is on it)",
	"stagedRunOrder":           "no stage of a staged update run (nor its deletion stage) begins before every earlier stage succeeded, its clusters all succeeded and its after-stage TimedWait elapsed and Approval was approved",
	"stagedRunApprovals":       "no cluster of a stage with a before-stage Approval starts before that approval request is approved",
	"stagedMaxConcurrency":     "no stage updates more clusters at once than its maxConcurrency allows",
	"unitConflicts":            "no machine has two conflicting fleet units scheduled to it or running on it",
	"unitMachineOf":            "a fleet unit with MachineOf is never scheduled to another machine than its scheduled leader",
	"globalUnits":              "a launched global unit runs on every settled machine that matches its MachineMetadata and runs nothing conflicting, and on no other settled machine",
	"unitOnOneMachine":         "outside a partition (or before an agent has caught up), no fleet unit that is not global runs on two machines",
	"memberReportedUnhealthy":  "no member is Healthy more than 30s after the hub received its agent's report that it is unhealthy (while that is the latest report)",
	"memberHeartbeatTimeout":   "no member (but a leaving one) is Healthy while its last heartbeat is older than the heartbeat timeout plus 30s for the hub to react (counted from a stale heartbeat's arrival, and from the latest stamp when an agent's clock went back)",
	"unitReplaces":             "no fleet unit is scheduled to (or, on a settled machine, runs on) the machine of a unit that replaces it",
	"noUnitDisplacedByGlobal":  "no fleet unit that ran on a machine is moved off it for a global unit that conflicts with it (scheduled units win over global units), while the machine stays connected with the same metadata and the unit unchanged (units with MachineID, MachineOf or replaced by another are left out)",
	"rolloutBudgets":           "no rollout step leaves fewer ready clusters than N − maxUnavailable (or than before), binds beyond N + maxSurge, binds on an untolerated taint, executes an eviction its disruption budget forbids, or leaves a PickN placement above numberOfClusters after unscheduling clusters (or at the end of the run)",
}
