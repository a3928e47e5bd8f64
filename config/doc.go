// Package config carries the CRDs of this directory into the binaries: `fleet local up`
// installs the hub's (crd/bases) and each member's (member/crd) from here, so a binary
// started outside the repository needs no copy of them. The YAML files stay the source.
package config
