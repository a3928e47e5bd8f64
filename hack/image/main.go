package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
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
	flag.Parse()
	if err := build(*binary, *tag, *out); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Println(*out)
}

func build(binary, tag, out string) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("tag %q: %w", tag, err)
	}
	img, err := Image(binary)
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
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("read the binary: %w", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "fleet", Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
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
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Config.Entrypoint = []string{"/fleet"}
	cf.Config.Cmd = []string{"hub"}
	cf.Config.User = nonRoot
	cf.Config.Labels = map[string]string{"org.opencontainers.image.source": "https://github.com/fleetsim/fleetsim", "org.opencontainers.image.title": "fleet"}
	return mutate.ConfigFile(img, cf)
}
