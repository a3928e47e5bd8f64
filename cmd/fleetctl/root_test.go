package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
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

// TestOfflineCommands: version, --version, verify and prefix matching, which need no hub.
func TestOfflineCommands(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.service", "[Service]\nExecStart=/bin/true\n")
	tmpl := write("web@.service", "[Service]\nExecStart=/bin/sleep %i\n\n[X-Fleet]\nConflicts=web@*.service\n")
	combo := write("combo.service", "[Service]\nExecStart=/bin/true\n\n[X-Fleet]\nMachineID=abc\nGlobal=true\n")
	broken := write("broken.service", "[Service\nExecStart=/bin/true\n")
	v := "fleetctl version " + version() + "\n"
	tests := []struct {
		args       []string
		code       int
		out, inErr string
	}{
		{args: []string{"version"}, out: v},
		{args: []string{"--version"}, out: v},
		{args: []string{"vers"}, out: v},
		{args: []string{"verify", good, tmpl}, out: "Unit good.service: OK\nUnit web@.service: OK\n", inErr: "signatures are not supported"},
		{args: []string{"veri", good}, out: "Unit good.service: OK\n"},
		{args: []string{"verify", good, combo, broken, filepath.Join(dir, "missing.service")}, code: 1, out: "Unit good.service: OK\n",
			inErr: "cannot be combined with Global"},
		{args: []string{"verify", broken}, code: 1, inErr: "broken.service"},
		{args: []string{"verify", filepath.Join(dir, "missing.service")}, code: 1, inErr: "not found"},
		{args: []string{"st"}, code: 2, inErr: `unknown command "st"`},
		{args: []string{"list-unit"}, code: 2, inErr: `unknown command "list-unit"`},
		{args: []string{"ver"}, code: 2, inErr: `unknown command "ver"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := execute(context.Background(), tt.args, &out, &errb)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %s)", code, tt.code, errb.String())
			}
			if tt.out != "" || code == 0 {
				if diff := cmp.Diff(tt.out, out.String()); diff != "" {
					t.Errorf("stdout (-want +got):\n%s", diff)
				}
			}
			if !strings.Contains(errb.String(), tt.inErr) {
				t.Errorf("stderr %q does not contain %q", errb.String(), tt.inErr)
			}
		})
	}
}

// TestPrefixMatching: every unique prefix of a command names it; a prefix shared by two
// commands names none.
func TestPrefixMatching(t *testing.T) {
	root := newRootCommand(io.Discard, io.Discard)
	cobraPrefix := cobra.EnablePrefixMatching
	cobra.EnablePrefixMatching = true
	defer func() { cobra.EnablePrefixMatching = cobraPrefix }()
	names := []string{}
	for _, c := range root.Commands() {
		names = append(names, c.Name())
	}
	for _, n := range names {
		for i := 1; i <= len(n); i++ {
			p := n[:i]
			var matches []string
			for _, m := range names {
				if strings.HasPrefix(m, p) {
					matches = append(matches, m)
				}
			}
			want := ""
			if len(matches) == 1 || slices.Contains(matches, p) {
				want = n
				if slices.Contains(matches, p) {
					want = p
				}
			}
			got := ""
			if c, _, err := root.Find([]string{p}); err == nil && c != root {
				got = c.Name()
			}
			if got != want {
				t.Errorf("prefix %q finds %q, want %q (candidates %v)", p, got, want, matches)
			}
		}
	}
}
