package main

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
)

func TestChartVersion(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"v1.2.3", "1.2.3"},
		{"1.2.3-rc.1", "1.2.3-rc.1"},
		{"v1.2.3-4-gabcdef0-dirty", "1.2.3-4-gabcdef0-dirty"},
		{"abcdef0", "0.0.0-abcdef0"},
		{"dev", "0.0.0-dev"},
		{"abc/def+x", "0.0.0-abc-def-x"},
	} {
		if diff := cmp.Diff(tc.want, chartVersion(tc.in)); diff != "" {
			t.Errorf("chartVersion(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestPackTheCharts: both charts package, stamped with the version, and load back.
func TestPackTheCharts(t *testing.T) {
	out := t.TempDir()
	for _, name := range []string{"fleet-hub", "fleet-member"} {
		path, err := pack(filepath.Join("..", "..", "charts", name), "1.2.3", out)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(filepath.Join(out, name+"-1.2.3.tgz"), path); diff != "" {
			t.Errorf("%s: path (-want +got):\n%s", name, diff)
		}
		c, err := loader.Load(path)
		if err != nil {
			t.Fatalf("load %s: %v", path, err)
		}
		got := []any{c.Metadata.Version, c.Metadata.AppVersion, len(c.CRDObjects()) > 0, len(c.Templates) > 0}
		if diff := cmp.Diff([]any{"1.2.3", "1.2.3", true, true}, got); diff != "" {
			t.Errorf("%s: packaged [version, appVersion, has CRDs, has templates] (-want +got):\n%s", name, diff)
		}
	}
}
