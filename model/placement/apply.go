package placement

// The apply strategy of a placement (APPLY-API): how the member agents apply the placed
// manifests, copied into every binding the rollout writes.

// ApplyStrategy mirrors v1beta1 ApplyStrategy (APPLY-API).
type ApplyStrategy struct {
	Type                  string `json:"type,omitempty"`
	ComparisonOption      string `json:"comparisonOption,omitempty"`
	WhenToApply           string `json:"whenToApply,omitempty"`
	WhenToTakeOver        string `json:"whenToTakeOver,omitempty"`
	AllowCoOwnership      bool   `json:"allowCoOwnership,omitempty"`
	ServerSideApplyConfig *struct {
		ForceConflicts bool `json:"force,omitempty"`
	} `json:"serverSideApplyConfig,omitempty"`
}

// Copy is a deep copy of a, nil for nil.
func (a *ApplyStrategy) Copy() *ApplyStrategy {
	if a == nil {
		return nil
	}
	c := *a
	if a.ServerSideApplyConfig != nil {
		ssa := *a.ServerSideApplyConfig
		c.ServerSideApplyConfig = &ssa
	}
	return &c
}

// ApplyStrategiesEqual compares apply strategies, nil being equal to the zero value: an
// unset strategy means the defaults, so a binding carrying either is up to date.
func ApplyStrategiesEqual(a, b *ApplyStrategy) bool {
	var za, zb ApplyStrategy
	if a == nil {
		a = &za
	}
	if b == nil {
		b = &zb
	}
	x, y := *a, *b
	if (x.ServerSideApplyConfig == nil) != (y.ServerSideApplyConfig == nil) {
		return false
	}
	if x.ServerSideApplyConfig != nil && *x.ServerSideApplyConfig != *y.ServerSideApplyConfig {
		return false
	}
	x.ServerSideApplyConfig, y.ServerSideApplyConfig = nil, nil
	return x == y
}
