//go:build fleetsim_mutants

package mutant

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCatalogueMatchesSource checks that every mutant of the catalogue has a switch in the
// decision code, in one file, and that every switch there is in the catalogue.
func TestCatalogueMatchesSource(t *testing.T) {
	re := regexp.MustCompile(`mutant\.On\("([^"]+)"\)`)
	files := map[string][]string{} // mutant → files
	root := filepath.Join("..")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(path, filepath.Join(root, "mutant")) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			if !slices.Contains(files[m[1]], path) {
				files[m[1]] = append(files[m[1]], path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var names, inSource []string
	for _, m := range All {
		names = append(names, m.Name)
		if fs := files[m.Name]; len(fs) != 1 {
			t.Errorf("mutant %s has switches in %d files %v, want 1", m.Name, len(fs), fs)
		} else if !strings.HasPrefix(fs[0], filepath.Join(root, strings.TrimPrefix(m.Package, "model/"))+string(filepath.Separator)) {
			t.Errorf("mutant %s is in %s, not in its package %s", m.Name, fs[0], m.Package)
		}
	}
	for n := range files {
		inSource = append(inSource, n)
	}
	slices.Sort(names)
	slices.Sort(inSource)
	if diff := cmp.Diff(names, inSource); diff != "" {
		t.Errorf("catalogue against switches in model/ (-catalogue +source):\n%s", diff)
	}
	if len(All) < 25 {
		t.Errorf("%d mutants, want at least 25", len(All))
	}
}

func TestSetTurnsOneOn(t *testing.T) {
	restore, err := Set("units.replacesIgnored")
	if err != nil {
		t.Fatal(err)
	}
	if !On("units.replacesIgnored") || On("units.machineOfIgnored") {
		t.Error("Set did not turn exactly the named mutant on")
	}
	restore()
	if On("units.replacesIgnored") {
		t.Error("restore left the mutant on")
	}
	if _, err := Set("no.such"); err == nil {
		t.Error("Set accepted a name outside the catalogue")
	}
}
