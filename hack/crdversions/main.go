package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/apis/kinds"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crdversions DIR")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.yaml"))
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("no CRDs in %s", os.Args[1])
	}
	for _, f := range files {
		if err != nil {
			break
		}
		err = rewrite(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crdversions:", err)
		os.Exit(1)
	}
}

// rewrite adds the served versions to the CRD in file f, when it is a KubeFleet CRD.
func rewrite(f string) error {
	in, err := os.ReadFile(f)
	if err != nil {
		return err
	}
	out, changed, err := addVersions(in)
	if err != nil {
		return fmt.Errorf("%s: %w", f, err)
	}
	if !changed {
		return nil
	}
	return os.WriteFile(f, out, 0o644)
}

// addVersions returns the CRD in with every served version of its kind. changed is false
// for a CRD of another group.
func addVersions(in []byte) (out []byte, changed bool, err error) {
	var crd map[string]any
	if err := yaml.Unmarshal(in, &crd); err != nil {
		return nil, false, err
	}
	spec, _ := crd["spec"].(map[string]any)
	group, _ := spec["group"].(string)
	if !kinds.IsFleetGroup(group) {
		return in, false, nil
	}
	names, _ := spec["names"].(map[string]any)
	kindName, _ := names["kind"].(string)
	kind, ok := kinds.Lookup(group, kindName)
	if !ok {
		return nil, false, fmt.Errorf("kind %s of group %s is not in model/fleetapi: add it with the versions KubeFleet serves", kindName, group)
	}
	versions, _ := spec["versions"].([]any)
	var stored map[string]any
	for _, v := range versions {
		if m, _ := v.(map[string]any); m["name"] == kinds.StorageVersion {
			stored = m
		}
	}
	if len(versions) != 1 || stored == nil {
		return nil, false, fmt.Errorf("want exactly the version %s from controller-gen, found %d versions", kinds.StorageVersion, len(versions))
	}
	var served []any
	for _, name := range kind.Versions {
		v, err := deepCopy(stored)
		if err != nil {
			return nil, false, err
		}
		v["name"] = name
		v["served"] = true
		v["storage"] = name == kinds.StorageVersion
		served = append(served, v)
	}
	spec["versions"] = served
	body, err := yaml.Marshal(crd)
	if err != nil {
		return nil, false, err
	}
	var b bytes.Buffer
	if bytes.HasPrefix(in, []byte("---\n")) {
		b.WriteString("---\n")
	}
	b.Write(body)
	return b.Bytes(), true, nil
}

func deepCopy(m map[string]any) (map[string]any, error) {
	b, err := yaml.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, yaml.Unmarshal(b, &out)
}
