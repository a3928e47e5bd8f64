package main

import "strings"

// module is this repository's module path.
const module = "github.com/fleetsim/fleetsim"

// rule forbids the packages under From to import anything under one of Deny. Paths without
// a dot in their first element are this module's (expanded with module); others are taken
// as they are. Except lists packages under From the rule does not bind.
type rule struct {
	From   string
	Except []string
	Deny   []string
	Why    string
}

// clients are the libraries that do I/O against a cluster or a machine.
var clients = []string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime", "github.com/coreos/go-systemd", "github.com/godbus/dbus"}

// rules are the arrows of docs/architecture.md:
//
//	cmd → {scenarios, prod, agent shells} → {sim, apis, agent cores} → model
var rules = []rule{
	{From: "model", Deny: append([]string{"apis", "sim", "prod", "scenarios", "agentk8s", "agentsystemd", "bench", "cmd", "net/http", "os/exec"}, clients...),
		Why: "model holds pure decisions: no I/O, no client, nothing above it"},
	{From: "sim", Deny: append([]string{"prod", "scenarios", "agentk8s/member", "agentsystemd/machine", "bench", "cmd"}, clients...),
		Why: "the simulator runs the shared cores, never production or the agents' shells"},
	{From: "agentk8s", Except: []string{"agentk8s/member"}, Deny: append([]string{"prod", "apis", "sim", "scenarios", "cmd", "bench"}, clients...),
		Why: "the member agent's core is shared with the simulator: pure, no API types, no client"},
	{From: "agentsystemd", Except: []string{"agentsystemd/machine"}, Deny: append([]string{"prod", "apis", "sim", "scenarios", "cmd", "bench"}, clients...),
		Why: "the machine agent's core is shared with the simulator: pure, no API types, no client"},
	{From: "agentk8s/member", Deny: []string{"prod", "sim", "scenarios", "cmd", "bench"},
		Why: "an agent's shell talks to the hub through the API (apis/), never through the hub's code"},
	{From: "agentsystemd/machine", Deny: []string{"prod", "sim", "scenarios", "cmd", "bench"},
		Why: "an agent's shell talks to the hub through the API (apis/), never through the hub's code"},
	{From: "apis", Deny: []string{"prod", "sim", "scenarios", "agentk8s/member", "agentsystemd/machine", "cmd", "bench"},
		Why: "the API types and conversions sit below every driver"},
	{From: "scenarios", Deny: []string{"prod", "cmd", "agentk8s/member", "agentsystemd/machine"},
		Why: "scenarios and the tools over them run in the simulator only"},
	{From: "prod", Deny: []string{"cmd", "bench", "scenarios/fuzz", "scenarios/plan"},
		Why: "the hub's code does not reach the binaries or the benchmarks"},
	{From: "bench", Deny: []string{"cmd"}, Why: "benchmarks are libraries of the commands, not the other way round"},
}

// mayLinkHarness are the packages allowed to import "testing" or envtest outside _test.go
// files: test helpers, benchmark harnesses, and fleetsim, whose bench command runs the
// benchmarks with testing.Benchmark. No production binary may link them.
var mayLinkHarness = []string{"bench", "prod/testenv", "apis/apitest", "agentsystemd/machine/dbus/sdtest", "model/scheduler/internal/reference", "cmd/fleetsim"}

// harness are the imports that only tests and benchmarks may link.
var harness = []string{"testing", "sigs.k8s.io/controller-runtime/pkg/envtest"}

// productionBinaries link no test harness at all, directly or through a dependency.
var productionBinaries = []string{"cmd/fleet", "cmd/fleetctl", "cmd/kubectl-fleet"}

// expand makes a module-relative path absolute; paths of other modules pass through.
func expand(p string) string {
	first, _, _ := strings.Cut(p, "/")
	if strings.Contains(first, ".") || !isModuleDir(first) {
		return p
	}
	return module + "/" + p
}

// isModuleDir tells this module's top-level directories from the standard library's
// packages (net/http, os/exec), which have no dot either.
func isModuleDir(first string) bool {
	switch first {
	case "model", "apis", "sim", "prod", "scenarios", "agentk8s", "agentsystemd", "bench", "cmd", "hack":
		return true
	}
	return false
}

// under reports whether path is prefix or inside it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}
