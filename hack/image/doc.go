// Command image builds the container image of the fleet binary without a container engine:
// one layer holding the static binary as /fleet on an empty base, run as an unprivileged
// user, written as a tarball that `docker load`, `podman load` and `kind load image-archive`
// accept. `make image` builds the binary and calls it; config/manager/deployment.yaml runs the
// image it tags.
package main
