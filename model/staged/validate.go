package staged

import (
	"fmt"
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// API limits (section 22 of the KubeFleet spec).
const (
	MaxStages              = 31
	MaxStageNameLength     = 63
	MaxAfterStageTasks     = 2
	MaxPlacementNameLength = 255
	// MaxRunNameLength: a run's name goes into the names and labels of its approval
	// requests, so it must fit a label value.
	MaxRunNameLength = 63
)

var (
	stageNamePattern = regexp.MustCompile(`^[a-z0-9]+$`)
	// maxConcurrencyPercent: 1% to 100%.
	maxConcurrencyPercent = regexp.MustCompile(`^(100|[1-9][0-9]?)%$`)
	// waitTimePattern: numbers with s, m or h units, without leading zeros; a bare "0" (no
	// unit) and "01h" are refused, as KubeFleet refuses them.
	waitTimePattern = regexp.MustCompile(`^(([1-9][0-9]*|0)(\.[0-9]+)?(s|m|h))+$`)
)

// ValidateWaitTime checks a waitTime as written in a manifest, before it is parsed into a
// metav1.Duration: numbers with s, m or h units such as "1m", "1.5h", "1h30m", "0s".
func ValidateWaitTime(s string, path *field.Path) field.ErrorList {
	if !waitTimePattern.MatchString(s) {
		return field.ErrorList{field.Invalid(path, s, `must match ^(([1-9][0-9]*|0)(\.[0-9]+)?(s|m|h))+$`)}
	}
	return nil
}

// ValidateStrategy checks a strategy as the API server does.
func ValidateStrategy(s *ClusterStagedUpdateStrategy) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(s.Name) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), s.Name, msg))
		}
	}
	return append(errs, ValidateStrategySpec(&s.Spec, field.NewPath("spec"))...)
}

// ValidateStrategySpec checks the stages: 1 to 31, unique names of at most 63 characters of
// [a-z0-9], valid selectors, at most two after-stage tasks and one of each type, TimedWait
// with a waitTime.
func ValidateStrategySpec(spec *StagedUpdateStrategySpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	sp := path.Child("stages")
	switch {
	case len(spec.Stages) == 0:
		errs = append(errs, field.Required(sp, "at least one stage is required"))
	case len(spec.Stages) > MaxStages:
		errs = append(errs, field.TooMany(sp, len(spec.Stages), MaxStages))
	}
	seen := map[string]bool{}
	for i, st := range spec.Stages {
		p := sp.Index(i)
		switch {
		case st.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case len(st.Name) > MaxStageNameLength:
			errs = append(errs, field.TooLong(p.Child("name"), st.Name, MaxStageNameLength))
		case !stageNamePattern.MatchString(st.Name):
			errs = append(errs, field.Invalid(p.Child("name"), st.Name, "must match ^[a-z0-9]+$"))
		}
		if st.Name != "" {
			if seen[st.Name] {
				errs = append(errs, field.Duplicate(p.Child("name"), st.Name))
			}
			seen[st.Name] = true
		}
		if st.LabelSelector != nil {
			if _, err := metav1.LabelSelectorAsSelector(st.LabelSelector); err != nil {
				errs = append(errs, field.Invalid(p.Child("labelSelector"), st.LabelSelector, err.Error()))
			}
		}
		if mc := st.MaxConcurrency; mc != nil {
			mp := p.Child("maxConcurrency")
			if mc.Type == intstr.Int && mc.IntVal < 1 {
				errs = append(errs, field.Invalid(mp, mc.IntVal, "must be at least 1"))
			} else if mc.Type == intstr.String && !maxConcurrencyPercent.MatchString(mc.StrVal) {
				errs = append(errs, field.Invalid(mp, mc.StrVal, "must be a number of at least 1 or a percentage from 1% to 100%"))
			}
		}
		bp := p.Child("beforeStageTasks")
		if len(st.BeforeStageTasks) > 1 {
			errs = append(errs, field.TooMany(bp, len(st.BeforeStageTasks), 1))
		}
		for j, t := range st.BeforeStageTasks {
			switch {
			case t.Type != TaskApproval:
				errs = append(errs, field.NotSupported(bp.Index(j).Child("type"), t.Type, []AfterStageTaskType{TaskApproval}))
			case t.WaitTime != nil:
				errs = append(errs, field.Forbidden(bp.Index(j).Child("waitTime"), "not allowed for an Approval task"))
			}
		}
		tp := p.Child("afterStageTasks")
		if len(st.AfterStageTasks) > MaxAfterStageTasks {
			errs = append(errs, field.TooMany(tp, len(st.AfterStageTasks), MaxAfterStageTasks))
		}
		types := map[AfterStageTaskType]bool{}
		for j, t := range st.AfterStageTasks {
			tj := tp.Index(j)
			switch t.Type {
			case TaskTimedWait:
				if t.WaitTime == nil {
					errs = append(errs, field.Required(tj.Child("waitTime"), "required for a TimedWait task"))
				}
			case TaskApproval:
				if t.WaitTime != nil {
					errs = append(errs, field.Forbidden(tj.Child("waitTime"), "not allowed for an Approval task"))
				}
			case "":
				errs = append(errs, field.Required(tj.Child("type"), ""))
				continue
			default:
				errs = append(errs, field.NotSupported(tj.Child("type"), t.Type, []AfterStageTaskType{TaskTimedWait, TaskApproval}))
				continue
			}
			if types[t.Type] {
				errs = append(errs, field.Duplicate(tj.Child("type"), t.Type))
			}
			types[t.Type] = true
			if t.WaitTime != nil {
				if t.WaitTime.Duration < 0 {
					errs = append(errs, field.Invalid(tj.Child("waitTime"), t.WaitTime.Duration.String(), "must not be negative"))
				} else {
					errs = append(errs, ValidateWaitTime(t.WaitTime.Duration.String(), tj.Child("waitTime"))...)
				}
			}
		}
	}
	return errs
}

// ValidateRun checks a run as the API server does: an RFC 1123 name and a complete spec
// with placementName of at most 255 characters.
func ValidateRun(r *ClusterStagedUpdateRun) field.ErrorList {
	var errs field.ErrorList
	np := field.NewPath("metadata", "name")
	if r.Name == "" {
		errs = append(errs, field.Required(np, ""))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(r.Name) {
			errs = append(errs, field.Invalid(np, r.Name, msg))
		}
		if len(r.Name) > MaxRunNameLength {
			errs = append(errs, field.TooLong(np, r.Name, MaxRunNameLength))
		}
	}
	sp := field.NewPath("spec")
	switch {
	case r.Spec.PlacementName == "":
		errs = append(errs, field.Required(sp.Child("placementName"), ""))
	case len(r.Spec.PlacementName) > MaxPlacementNameLength:
		errs = append(errs, field.TooLong(sp.Child("placementName"), r.Spec.PlacementName, MaxPlacementNameLength))
	}
	if r.Spec.StagedRolloutStrategyName == "" {
		errs = append(errs, field.Required(sp.Child("stagedRolloutStrategyName"), ""))
	}
	switch r.Spec.State {
	case "", StateInitialize, StateRun, StateStop:
	default:
		errs = append(errs, field.NotSupported(sp.Child("state"), r.Spec.State, []RunState{StateInitialize, StateRun, StateStop}))
	}
	return errs
}

// ValidateRunUpdate checks an update of a run: its spec is immutable but for state, which
// cannot go back to Initialize once the run was told to run or stop.
func ValidateRunUpdate(old, new *ClusterStagedUpdateRun) field.ErrorList {
	errs := ValidateRun(new)
	o, n := old.Spec, new.Spec
	o.State, n.State = "", ""
	if o != n {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "the spec of a ClusterStagedUpdateRun is immutable but for spec.state"))
	}
	if new.Spec.State == StateInitialize && old.Spec.State != StateInitialize {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "state"), "cannot go back to Initialize"))
	}
	return errs
}

// ValidateApprovalRequest checks an approval request: both spec fields are required.
func ValidateApprovalRequest(a *ClusterApprovalRequest) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("spec")
	if a.Spec.ParentStageRollout == "" {
		errs = append(errs, field.Required(sp.Child("parentStageRollout"), ""))
	}
	if a.Spec.TargetStage == "" {
		errs = append(errs, field.Required(sp.Child("targetStage"), ""))
	}
	return errs
}

// ValidateApprovalRequestUpdate checks an update of an approval request: its spec is
// immutable.
func ValidateApprovalRequestUpdate(old, new *ClusterApprovalRequest) field.ErrorList {
	errs := ValidateApprovalRequest(new)
	if old.Spec != new.Spec {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), fmt.Sprintf("the spec of a %s is immutable", KindApprovalRequest)))
	}
	return errs
}
