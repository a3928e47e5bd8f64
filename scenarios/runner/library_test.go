package runner

import (
	"path/filepath"
	"testing"

	"github.com/fleetsim/fleetsim/scenarios"
)

// TestLibrary runs every scenario of the library: each states its expectations, and all
// must hold. Running one twice must give the same trace hash.
func TestLibrary(t *testing.T) {
	files, err := filepath.Glob("../*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios found in scenarios/")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := scenarios.Load(f)
			if err != nil {
				t.Fatalf("Load(%s): %v", f, err)
			}
			rep, err := Run(sc, Options{})
			if err != nil {
				t.Fatalf("Run(%s): %v", f, err)
			}
			for _, e := range rep.Expectations {
				if !e.Passed {
					t.Errorf("%s:%d at %s: %s: %s", f, e.Line, e.At, e.Description, e.Detail)
				}
			}
			for _, i := range rep.Invariants {
				if !i.Passed {
					t.Errorf("%s: invariant %s broke at %s: %s", f, i.Name, i.At, i.Detail)
				}
			}
			if len(rep.Expectations) == 0 {
				t.Errorf("%s states no expectations", f)
			}
			again, err := Run(sc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if again.TraceHash != rep.TraceHash {
				t.Errorf("%s: two runs gave trace hashes %s and %s", f, rep.TraceHash, again.TraceHash)
			}
		})
	}
}
