package placement

import "slices"

// The apply strategy of a placement (APPLY-API): how the member agents apply the placed
// manifests, copied into every binding the rollout writes. Its type, ApplyType, is declared
// here and nowhere else.

// ApplyType is an apply strategy's type, spec.strategy.applyStrategy.type (APPLY-API): what
// the member agent does with a Work's manifests. The empty value means DefaultApplyType.
// Every package asks the type (OrDefault, Valid, ReportsOnly, ServerSide) instead of
// comparing it with a spelling, so a new strategy is added in these files only:
//
//   - apis/placement/v1beta1/commons.go: the API's ApplyStrategyType constant and the
//     ApplyStrategy.Type field's +kubebuilder:validation:Enum marker; `make generate` then
//     rewrites the generated CRDs under config/crd/bases (clusterresourceplacements, works,
//     clusterresourcebindings, clusterstagedupdateruns).
//   - model/placement/apply.go (this file): the constant, its place in ApplyTypes (which
//     Valid and ValidatePlacement read) and its answers to ReportsOnly and ServerSide.
//   - agentk8s/decide.go: what the agent does with a manifest under it (Decide, apply).
//   - model/placement/apply_test.go and agentk8s/decide_test.go: their tests.
//
// Nothing else changes: apis/convert converts the type by its spelling (its test checks that
// ApplyTypes and the default are the CRDs' enum and default), ValidatePlacement refuses
// what is not in ApplyTypes (as the CRDs' enum does), and model/status, model/rollout,
// model/staged, model/eviction, model/invariants and agentk8s's work loop (RunWork, which
// the simulator and the member agent share) only ask ReportsOnly (Decide also ServerSide).
// A strategy that neither only reports nor applies like one of these would need a new
// method here and its callers, not a comparison.
type ApplyType string

const (
	// ClientSideApply applies each manifest with a client-side three-way merge (the
	// last-applied annotation is the original), server-side when the annotation would be
	// too large.
	ClientSideApply ApplyType = "ClientSideApply"
	// ServerSideApply applies each manifest server-side (serverSideApplyConfig.force takes
	// over conflicting fields).
	ServerSideApply ApplyType = "ServerSideApply"
	// ReportDiff applies nothing: it reports the differences between each manifest and the
	// member's object, with DiffReported in place of Applied and Available.
	ReportDiff ApplyType = "ReportDiff"

	// DefaultApplyType is what an empty type means (the API's default).
	DefaultApplyType = ClientSideApply
)

// ApplyTypes returns every apply strategy type, in the API's order.
func ApplyTypes() []ApplyType { return []ApplyType{ClientSideApply, ServerSideApply, ReportDiff} }

// OrDefault is t, or DefaultApplyType when t is empty.
func (t ApplyType) OrDefault() ApplyType {
	if t == "" {
		return DefaultApplyType
	}
	return t
}

// Valid reports whether t is one of ApplyTypes or empty (the default).
func (t ApplyType) Valid() bool { return slices.Contains(ApplyTypes(), t.OrDefault()) }

// ReportsOnly reports whether the member agent only reports under t and applies nothing
// (ReportDiff): the binding's conditions end with DiffReported instead of Applied and
// Available, it is ready and done once DiffReported is True, and evicting it disrupts
// nothing.
func (t ApplyType) ReportsOnly() bool { return t == ReportDiff }

// ServerSide reports whether the member agent applies server-side under t
// (ServerSideApply); under the others that apply, it does so only for an object too large
// for the last-applied annotation.
func (t ApplyType) ServerSide() bool { return t == ServerSideApply }

// TypeOrDefault is the strategy's type with its default; a nil strategy has the default
// type.
func (a *ApplyStrategy) TypeOrDefault() ApplyType {
	if a == nil {
		return DefaultApplyType
	}
	return a.Type.OrDefault()
}

// ApplyStrategy mirrors v1beta1 ApplyStrategy (APPLY-API).
type ApplyStrategy struct {
	Type                  ApplyType `json:"type,omitempty"`
	ComparisonOption      string    `json:"comparisonOption,omitempty"`
	WhenToApply           string    `json:"whenToApply,omitempty"`
	WhenToTakeOver        string    `json:"whenToTakeOver,omitempty"`
	AllowCoOwnership      bool      `json:"allowCoOwnership,omitempty"`
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
