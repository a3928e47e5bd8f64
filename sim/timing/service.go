package timing

import (
	"math"
	"time"
)

// Cores are the machine's cores as the model serves work on them: each piece of work (a
// write's CPU in the API server and etcd, a decision's CPU in the hub) goes, in the order it
// is handed over, to the core that is free first. With a fractional number of cores each of
// the ceil(cores) servers runs at cores/ceil(cores) of a core.
type Cores struct {
	free    []time.Duration
	stretch float64
}

// NewCores are c's apiServer.cores, all free from the start.
func NewCores(c *Calibration) *Cores {
	k := max(1, int(math.Ceil(c.APIServer.Cores.Value)))
	return &Cores{free: make([]time.Duration, k), stretch: float64(k) / c.APIServer.Cores.Value}
}

// Serve hands cpu of work over at time at and returns when it is done.
func (k *Cores) Serve(at, cpu time.Duration) time.Duration {
	s := 0
	for i, f := range k.free {
		if f < k.free[s] {
			s = i
		}
	}
	end := max(at, k.free[s]) + time.Duration(float64(cpu)*k.stretch)
	k.free[s] = end
	return end
}

// Reset frees every core from at (a simulator's hub restart keeps the API server, but a new
// run starts empty).
func (k *Cores) Reset(at time.Duration) {
	for i := range k.free {
		k.free[i] = at
	}
}

// WriteCPU is the API server's CPU for one write of cost, with everything watching.
func (c *Calibration) WriteCPU(cost Constant) time.Duration {
	return time.Duration(float64(ms(cost)) * c.APIServer.Watched.Value)
}

// RoundTrip is a write's time beyond its CPU.
func (c *Calibration) RoundTrip() time.Duration { return ms(c.APIServer.RoundTrip) }

// DecisionCPU is the hub's CPU for a decision handling n bindings.
func (c *Calibration) DecisionCPU(n int) time.Duration {
	return ms(c.Hub.CPUPerDecision) + time.Duration(n)*ms(c.Hub.CPUPerBinding)
}

// HubCPUPerWrite is the hub's CPU per binding of a decision that handles bindings and writes
// writes, spread over its writes: the hub spends it beside them (building each object, its
// informers decoding each watch event, the expectations), not before the first, which would
// delay one placement's first binding by the CPU of all of them (reports/accuracy.md). The
// bench's model and the simulator's hub both charge it this way.
func (c *Calibration) HubCPUPerWrite(bindings, writes int) time.Duration {
	if writes <= 0 {
		return 0
	}
	return time.Duration(bindings) * ms(c.Hub.CPUPerBinding) / time.Duration(writes)
}

// Write is one write a decision makes: its kind (as the hub's metrics name it) and cost.
type Write struct {
	Kind string
	Cost Constant
}

// DecisionWrites is what a decision of the named controller writes when it handles n
// bindings, as prod/hub's decisions of that controller do when the change is new: the
// simulator's controllers are split as the hub's controllers are, so it charges each
// decision the writes of its part of the hub's flush. A placement's status lists its n
// clusters; decisions is how many cluster decisions its policy snapshot's status holds (the
// scheduler's picks and the clusters it did not pick, up to its limit).
func (c *Calibration) DecisionWrites(controller string, n, decisions int) []Write {
	a := c.APIServer
	rep := func(w Write, n int) []Write {
		out := make([]Write, n)
		for i := range out {
			out[i] = w
		}
		return out
	}
	switch controller {
	case "membership":
		return []Write{{"MemberCluster update-status", a.HeartbeatWrite}}
	case ctrlPlacementWide:
		return []Write{{writePlacement, a.SnapshotCreate}, {writePolicySnapshot, a.SnapshotCreate},
			{writePolicyStatus, c.PolicyStatusCost(decisions)}, {writeResourceSnapshot, a.SnapshotCreate}}
	case "scheduler":
		return rep(Write{writeBindingCreate, a.BindingCreate}, n)
	case ctrlRollout:
		return append(rep(Write{writeBindingStatus, a.BindingStatus}, n), Write{writePlacementStatus, c.PlacementStatusCost(n)})
	case "work-generator":
		return []Write{{writeWorkCreate, a.WorkCreate}, {writeBindingStatus, a.BindingStatus}}
	default: // eviction, staged update: their object's status
		return []Write{{"status", c.PlacementStatusCost(n)}}
	}
}

// PlacementStatusCost is the CPU of a placement's status write listing clusters clusters.
func (c *Calibration) PlacementStatusCost(clusters int) Constant {
	a := c.APIServer
	return c.statusCost(clusters, a.PlacementStatusSmall, a.PlacementStatus)
}

// PolicyStatusCost is the CPU of a policy snapshot's status write holding decisions
// cluster decisions.
func (c *Calibration) PolicyStatusCost(decisions int) Constant {
	a := c.APIServer
	return c.statusCost(decisions, a.PolicySnapshotStatusSmall, a.PolicySnapshotStatus)
}

// statusCost: a status write's CPU grows with the clusters it lists (the API server decodes,
// validates, diffs the managed fields of and encodes the whole object); measured at two
// sizes, it is taken as the straight line through them, as LIST costs are.
func (c *Calibration) statusCost(clusters int, small, large Constant) Constant {
	a := c.APIServer
	v := alongLine(float64(clusters), a.StatusClustersSmall.Value, a.StatusClustersLarge.Value, small.Value, large.Value)
	return Constant{Value: v, Unit: "ms", Source: statusCostSource}
}

// statusCostSource names where statusCost's answers come from (one string: the model asks
// for one on every status write).
const statusCostSource = "apiServer's status write cost of the kind, along the line through its two measured sizes"

// alongLine is the value at x of the straight line through (xSmall, vSmall) and (xLarge,
// vLarge) beyond xSmall, vSmall at or below it, and never below the lower of the two: a
// measured cost does not fall under what was measured, whatever the size.
func alongLine(x, xSmall, xLarge, vSmall, vLarge float64) float64 {
	v := vSmall
	if xLarge > xSmall && x > xSmall {
		v += (vLarge - vSmall) * (x - xSmall) / (xLarge - xSmall)
	}
	return max(v, min(vSmall, vLarge))
}

// ListCost is the time of one LIST of n objects of a kind measured at two sizes: small
// objects at perSmall ms each, large at perLarge. The cost per object moves with the size
// (the API server decodes, filters and encodes the whole list in one answer), taken as a
// straight line through the two measurements beyond the small size, and as the small
// size's below it.
func (c *Calibration) ListCost(n int, perSmall, perLarge Constant) time.Duration {
	a := c.APIServer
	per := alongLine(float64(n), a.ListSmall.Value, a.ListLarge.Value, perSmall.Value, perLarge.Value)
	return time.Duration(float64(n) * per * float64(time.Millisecond))
}

// RestartList is a restarted hub's list phase for placements of perPlacement bindings each
// on members: its informers list each kind in turn, the bindings, Works, policy snapshots
// and resource snapshots (one each per placement) at their measured cost for their size,
// the placements and the members' MemberClusters and InternalMemberClusters at
// apiServer.listPerObject. The lists are charged one after the other: they share the API
// server's cores.
func (c *Calibration) RestartList(members, placements, perPlacement int) time.Duration {
	a := c.APIServer
	bindings := placements * perPlacement
	return c.ListCost(bindings, a.ListBindingSmall, a.ListBindingLarge) +
		c.ListCost(bindings, a.ListWorkSmall, a.ListWorkLarge) +
		c.ListCost(placements, a.ListPolicySnapshotSmall, a.ListPolicySnapshotLarge) +
		c.ListCost(placements, a.ListResourceSnapshotSmall, a.ListResourceSnapshotLarge) +
		time.Duration(placements+2*members)*ms(a.ListPerObject)
}

// Join is the time from a new hub's start to every one of members Joined and Healthy.
func (c *Calibration) Join(members int) time.Duration {
	return ms(c.Hub.JoinBase) + time.Duration(members)*ms(c.Hub.JoinPerMember)
}

// WarmAfterJoin is when the hub is warm (hub.warmUp after its start), counted from the
// members' join, when the bench creates its first placement: a placement created before
// then waits for it (the first placement's slowness when few members join quickly), one
// created after does not (negative: warm before the join).
func (c *Calibration) WarmAfterJoin(members int) time.Duration {
	return ms(c.Hub.WarmUp) - c.Join(members)
}
