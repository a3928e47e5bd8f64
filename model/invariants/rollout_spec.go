package invariants

// The arithmetic of the rollout budgets, written from the spec (ROLL-ALGORITHM,
// ROLL-MAXUNAVAILABLE, ROLL-MAXSURGE, ROLL-TARGET-N, BIND-STATES) rather than taken from
// model/rollout: scaling maxUnavailable and maxSurge, the target N, the unavailable period,
// readiness and which bindings hold resources.

import (
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
)

// invScale resolves maxUnavailable/maxSurge against n (ROLL-MAXUNAVAILABLE, ROLL-MAXSURGE):
// an integer (also as a string of digits, which the API pattern allows) is absolute, a
// percentage of n is rounded up; unset takes def.
func invScale(v *intstr.IntOrString, n int, def string) int {
	if v == nil {
		d := intstr.FromString(def)
		v = &d
	}
	if v.Type == intstr.Int {
		return max(int(v.IntVal), 0)
	}
	if pct, ok := strings.CutSuffix(v.StrVal, "%"); ok {
		p, _ := strconv.Atoi(pct)
		return (p*n + 99) / 100
	}
	i, _ := strconv.Atoi(v.StrVal)
	return max(i, 0)
}

// invTarget is N (ROLL-TARGET-N): numberOfClusters for PickN (the policy snapshot's, which
// is what the rollout reads), the cluster names for PickFixed, and for PickAll the
// clusters the scheduler picked (live bindings).
func invTarget(snap *placement.PolicySnapshot, bindings []placement.Binding) int {
	switch snap.Policy.Type() {
	case placement.PickN:
		return max(int(snap.NumberOfClusters), 0)
	case placement.PickFixed:
		return len(snap.Policy.ClusterNames)
	}
	picked := map[string]bool{}
	for _, b := range bindings {
		if b.Live() {
			picked[b.TargetCluster] = true
		}
	}
	return len(picked)
}

// invPeriod is unavailablePeriodSeconds with its default of 60 (ROLL-API).
func invPeriod(st placement.RolloutStrategy) time.Duration {
	if ru := st.RollingUpdate; ru != nil && ru.UnavailablePeriodSeconds != nil {
		return time.Duration(max(*ru.UnavailablePeriodSeconds, 0)) * time.Second
	}
	return 60 * time.Second
}

func invRolling(st placement.RolloutStrategy) (maxUnavailable, maxSurge *intstr.IntOrString) {
	if ru := st.RollingUpdate; ru != nil {
		return ru.MaxUnavailable, ru.MaxSurge
	}
	return nil, nil
}

// invReady is ROLL-ALGORITHM's readiness: Available True at the binding's generation, and
// either not WorkNotTrackable or True for at least the unavailable period. (DC-13: a
// ReportDiff binding reports no Available condition and is ready once DiffReported is True.)
func invReady(b *placement.Binding, now time.Time, period time.Duration) bool {
	if b.ApplyStrategy.TypeOrDefault().ReportsOnly() &&
		condition.IsTrue(b.Conditions, condition.TypeDiffReported, b.Generation) {
		return true
	}
	c, ok := condition.Find(b.Conditions, condition.TypeAvailable)
	if !ok || c.Status != metav1.ConditionTrue || c.ObservedGeneration != b.Generation {
		return false
	}
	return c.Reason != condition.ReasonWorkNotTrackable || !c.LastTransitionTime.Add(period).After(now)
}

// invHolds: the binding's resources are on its cluster, or are being rolled there: Bound,
// or Unscheduled after having been Bound (BIND-STATES: the work generator treats an
// Unscheduled binding as bound until the rollout deletes it).
func invHolds(b *placement.Binding) bool {
	return b.State == placement.Bound || (b.State == placement.Unscheduled && b.PreviousState == placement.Bound)
}
