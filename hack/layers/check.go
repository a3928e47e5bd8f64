package main

import (
	"fmt"
	"sort"
)

// pkg is one package of the module: its path, its direct imports (no test files) and, for
// binaries, every package it links.
type pkg struct {
	Path    string
	Imports []string
	Deps    []string
}

// violation is one import that breaks a rule.
type violation struct {
	From, Import, Why string
}

func (v violation) String() string { return fmt.Sprintf("%s imports %s: %s", v.From, v.Import, v.Why) }

// check returns every import of pkgs that breaks a rule, sorted.
func check(pkgs []pkg) []violation {
	var out []violation
	for _, p := range pkgs {
		for _, r := range rules {
			if !under(p.Path, expand(r.From)) || excepted(p.Path, r.Except) {
				continue
			}
			for _, im := range p.Imports {
				for _, d := range r.Deny {
					if under(im, expand(d)) {
						out = append(out, violation{p.Path, im, r.Why})
					}
				}
			}
		}
		if !isTestOnly(p.Path) {
			for _, im := range p.Imports {
				for _, h := range harness {
					if im == h {
						out = append(out, violation{p.Path, im, "only tests, test helpers and benchmark harnesses link a test harness"})
					}
				}
			}
		}
		for _, b := range productionBinaries {
			if p.Path != expand(b) {
				continue
			}
			for _, d := range p.Deps {
				for _, h := range harness {
					if d == h {
						out = append(out, violation{p.Path, d, "a production binary links no test harness (through any dependency)"})
					}
				}
				if isTestOnly(d) {
					out = append(out, violation{p.Path, d, "a production binary links no test helper or benchmark harness"})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].Import < out[j].Import
	})
	return out
}

func excepted(path string, except []string) bool {
	for _, e := range except {
		if under(path, expand(e)) {
			return true
		}
	}
	return false
}

func isTestOnly(path string) bool {
	return excepted(path, mayLinkHarness)
}
