package rollout

import "sync/atomic"

// plantedExtraUnavailable is a test-only switch for the fuzzer's self-test (sim/fuzz): when
// positive, the rollout lets that many more clusters be unavailable than maxUnavailable
// allows, a known bug the fuzzer must find, shrink and replay. Nothing but a test sets it.
var plantedExtraUnavailable atomic.Int32

// PlantBugForTest turns the planted bug on (extra > 0) or off (0) and returns a function
// restoring the previous value. Only tests call it; it is never set in production.
func PlantBugForTest(extra int) (restore func()) {
	old := plantedExtraUnavailable.Swap(int32(extra))
	return func() { plantedExtraUnavailable.Store(old) }
}
