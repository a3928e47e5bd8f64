package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// nonRoot is the user the hub runs as: distroless's nonroot, which the Deployment's
// runAsNonRoot accepts without a passwd file.
const nonRoot = "65532:65532"

func main() {
	binary := flag.String("binary", "bin/fleet", "the statically linked fleet binary")
	tag := flag.String("tag", "fleetsim/fleet:dev", "the image reference to tag")
	out := flag.String("out", "bin/fleet-image.tar", "where to write the image tarball")
	o := Options{}
	flag.StringVar(&o.Name, "name", "fleet", "the binary's name at the image's root, and its entrypoint")
	flag.StringVar(&o.Cmd, "cmd", "hub", "the image's default arguments, separated by spaces")
	flag.StringVar(&o.Arch, "arch", "amd64", "the image's architecture (the binary's GOARCH)")
	flag.StringVar(&o.Dir, "dir", "", "a directory of *.yaml files copied into the image ...")
	flag.StringVar(&o.DirAt, "dir-at", "scenarios", "... at this path under its root")
	flag.Parse()
	o.Binary = *binary
	if err := buildWith(o, *tag, *out); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Println(*out)
}

func build(binary, tag, out string) error {
	return buildWith(Options{Binary: binary, Name: "fleet", Cmd: "hub", Arch: "amd64"}, tag, out)
}

func buildWith(o Options, tag, out string) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("tag %q: %w", tag, err)
	}
	img, err := ImageWith(o)
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}

// Image is the fleet image: the binary at /fleet, entrypoint `/fleet hub`. Its layer and
// config carry no build times, so the same binary always gives the same image digest.
func Image(binary string) (v1.Image, error) {
	return ImageWith(Options{Binary: binary, Name: "fleet", Cmd: "hub", Arch: "amd64"})
}

// Options describe an image of one static binary: the fleet image (fleet hub), the fuzz
// image of config/fuzz (fleetsim fuzz with the scenario library), each per architecture.
type Options struct {
	Binary, Name, Cmd, Arch string
	// Dir's *.yaml files are copied to DirAt (the fuzz Job reads /scenarios/*.yaml).
	Dir, DirAt string
}

// ImageWith is the image o describes, as reproducible as Image.
func ImageWith(o Options) (v1.Image, error) {
	data, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("read the binary: %w", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := add(o.Name, 0o755, data); err != nil {
		return nil, err
	}
	if o.Dir != "" {
		files, err := filepath.Glob(filepath.Join(o.Dir, "*.yaml"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("--dir %s: no *.yaml files", o.Dir)
		}
		if err := tw.WriteHeader(&tar.Header{Name: o.DirAt + "/", Mode: 0o755, Typeflag: tar.TypeDir, ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		for _, f := range files { // Glob sorts: the same files give the same layer
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			if err := add(path.Join(o.DirAt, filepath.Base(f)), 0o644, b); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = o.Arch, "linux"
	cf.Config.Entrypoint = []string{"/" + o.Name}
	cf.Config.Cmd = strings.Fields(o.Cmd)
	cf.Config.User = nonRoot
	cf.Config.Labels = map[string]string{"org.opencontainers.image.source": "https://github.com/fleetsim/fleetsim", "org.opencontainers.image.title": o.Name}
	return mutate.ConfigFile(img, cf)
}
