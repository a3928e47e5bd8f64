// Package mutant holds the switches of planted bugs (mutants) for mutation testing of the
// fuzz campaign (`make fuzz-mutants`, reports/fuzz.md): each mutant is one realistic slip
// (an off-by-one, a flipped comparison, a missed case) in the decision code of model/,
// written there as a single line `if mutant.On("name") { ... }` next to the correct code.
//
// In the default build On is a function returning the constant false, which the compiler
// inlines, so the mutated branch is dead code and dropped: production binaries cannot
// reach a mutant and hold no switch to flip (TestDefaultBuildHasNoSwitch checks the files
// the default build compiles). Only a build with the tag fleetsim_mutants compiles the
// switch (on.go) and the catalogue of mutants (catalog.go), which Set turns on one at a
// time.
package mutant
