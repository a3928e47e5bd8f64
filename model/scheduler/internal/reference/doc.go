// Package reference is the scheduler as it was before the fleet index (issue 14): every
// decision scans every member's own label and property maps. It is kept, frozen, as the
// oracle the scheduler's tests compare the indexed decisions with on random fleets; nothing
// outside tests uses it.
package reference
