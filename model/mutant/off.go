//go:build !fleetsim_mutants

package mutant

// On reports whether the named mutant is on: never, in a build without the fleetsim_mutants
// tag (the compiler drops the branch it guards).
func On(string) bool { return false }
