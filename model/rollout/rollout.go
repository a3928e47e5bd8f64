package rollout

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/mutant"
	"github.com/fleetsim/fleetsim/model/placement"
)

// candidate is a binding that needs a write, with what is stale about it.
type candidate struct {
	b     *placement.Binding
	stale string
}

// Decide is the rollout controller's decision for one placement with the RollingUpdate
// strategy (ROLL-ALGORITHM, with the two upstream bugs fixed; see the package doc).
func Decide(in Input) Plan {
	if in.Strategy.Type == placement.ExternalStrategy {
		return Plan{}
	}
	cfg := resolve(in.Strategy.RollingUpdate)

	bs := make([]*placement.Binding, 0, len(in.Bindings))
	for _, b := range in.Bindings {
		if b != nil {
			bs = append(bs, b)
		}
	}
	slices.SortFunc(bs, compareBindings)

	n := Target(in.PlacementType, in.NumberOfClusters, in.ClusterNames, bs)
	bud := Budget{
		Target:         n,
		MaxUnavailable: Scaled(cfg.maxUnavailable, n, DefaultMaxUnavailable) + int(plantedExtraUnavailable.Load()),
		MaxSurge:       Scaled(cfg.maxSurge, n, DefaultMaxSurge),
	}
	if mutant.On("rollout.maxUnavailablePlusOne") {
		bud.MaxUnavailable++
	}
	bud.MinAvailable = n - bud.MaxUnavailable

	// A cluster some binding holding resources is leaving: a new binding there waits until
	// the old one's works are cleaned up.
	leavingCluster := map[string]string{}
	for _, b := range bs {
		if _, seen := leavingCluster[b.TargetCluster]; b.Deleting && b.State != placement.Scheduled && !seen {
			leavingCluster[b.TargetCluster] = b.Name
		}
	}

	d := decider{in: in, plan: Plan{}, desired: map[string]*desired{}}
	var (
		removeCands, updateCands, failedCands, bindCands []candidate
		untilReady                                       time.Duration
	)
	for _, b := range bs {
		ready, until := Ready(b, in.Now, cfg.period)
		if mutant.On("rollout.deletingCountedReady") && b.Deleting && b.State == placement.Bound {
			ready = true
		}
		if until > 0 && (untilReady == 0 || until < untilReady) {
			untilReady = until
		}
		failed := Failed(b)
		switch b.State {
		case placement.Unscheduled:
			if ready {
				bud.ReadyCount++
			}
			if !b.Deleting {
				removeCands = append(removeCands, candidate{b: b})
			} else if ready {
				bud.Leaving++
			}
			// Every binding that holds resources counts towards the surge cap, failed or not
			// (upstream leaves failed ones out, which lets a placement hold more than
			// target + maxSurge clusters).
			bud.CanBeReady++
			if mutant.On("rollout.failedLeftOutOfSurge") && failed {
				bud.CanBeReady--
			}
		case placement.Scheduled:
			switch {
			case b.Deleting:
				// Holds no resources and is going away: nothing to roll.
			case in.LatestResourceSnapshot == "":
				d.hold(b, "waiting: no resource snapshot yet", unknownCondition)
			case leavingCluster[b.TargetCluster] != "":
				d.hold(b, fmt.Sprintf("waiting: binding %s on the same cluster is still being deleted",
					leavingCluster[b.TargetCluster]), unknownCondition)
			default:
				bindCands = append(bindCands, candidate{b: b, stale: staleness(b, d.want(b.TargetCluster))})
			}
		case placement.Bound:
			if ready {
				bud.ReadyCount++
			}
			bud.CanBeReady++
			if mutant.On("rollout.failedLeftOutOfSurge") && failed {
				bud.CanBeReady--
			}
			if b.Deleting {
				if ready {
					bud.Leaving++
				}
				continue
			}
			if in.LatestResourceSnapshot == "" {
				continue
			}
			stale := staleness(b, d.want(b.TargetCluster))
			switch {
			case stale == "":
				d.refresh(b)
			case failed:
				failedCands = append(failedCands, candidate{b: b, stale: stale})
			default:
				updateCands = append(updateCands, candidate{b: b, stale: stale})
			}
		}
	}

	bud.MaxToRemove = bud.ReadyCount - bud.Leaving - bud.MinAvailable
	if mutant.On("rollout.leavingNotSubtracted") {
		bud.MaxToRemove += bud.Leaving
	}
	if n == 0 {
		// Fix 1: with a target of 0 nothing needs to stay available.
		bud.MaxToRemove = max(bud.MaxToRemove, len(removeCands)+len(updateCands))
	}
	bud.MaxToAdd = n + bud.MaxSurge - bud.CanBeReady
	if mutant.On("rollout.maxSurgePlusOne") {
		bud.MaxToAdd++
	}
	d.plan.Budget = bud

	for _, c := range failedCands {
		d.bind(c, fmt.Sprintf("updated in place (%s) outside the budget: delivering the resources failed, so the cluster is unavailable already", c.stale))
	}
	removable := max(bud.MaxToRemove, 0)
	heldByAvailability := false
	for _, c := range removeCands {
		if removable > 0 {
			removable--
			d.plan.Delete = append(d.plan.Delete, Change{Binding: c.b.Copy(), Reason: "deleted: unscheduled; " + bud.removalText()})
			continue
		}
		heldByAvailability = true
		d.hold(c.b, bud.removalWaitText(), nil)
	}
	for _, c := range updateCands {
		if removable > 0 {
			removable--
			d.bind(c, fmt.Sprintf("updated in place (%s): %s", c.stale, bud.removalText()))
			continue
		}
		heldByAvailability = true
		d.hold(c.b, bud.removalWaitText(), blockedCondition)
	}
	addable := max(bud.MaxToAdd, 0)
	for _, c := range bindCands {
		if addable > 0 {
			addable--
			d.bind(c, fmt.Sprintf("bound (%s), newly scheduled: %s", c.stale, bud.surgeText()))
			continue
		}
		d.hold(c.b, bud.surgeWaitText(), blockedCondition)
	}
	if heldByAvailability {
		d.plan.RequeueAfter = untilReady
	}

	p := d.plan
	for _, l := range [][]Change{p.Bind, p.Delete, p.Wait, p.Refresh} {
		slices.SortFunc(l, func(a, b Change) int { return compareBindings(&a.Binding, &b.Binding) })
	}
	slices.SortFunc(p.Held, func(a, b Hold) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Binding, b.Binding))
	})
	return p
}

// decider accumulates a plan.
type decider struct {
	in      Input
	plan    Plan
	desired map[string]*desired
}

// want returns what a bound binding on cluster must carry.
func (d *decider) want(cluster string) *desired {
	if w, ok := d.desired[cluster]; ok {
		return w
	}
	o := d.in.Overrides[cluster]
	w := &desired{
		snapshot: d.in.LatestResourceSnapshot,
		cro:      sortedStrings(o.ClusterResourceOverrideSnapshots),
		ro:       sortedNN(o.ResourceOverrideSnapshots),
		apply:    d.in.Strategy.ApplyStrategy,
	}
	d.desired[cluster] = w
	return w
}

var (
	startedCondition = condition.True(condition.TypeRolloutStarted, condition.ReasonRolloutStarted, MessageRolloutStarted)
	blockedCondition = &condition.Condition{
		Type: condition.TypeRolloutStarted, Status: metav1.ConditionFalse,
		Reason: condition.ReasonRolloutNotStartedYet, Message: MessageRolloutNotStartedYet,
	}
	unknownCondition = &condition.Condition{
		Type: condition.TypeRolloutStarted, Status: metav1.ConditionUnknown,
		Reason: ReasonRolloutStartedUnknown, Message: MessageRolloutUnknown,
	}
)

// bind writes the binding as bound to what its cluster must carry.
func (d *decider) bind(c candidate, reason string) {
	w := d.want(c.b.TargetCluster)
	nb := c.b.Copy()
	nb.State = placement.Bound
	nb.ResourceSnapshotName = w.snapshot
	nb.ClusterResourceOverrideSnapshots = slices.Clone(w.cro)
	nb.ResourceOverrideSnapshots = slices.Clone(w.ro)
	nb.ApplyStrategy = w.apply.Copy()
	nb.Generation++
	condition.Set(&nb.Conditions, startedCondition, nb.Generation, d.in.Now)
	d.plan.Bind = append(d.plan.Bind, Change{Binding: nb, Reason: reason})
}

// hold records a binding left as it is, and writes cond on it when that changes anything.
func (d *decider) hold(b *placement.Binding, reason string, cond *condition.Condition) {
	d.plan.Held = append(d.plan.Held, Hold{Binding: b.Name, Cluster: b.TargetCluster, State: b.State, Reason: reason})
	if cond == nil || sameCondition(b.Conditions, *cond, b.Generation) {
		return
	}
	nb := b.Copy()
	condition.Set(&nb.Conditions, *cond, nb.Generation, d.in.Now)
	d.plan.Wait = append(d.plan.Wait, Change{Binding: nb, Reason: reason})
}

// refresh marks an up-to-date Bound binding as rolled out when its condition does not say so.
func (d *decider) refresh(b *placement.Binding) {
	if condition.IsTrue(b.Conditions, condition.TypeRolloutStarted, b.Generation) {
		return
	}
	nb := b.Copy()
	condition.Set(&nb.Conditions, startedCondition, nb.Generation, d.in.Now)
	d.plan.Refresh = append(d.plan.Refresh, Change{Binding: nb, Reason: "up to date with resource snapshot " + b.ResourceSnapshotName})
}

// availabilityText is "2 of 3 clusters must stay available (maxUnavailable 1 of target 3)".
func (b Budget) availabilityText() string {
	return fmt.Sprintf("%d of %d clusters must stay available (maxUnavailable %d of target %d)",
		max(b.MinAvailable, 0), b.Target, b.MaxUnavailable, b.Target)
}

// readyText is " and 2 are ready" (with "only" when nothing may be disrupted).
func (b Budget) readyText(only bool) string {
	s := " and "
	if only {
		s += "only "
	}
	r := b.ReadyCount - b.Leaving
	if r == 1 {
		s += "1 is ready"
	} else {
		s += fmt.Sprintf("%d are ready", r)
	}
	if b.Leaving > 0 {
		s += fmt.Sprintf(" besides %s being deleted", plural(b.Leaving, "ready one", "ready ones"))
	}
	return s
}

func (b Budget) removalText() string {
	if b.Target == 0 {
		return "the target is 0 clusters, so nothing needs to stay available"
	}
	return b.availabilityText() + b.readyText(false) + fmt.Sprintf(", so %d may be disrupted at once", b.MaxToRemove)
}

func (b Budget) removalWaitText() string {
	if b.MaxToRemove <= 0 {
		return "waiting: " + b.availabilityText() + b.readyText(true)
	}
	return "waiting: " + b.availabilityText() + b.readyText(false) +
		fmt.Sprintf(", so %d may be disrupted at once, and that went to bindings ahead (unscheduled first, then by cluster name)", b.MaxToRemove)
}

func (b Budget) surgeCapText() string {
	verb := "do"
	if b.CanBeReady == 1 {
		verb = "does"
	}
	return fmt.Sprintf("at most %d clusters may hold resources (target %d + maxSurge %d) and %d already %s",
		b.Target+b.MaxSurge, b.Target, b.MaxSurge, b.CanBeReady, verb)
}

func (b Budget) surgeText() string {
	return b.surgeCapText() + fmt.Sprintf(", so %d may be added", b.MaxToAdd)
}

func (b Budget) surgeWaitText() string {
	if b.MaxToAdd <= 0 {
		return "waiting: " + b.surgeCapText()
	}
	return "waiting: " + b.surgeText() + ", and those went to clusters ahead by name"
}
