package reference

import "github.com/fleetsim/fleetsim/model/scheduler"

// The decision's inputs and outputs are the scheduler's own types.
type (
	Input   = scheduler.Input
	Options = scheduler.Options
	Plan    = scheduler.Plan
	Change  = scheduler.Change
)

const (
	DefaultMaxDecisions             = scheduler.DefaultMaxDecisions
	PluginClusterEligibility        = scheduler.PluginClusterEligibility
	PluginSamePlacementAntiAffinity = scheduler.PluginSamePlacementAntiAffinity
	PluginTaintToleration           = scheduler.PluginTaintToleration
	PluginClusterAffinity           = scheduler.PluginClusterAffinity
	PluginTopologySpread            = scheduler.PluginTopologySpread
	ReasonPicked                    = scheduler.ReasonPicked
	ReasonNotHighEnough             = scheduler.ReasonNotHighEnough
	ReasonNotFound                  = scheduler.ReasonNotFound
	ScheduleAnywayPenalty           = scheduler.ScheduleAnywayPenalty
	reasonNotEligibleYet            = "cluster is not eligible for resource placement yet: "
	unschedulablePrefix             = "ClusterUnschedulable, "
	reasonAffinityNoMatch           = "cluster does not match with any of the required cluster affinity terms"
)
