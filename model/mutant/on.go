//go:build fleetsim_mutants

package mutant

import (
	"fmt"
	"sync/atomic"
)

// active is the name of the mutant that is on ("" for none).
var active atomic.Pointer[string]

// On reports whether the named mutant is the one Set turned on.
func On(name string) bool {
	p := active.Load()
	return p != nil && *p == name
}

// Set turns the named mutant on (every other off; "" turns all off) and returns a function
// restoring the previous one. A name not in All is an error.
func Set(name string) (restore func(), err error) {
	if name != "" && Find(name) == nil {
		return nil, fmt.Errorf("mutant %q is not one of the %d in the catalogue", name, len(All))
	}
	old := active.Swap(&name)
	return func() { active.Store(old) }, nil
}

// Find returns the catalogue entry of a mutant, nil when there is none.
func Find(name string) *Mutant {
	for i := range All {
		if All[i].Name == name {
			return &All[i]
		}
	}
	return nil
}
