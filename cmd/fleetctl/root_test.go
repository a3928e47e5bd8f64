package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnitName(t *testing.T) {
	for in, want := range map[string]string{
		"hello":                 "hello.service",
		"hello.service":         "hello.service",
		"/tmp/units/web@.timer": "web@.timer",
		"app.v2":                "app.v2.service",
		"dir/db.socket":         "db.socket",
	} {
		if got := unitName(in); got != want {
			t.Errorf("unitName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTable(t *testing.T) {
	rows := []map[string]string{{"unit": "a.service", "machine": "m1/10.0.0.1", "active": "active"}, {"unit": "b.service"}}
	var out bytes.Buffer
	g := &globals{fields: "unit,active,sub"}
	if err := table(g, &out, []string{"active", "machine", "sub", "unit"}, rows); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i := range got {
		got[i] = strings.Join(strings.Fields(got[i]), " ")
	}
	if diff := cmp.Diff([]string{"UNIT ACTIVE SUB", "a.service active -", "b.service - -"}, got); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	g.noLegend, g.fields = true, "unit,nope"
	if err := table(g, &out, []string{"unit"}, rows); err == nil || !strings.Contains(err.Error(), `invalid field "nope"`) {
		t.Errorf("bad field: %v", err)
	}
	if got := machineLegend("0123456789abcdef", "10.0.0.7", false); got != "01234567.../10.0.0.7" {
		t.Errorf("machineLegend = %q", got)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{{"--output", "yaml", "list-units"}, {"start"}, {"list-units", "--no-such-flag"}, {"--endpoint", "ftp://x", "list-units"}} {
		var out, errb bytes.Buffer
		if code := execute(context.Background(), args, &out, &errb); code != 2 {
			t.Errorf("fleetctl %v: exit %d (%s), want 2", args, code, errb.String())
		}
	}
}
