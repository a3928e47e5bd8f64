package version

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFrom(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	withInfo := func() (*debug.BuildInfo, bool) { return bi, true }
	without := func() (*debug.BuildInfo, bool) { return nil, false }
	plat := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		name          string
		v, c, d       string
		read          func() (*debug.BuildInfo, bool)
		want, wantStr string
	}{
		{"ldflags win", "v0.4.0", "fedcba9876543210", "2026-11-28T12:00:00Z", withInfo, "v0.4.0", "v0.4.0 (commit fedcba987654, built 2026-11-28T12:00:00Z, " + plat + ")"},
		{"build info", "", "", "", withInfo, "(devel)", "(devel) (commit 0123456789ab-dirty, built 2026-11-01T10:00:00Z, " + plat + ")"},
		{"nothing", "", "", "", without, "unknown", "unknown (commit unknown, built unknown, " + plat + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := from(tc.v, tc.c, tc.d, tc.read)
			if diff := cmp.Diff(tc.want, i.Version); diff != "" {
				t.Errorf("version (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStr, i.String()); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
		})
	}
}
