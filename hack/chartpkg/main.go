package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

func main() {
	version := flag.String("version", "", "the release's version (a leading v is dropped; a non-SemVer one, as git describe gives between tags, becomes 0.0.0-<it>)")
	out := flag.String("out", "dist", "directory the .tgz files are written to")
	flag.Parse()
	if *version == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: chartpkg --version <version> [--out dir] <chart dir>...")
		os.Exit(2)
	}
	v := chartVersion(*version)
	for _, dir := range flag.Args() {
		path, err := pack(dir, v, *out)
		if err != nil {
			fmt.Fprintf(os.Stderr, "chartpkg: %s: %v\n", dir, err)
			os.Exit(1)
		}
		fmt.Println(path)
	}
}

// chartVersion is the SemVer 2 version Helm requires of a chart, from a release version.
func chartVersion(v string) string {
	v = strings.TrimPrefix(v, "v")
	if _, err := semver.StrictNewVersion(v); err == nil {
		return v
	}
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, v)
	return "0.0.0-" + strings.Trim(clean, "-.")
}

func pack(dir, version, out string) (string, error) {
	c, err := loader.LoadDir(dir)
	if err != nil {
		return "", err
	}
	c.Metadata.Version, c.Metadata.AppVersion = version, version
	if err := c.Validate(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	return chartutil.Save(c, out)
}
