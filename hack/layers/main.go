package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	pkgs, err := load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "layers:", err)
		os.Exit(2)
	}
	vs := check(pkgs)
	for _, v := range vs {
		fmt.Fprintln(os.Stderr, "layers:", v)
	}
	if len(vs) > 0 {
		fmt.Fprintf(os.Stderr, "layers: %d imports break the arrows of docs/architecture.md (rules in hack/layers/rules.go)\n", len(vs))
		os.Exit(1)
	}
}

// load lists the module's packages with go list: direct imports for every package, and
// every dependency for the production binaries.
func load() ([]pkg, error) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "./...").Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w%s", err, stderrOf(err))
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs = append(pkgs, pkg{Path: p.ImportPath, Imports: p.Imports})
	}
	for i := range pkgs {
		for _, b := range productionBinaries {
			if pkgs[i].Path != expand(b) {
				continue
			}
			deps, err := exec.Command("go", "list", "-deps", "./"+b).Output()
			if err != nil {
				return nil, fmt.Errorf("go list -deps %s: %w%s", b, err, stderrOf(err))
			}
			pkgs[i].Deps = splitLines(deps)
		}
	}
	return pkgs, nil
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return ": " + string(ee.Stderr)
	}
	return ""
}

func splitLines(b []byte) []string {
	var out []string
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(l) > 0 {
			out = append(out, string(l))
		}
	}
	return out
}
