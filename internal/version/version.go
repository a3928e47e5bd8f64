package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by `make release` and `make build`:
//
//	-ldflags "-X github.com/fleetsim/fleetsim/internal/version.version=v0.4.0
//	          -X github.com/fleetsim/fleetsim/internal/version.commit=<sha>
//	          -X github.com/fleetsim/fleetsim/internal/version.date=<RFC 3339>"
var (
	version string
	commit  string
	date    string
)

// Info is a build's identity.
type Info struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Date     string `json:"date"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// Get is this binary's Info: the -ldflags values where set, the build information
// otherwise, "unknown" where neither says.
func Get() Info {
	return from(version, commit, date, readBuildInfo)
}

func readBuildInfo() (*debug.BuildInfo, bool) { return debug.ReadBuildInfo() }

func from(v, c, d string, read func() (*debug.BuildInfo, bool)) Info {
	i := Info{Version: v, Commit: c, Date: d, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := read(); ok {
		if i.Version == "" && bi.Main.Version != "" {
			i.Version = bi.Main.Version // "(devel)" in a checkout, the module version after go install
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if i.Commit == "" {
					i.Commit = s.Value
				}
			case "vcs.time":
				if i.Date == "" {
					i.Date = s.Value
				}
			case "vcs.modified":
				i.Modified = s.Value == "true" && c == ""
			}
		}
	}
	for _, f := range []*string{&i.Version, &i.Commit, &i.Date} {
		if *f == "" {
			*f = "unknown"
		}
	}
	return i
}

// String is the one line --version prints after the binary's name.
func (i Info) String() string {
	commit := i.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if i.Modified {
		commit += "-dirty"
	}
	return fmt.Sprintf("%s (commit %s, built %s, %s %s)", i.Version, commit, i.Date, i.Go, i.Platform)
}
