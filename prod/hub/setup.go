package hub

import (
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/go-logr/logr"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/resources"
)

// Options configure the hub's controllers.
type Options struct {
	Eligibility member.EligibilityConfig // zero: member.DefaultEligibility
	Log         logr.Logger
	Clock       clock.Clock // nil: the wall clock
	// Resync: how often placements re-select hub resources; 0 means DefaultResync.
	Resync time.Duration
	// Workers: how many decisions run at once; 0 means DefaultWorkers.
	Workers int
	// CheckInvariants evaluates the fleet invariants (model/invariants) after every
	// decision and reports violations as events, log lines and a metric (invariants.go).
	CheckInvariants bool
	// MaxDecisions: how many clusters a policy snapshot's status lists (every selected
	// one, then unselected ones with their reasons); 0 means
	// scheduler.DefaultMaxDecisions, the field's limit.
	MaxDecisions int
	// Propagation is the propagation filter of --skipped-propagating-apis,
	// --allowed-propagating-apis and --skipped-propagating-namespaces (nil: none).
	Propagation *resources.Filter
}

// Setup registers every hub controller with the manager: membership, ClusterProfiles, the
// placement controllers and the override snapshotter. Events go to the manager's recorder.
func Setup(mgr ctrl.Manager, o Options) (*Hub, error) {
	if o.Eligibility == (member.EligibilityConfig{}) {
		o.Eligibility = member.DefaultEligibility
	}
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	recorder := mgr.GetEventRecorder("fleet-hub")
	h := &Hub{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
		Resources:   &ResourceLister{Reader: mgr.GetAPIReader(), Mapper: mgr.GetRESTMapper(), Discovery: memory.NewMemCacheClient(dc)},
		Clock:       o.Clock,
		Eligibility: o.Eligibility, Log: o.Log.WithName("placement"), Events: recorder, Resync: o.Resync, Workers: o.Workers, MaxDecisions: o.MaxDecisions,
		CheckInvariants: o.CheckInvariants, Propagation: o.Propagation,
	}
	if err := h.prepare(mgr); err != nil {
		return nil, fmt.Errorf("set up the hub's cache: %w", err)
	}
	m := &MembershipReconciler{Client: h.Client, Reader: h.Cache, Clock: o.Clock, Eligibility: o.Eligibility,
		Log: o.Log.WithName("membership"), Events: recorder, Hub: h}
	if err := m.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up the membership controller: %w", err)
	}
	// The manager's own client, not h.Client: profiles are no decision's input, so their
	// writes need no expectations (consistency.go).
	if err := (&ClusterProfileReconciler{Client: mgr.GetClient(), Clock: o.Clock, Eligibility: o.Eligibility,
		Log: o.Log.WithName("clusterprofile")}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up the ClusterProfile controller: %w", err)
	}
	if err := h.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up the placement controllers: %w", err)
	}
	fleetState.use(h.Cache)
	return h, nil
}
