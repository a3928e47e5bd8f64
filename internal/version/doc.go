// Package version says which build a binary is: its version, commit and build date, as
// `make release` stamps them with -ldflags -X, else as the Go toolchain records them in
// the binary's build information (the module version of `go install`, the VCS revision
// and commit time of a build in a checkout). Every binary prints it for --version.
package version
