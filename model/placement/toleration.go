package placement

import "github.com/fleetsim/fleetsim/model/member"

// Toleration lets a placement ignore matching taints (TAINT-MATCH).
type Toleration struct {
	Key      string             `json:"key,omitempty"`
	Operator TolerationOperator `json:"operator,omitempty"`
	Value    string             `json:"value,omitempty"`
	Effect   member.TaintEffect `json:"effect,omitempty"`
}

// Tolerates reports whether t tolerates taint: an empty effect matches every effect; Exists
// matches the key (an empty key matches every key) whatever the value; Equal, the default,
// needs key and value to be equal.
func (t Toleration) Tolerates(taint member.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Operator == TolerationOpExists {
		return t.Key == "" || t.Key == taint.Key
	}
	return t.Key == taint.Key && t.Value == taint.Value
}

// FirstUntolerated returns the index of the first taint in taints that no toleration
// tolerates, or -1 when all are tolerated.
func FirstUntolerated(taints []member.Taint, tolerations []Toleration) int {
	for i, taint := range taints {
		tolerated := false
		for _, t := range tolerations {
			if t.Tolerates(taint) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			return i
		}
	}
	return -1
}
