package main

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestImage builds an image tarball from a stand-in binary and reads it back as `docker
// load` would: the tag, the entrypoint, the user and the binary's bytes and mode.
func TestImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fleet")
	content := []byte("#!/bin/true\nnot really a binary\n")
	if err := os.WriteFile(bin, content, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "image.tar")
	if err := build(bin, "example.com/fleet:v1", out); err != nil {
		t.Fatalf("build: %v", err)
	}
	tag, _ := name.NewTag("example.com/fleet:v1")
	img, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatalf("read the tarball back with its tag: %v", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	type config struct {
		Entrypoint, Cmd []string
		User, OS, Arch  string
	}
	got := config{cf.Config.Entrypoint, cf.Config.Cmd, cf.Config.User, cf.OS, cf.Architecture}
	want := config{[]string{"/fleet"}, []string{"hub"}, "65532:65532", "linux", "amd64"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("image config (-want +got):\n%s", d)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	h, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(tr)
	if h.Name != "fleet" || h.Mode != 0o755 || !bytes.Equal(data, content) {
		t.Errorf("layer holds %s mode %o (%d bytes), want fleet mode 755 with the binary's %d bytes", h.Name, h.Mode, len(data), len(content))
	}

	// The same binary gives the same image.
	again, err := Image(bin)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("digests %s and %s of the same binary differ", d1, d2)
	}
}

func TestBadTag(t *testing.T) {
	if err := build("unused", "UPPER/case:tag", filepath.Join(t.TempDir(), "x.tar")); err == nil {
		t.Error("build with an invalid tag succeeded, want an error naming the tag")
	}
}

// TestFuzzImage: the image config/fuzz runs (make fuzz-image): /fleetsim as entrypoint, no
// default arguments (the Job gives them), the scenario library under /scenarios, and the
// architecture asked for.
func TestFuzzImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fleetsim")
	if err := os.WriteFile(bin, []byte("stand-in"), 0o755); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "lib")
	if err := os.Mkdir(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"b.yaml", "a.yaml", "notes.md"} {
		if err := os.WriteFile(filepath.Join(lib, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	img, err := ImageWith(Options{Binary: bin, Name: "fleetsim", Arch: "arm64", Dir: lib, DirAt: "scenarios"})
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"/fleetsim"}, cf.Config.Entrypoint); d != "" || len(cf.Config.Cmd) != 0 || cf.Architecture != "arm64" {
		t.Errorf("entrypoint (-want +got) %s, cmd %v, arch %s; want no cmd and arm64", d, cf.Config.Cmd, cf.Architecture)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var names []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	if d := cmp.Diff([]string{"fleetsim", "scenarios/", "scenarios/a.yaml", "scenarios/b.yaml"}, names); d != "" {
		t.Errorf("layer files (-want +got):\n%s", d)
	}
}
