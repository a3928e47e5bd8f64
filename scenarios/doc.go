// Package scenarios owns the scenario file format of fleetsim: a fleet (member groups), a
// timeline of actions in simulated time, expectations, invariants and random faults.
//
// Load and Parse read a file into a validated Scenario whose elements remember their
// lines, so that runtime failures can point at the file too. An invalid file is reported
// as an *Error, `file:line: field: reason`. README.md in this folder documents the format
// for operators; the simulator runs a Scenario (see scenarios/runner).
//
// Parsing walks the go.yaml.in/yaml/v3 node tree for exact lines and strict keys.
// Manifests in apply steps are decoded as Kubernetes does (sigs.k8s.io/yaml, then JSON):
// ClusterResourcePlacement objects strictly into placement.ClusterResourcePlacement and
// checked with placement.ValidatePlacement, MemberCluster objects against the limits of
// the MemberCluster API.
package scenarios
