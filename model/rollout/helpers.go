package rollout

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/mutant"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Target is the target number of clusters N (ROLL-TARGET-N): numberOfClusters for PickN,
// the number of cluster names for PickFixed, and for PickAll (or an empty type) the number
// of clusters the scheduler picked, i.e. distinct clusters holding a live binding (Scheduled
// or Bound, not being deleted).
func Target(t placement.PlacementType, numberOfClusters int32, clusterNames []string, bindings []*placement.Binding) int {
	switch t {
	case placement.PickN:
		return max(int(numberOfClusters), 0)
	case placement.PickFixed:
		return len(clusterNames)
	}
	var picked []string
	for _, b := range bindings {
		if b != nil && b.Live() {
			picked = append(picked, b.TargetCluster)
		}
	}
	slices.Sort(picked)
	return len(slices.Compact(picked))
}

// Ready reports whether a binding counts as ready (ROLL-ALGORITHM): its Available condition
// is True at the binding's generation and either the reason is not WorkNotTrackable or the
// condition turned True at least period before now. For an untrackable binding still inside
// the period it also returns how long until it becomes ready; otherwise the duration is 0.
//
// A binding with the ReportDiff apply type has no Available condition; it is ready once its
// DiffReported condition is True at its generation (DC-13: diffs never block a rollout).
func Ready(b *placement.Binding, now time.Time, period time.Duration) (bool, time.Duration) {
	if b.ApplyStrategy.TypeOrDefault().ReportsOnly() &&
		condition.IsTrue(b.Conditions, condition.TypeDiffReported, b.Generation) {
		return true, 0
	}
	c, ok := condition.Find(b.Conditions, condition.TypeAvailable)
	if mutant.On("rollout.readyAnyGeneration") && ok && c.Status == metav1.ConditionTrue && c.Reason != condition.ReasonWorkNotTrackable {
		return true, 0
	}
	if !ok || c.Status != metav1.ConditionTrue || c.ObservedGeneration != b.Generation {
		return false, 0
	}
	if c.Reason != condition.ReasonWorkNotTrackable {
		return true, 0
	}
	if mutant.On("rollout.unavailablePeriodIgnored") {
		return true, 0
	}
	readyAt := c.LastTransitionTime.Add(period)
	if !readyAt.After(now) {
		return true, 0
	}
	return false, readyAt.Sub(now)
}

// Failed reports whether delivering the binding's current generation failed: its
// Overridden, WorkSynchronized, Applied or Available condition is False at the binding's
// generation.
func Failed(b *placement.Binding) bool {
	// Any stage of delivering the binding's current generation may have failed: its
	// overrides, its work, its apply or its availability (upstream's HasBindingFailed). A
	// failed binding is already unavailable, so rolling a fix to it costs no budget; one that
	// is still available at its generation is not failed, whatever another stage says.
	if condition.IsTrue(b.Conditions, condition.TypeAvailable, b.Generation) {
		return false
	}
	for _, typ := range []string{condition.TypeOverridden, condition.TypeWorkSynchronized, condition.TypeApplied, condition.TypeAvailable} {
		if c, ok := condition.Find(b.Conditions, typ); ok && c.Status == metav1.ConditionFalse && c.ObservedGeneration == b.Generation {
			return true
		}
	}
	return false
}

// Scaled resolves a maxUnavailable or maxSurge value against the target n: an absolute
// number as is (negative ones count as 0), a percentage of n rounded up. A nil value takes
// def. A string of digits without "%" is read as an absolute number, as the API pattern
// allows; a malformed value (which validation rejects) also takes def.
func Scaled(v *intstr.IntOrString, n int, def string) int {
	if v == nil {
		d := intstr.FromString(def)
		v = &d
	}
	if v.Type == intstr.String && !strings.HasSuffix(v.StrVal, "%") {
		if i, err := strconv.Atoi(v.StrVal); err == nil {
			return max(i, 0)
		}
	}
	s, err := intstr.GetScaledValueFromIntOrPercent(v, n, true)
	if err != nil {
		d := intstr.FromString(def)
		s, _ = intstr.GetScaledValueFromIntOrPercent(&d, n, true)
	}
	return max(s, 0)
}

// settings are a strategy's rolling-update values with the defaults applied.
type settings struct {
	maxUnavailable, maxSurge *intstr.IntOrString
	period                   time.Duration
}

func resolve(c *placement.RollingUpdateConfig) settings {
	s := settings{period: DefaultUnavailablePeriodSeconds * time.Second}
	if c == nil {
		return s
	}
	s.maxUnavailable, s.maxSurge = c.MaxUnavailable, c.MaxSurge
	if c.UnavailablePeriodSeconds != nil {
		s.period = time.Duration(max(*c.UnavailablePeriodSeconds, 0)) * time.Second
	}
	return s
}

// desired is what a bound binding on one cluster must carry.
type desired struct {
	snapshot string
	cro      []string
	ro       []placement.NamespacedName
	apply    *placement.ApplyStrategy
}

func compareNN(a, b placement.NamespacedName) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// sortedStrings returns s sorted, copying only when it is not sorted already; nil when empty.
func sortedStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	if slices.IsSorted(s) {
		return s
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

func sortedNN(s []placement.NamespacedName) []placement.NamespacedName {
	if len(s) == 0 {
		return nil
	}
	if slices.IsSortedFunc(s, compareNN) {
		return s
	}
	c := slices.Clone(s)
	slices.SortFunc(c, compareNN)
	return c
}

// staleness describes how a binding differs from what it must carry; empty when up to date.
func staleness(b *placement.Binding, d *desired) string {
	var parts []string
	if b.ResourceSnapshotName != d.snapshot {
		if b.ResourceSnapshotName == "" {
			parts = append(parts, "resource snapshot "+d.snapshot)
		} else {
			parts = append(parts, "resource snapshot "+b.ResourceSnapshotName+" → "+d.snapshot)
		}
	}
	if !slices.Equal(sortedStrings(b.ClusterResourceOverrideSnapshots), d.cro) ||
		!slices.Equal(sortedNN(b.ResourceOverrideSnapshots), d.ro) {
		parts = append(parts, "override snapshots")
	}
	if !placement.ApplyStrategiesEqual(b.ApplyStrategy, d.apply) {
		parts = append(parts, "apply strategy")
	}
	return strings.Join(parts, ", ")
}

// compareBindings orders bindings by target cluster, then name.
func compareBindings(a, b *placement.Binding) int {
	return cmp.Or(cmp.Compare(a.TargetCluster, b.TargetCluster), cmp.Compare(a.Name, b.Name))
}

// sameCondition reports whether cs already holds c at generation gen.
func sameCondition(cs []condition.Timed, c condition.Condition, gen int64) bool {
	old, ok := condition.Find(cs, c.Type)
	return ok && old.Condition == c && old.ObservedGeneration == gen
}

// plural returns "1 cluster" or "n clusters"-style text.
func plural(n int, one, many string) string {
	if n == 1 {
		return strconv.Itoa(n) + " " + one
	}
	return strconv.Itoa(n) + " " + many
}
