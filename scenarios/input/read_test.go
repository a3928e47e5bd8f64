package input

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte("name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFileLimit(small, 8)
	if err != nil || string(got) != "name: x\n" {
		t.Fatalf("a file at the limit: %q, %v", got, err)
	}
	if _, err := ReadFileLimit(small, 7); !errors.As(err, new(*TooLargeError)) {
		t.Errorf("a file one byte over the limit: %v, want a *TooLargeError", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want ErrNotExist", err)
	}
}

// TestReadFileEndless: an input that never ends is refused at the bound, not read until
// memory runs out.
func TestReadFileEndless(t *testing.T) {
	_, err := ReadFileLimit("/dev/zero", 1<<20)
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("/dev/zero: %v, want a *TooLargeError", err)
	}
	if diff := cmp.Diff("/dev/zero: larger than 1 MiB, the most fleetsim reads from such a file (is it the file you meant?)", err.Error()); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}
