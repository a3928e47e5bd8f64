// Package runner owns running a parsed scenario: it builds the simulator, turns the
// scenario's members, timeline steps and random faults into simulator actions, checks the
// invariants after every event and the expectations at their times, and returns a Report
// that the CLI prints as text, JSON or YAML.
package runner
