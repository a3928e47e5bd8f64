package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheck(t *testing.T) {
	m := func(p string) string { return module + "/" + p }
	tests := []struct {
		name string
		pkgs []pkg
		want []violation
	}{
		{"the layout's arrows hold", []pkg{
			{Path: m("model/hub"), Imports: []string{m("model/scheduler"), "k8s.io/apimachinery/pkg/labels", "sort"}},
			{Path: m("sim"), Imports: []string{m("agentk8s"), m("agentsystemd"), m("model/hub")}},
			{Path: m("agentk8s/member"), Imports: []string{m("agentk8s"), m("apis/convert"), "k8s.io/client-go/rest"}},
			{Path: m("prod/hub"), Imports: []string{m("apis/convert"), "sigs.k8s.io/controller-runtime"}},
			{Path: m("cmd/fleet"), Imports: []string{m("prod/hub")}, Deps: []string{m("prod/hub"), "sigs.k8s.io/controller-runtime"}},
		}, nil},
		{"an agent's shell importing the hub's API package under prod (the old layout)", []pkg{
			{Path: m("agentk8s/member"), Imports: []string{m("prod/apis/placement/v1beta1")}},
		}, []violation{{m("agentk8s/member"), m("prod/apis/placement/v1beta1"), rules[4].Why}}},
		{"the model importing a client", []pkg{
			{Path: m("model/units"), Imports: []string{"k8s.io/client-go/kubernetes"}},
		}, []violation{{m("model/units"), "k8s.io/client-go/kubernetes", rules[0].Why}}},
		{"net/http is a standard-library package, not a module directory", []pkg{
			{Path: m("model/status"), Imports: []string{"net/http"}},
		}, []violation{{m("model/status"), "net/http", rules[0].Why}}},
		{"the simulator importing an agent's shell and the scenario tools", []pkg{
			{Path: m("sim"), Imports: []string{m("agentk8s/member"), m("scenarios/runner")}},
		}, []violation{
			{m("sim"), m("agentk8s/member"), rules[1].Why},
			{m("sim"), m("scenarios/runner"), rules[1].Why},
		}},
		{"the agent's core importing the API types; its shell may", []pkg{
			{Path: m("agentsystemd"), Imports: []string{m("apis/fleet/v1alpha1")}},
			{Path: m("agentsystemd/machine"), Imports: []string{m("apis/fleet/v1alpha1")}},
		}, []violation{{m("agentsystemd"), m("apis/fleet/v1alpha1"), rules[3].Why}}},
		{"the production binary linking envtest through a dependency", []pkg{
			{Path: m("cmd/fleet"), Imports: []string{m("bench/hubbench")}, Deps: []string{m("bench/hubbench"), "sigs.k8s.io/controller-runtime/pkg/envtest", "testing"}},
		}, []violation{
			{m("cmd/fleet"), m("bench/hubbench"), "a production binary links no test helper or benchmark harness"},
			{m("cmd/fleet"), "sigs.k8s.io/controller-runtime/pkg/envtest", "a production binary links no test harness (through any dependency)"},
			{m("cmd/fleet"), "testing", "a production binary links no test harness (through any dependency)"},
		}},
		{"a library importing testing outside its tests; a test helper may", []pkg{
			{Path: m("prod/hub"), Imports: []string{"testing"}},
			{Path: m("prod/testenv"), Imports: []string{"testing"}},
		}, []violation{{m("prod/hub"), "testing", "only tests, test helpers and benchmark harnesses link a test harness"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, check(tt.pkgs)); diff != "" {
				t.Errorf("check() (-want +got):\n%s", diff)
			}
		})
	}
}
