package scheduler

// SetForceUnranked makes PickN decisions take the path without a policy cache (see
// forceUnranked) until it is called with false.
func SetForceUnranked(on bool) { forceUnranked = on }
