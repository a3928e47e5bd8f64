#!/usr/bin/env bash
# Provide the real control-plane binaries that envtest (controller-runtime) needs, and print
# the directory that holds them:
#
#   export KUBEBUILDER_ASSETS=$(hack/test-assets.sh)
#
# - kube-apiserver v1.37.1: the genuine one, built from k8s.io/kubernetes v1.37.1 fetched from
#   the Go module proxy (the only source reachable here), into a version-keyed cache dir outside
#   the repo; skipped when the cached binary already reports "Kubernetes v1.37.1".
# - etcd: Debian's etcd-server package (3.4.23 on bookworm), installed with apt-get if missing.
#   Nothing is started: the package's postinst only enables a systemd unit, and there is no
#   systemd on these machines.
# - systemd-nspawn (Debian systemd-container, apt) and hack/systemd-sandbox.sh, copied into
#   the assets dir: real systemd instances for the machine-agent tests.
# - kubectl: /usr/bin/kubectl from the image, linked if present (envtest only needs it for
#   its kubectl helper).
#
# stdout: exactly one line, the assets dir. Progress goes to stderr.
# Cache:  ${FLEETSIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleetsim}/k8s-1.37.1/
# Env:    FLEETSIM_KEEP_GOCACHE=1  build with the default GOCACHE instead of a throwaway one
#                                  (see hack/README.md for the trade-off).
# Needs:  go >= 1.26, apt-get and root (only when etcd-server is not installed yet), flock (optional).
set -Eeuo pipefail

K8S_VERSION=1.37.1
HACK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)

# Keep the real stdout on fd 3 for the final path; everything else goes to stderr.
exec 3>&1 1>&2

STEP="start"
T0=$SECONDS
log() { printf 'test-assets: %s\n' "$*" >&2; }
die() { printf 'test-assets: FAILED at step "%s": %s\n' "$STEP" "$*" >&2; exit 1; }
on_err() {
	local rc=$?
	# report once, from the main shell (a failing $(...) also fails the command around it)
	if [ "$BASH_SUBSHELL" -eq 0 ]; then
		printf 'test-assets: FAILED at step "%s" (exit %d, line %s: %s)\n' \
			"$STEP" "$rc" "${BASH_LINENO[0]}" "$BASH_COMMAND" >&2
	fi
	exit "$rc"
}
trap on_err ERR

CLEANUP=()
cleanup() {
	local p
	for p in "${CLEANUP[@]+"${CLEANUP[@]}"}"; do
		# module-cache style files are read-only; make them removable first
		chmod -R u+w "$p" 2>/dev/null || true
		rm -rf "$p"
	done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

STEP="prepare cache dir"
CACHE_ROOT=${FLEETSIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleetsim}
VDIR="$CACHE_ROOT/k8s-$K8S_VERSION"
ASSETS="$VDIR/assets"
mkdir -p "$ASSETS" || die "cannot create $ASSETS"
VDIR=$(cd "$VDIR" && pwd -P)
ASSETS="$VDIR/assets"

# Serialise concurrent runs (e.g. two test jobs on one machine) on the same cache dir.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$VDIR/.lock"
	if ! flock -n 9; then
		log "waiting for another test-assets.sh run holding $VDIR/.lock"
		flock 9
	fi
else
	log "warning: flock not found; not locking $VDIR"
fi

# --------------------------------------------------------------------------------------------
STEP="kube-apiserver v$K8S_VERSION"
KAPI="$VDIR/kube-apiserver"
kapi_ok() {
	[ -x "$KAPI" ] && "$KAPI" --version 2>/dev/null | grep -qx "Kubernetes v$K8S_VERSION"
}
if kapi_ok; then
	log "kube-apiserver v$K8S_VERSION cached at $KAPI"
else
	STEP="kube-apiserver: check Go toolchain"
	command -v go >/dev/null 2>&1 || die "go not found in PATH"
	GOV=$(GOTOOLCHAIN=local go env GOVERSION) || die "go env GOVERSION failed"
	case $GOV in
	go1.2[6-9]* | go1.[3-9][0-9]* | go[2-9]*) ;;
	*) die "k8s.io/kubernetes v$K8S_VERSION needs Go >= 1.26, found $GOV" ;;
	esac

	log "building kube-apiserver v$K8S_VERSION from the Go module proxy (cold: ~4-6 min on 2 cores)"
	W=$(mktemp -d "${TMPDIR:-/tmp}/fleetsim-kapibuild.XXXXXX")
	CLEANUP+=("$W" "$VDIR/kube-apiserver.tmp")
	mkdir -p "$W/mod"
	cd "$W/mod"
	# -mod=mod: the throwaway module has no go.sum yet; GOTOOLCHAIN=local: never fetch a toolchain.
	export GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN=local
	if [ "${FLEETSIM_KEEP_GOCACHE:-0}" = 1 ]; then
		log "using the default GOCACHE ($(go env GOCACHE))"
	else
		# ~2.7 GB of compiled k8s packages that nothing else reuses (-trimpath/CGO_ENABLED=0
		# give different cache keys from the project's own builds): drop them afterwards.
		export GOCACHE="$W/gocache"
		log "using a throwaway GOCACHE ($GOCACHE), removed afterwards"
	fi

	STEP="kube-apiserver: download k8s.io/kubernetes@v$K8S_VERSION go.mod"
	t=$SECONDS
	if ! KJSON=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" 2>&1); then
		die "go mod download k8s.io/kubernetes@v$K8S_VERSION failed: $KJSON"
	fi
	KGOMOD=$(printf '%s\n' "$KJSON" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
	[ -n "$KGOMOD" ] && [ -f "$KGOMOD" ] || die "go mod download gave no go.mod for k8s.io/kubernetes@v$K8S_VERSION"

	STEP="kube-apiserver: write build module"
	# k8s.io/kubernetes' go.mod replaces every staging module with ./staging/src/k8s.io/<name>,
	# which a module download does not contain; each is published as k8s.io/<name> v0.MINOR.PATCH.
	# sample-cli-plugin and sample-controller are not published at v0.37.1 and are not needed.
	STAGING=$(sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\)[[:space:]]*=>[[:space:]]*\./staging/src/.*#\1#p' "$KGOMOD")
	n=0
	{
		printf 'module example.com/fleetsim-kapibuild\n\ngo 1.26.0\n\n'
		printf 'require k8s.io/kubernetes v%s\n\nreplace (\n' "$K8S_VERSION"
		for m in $STAGING; do
			case $m in k8s.io/sample-*) [ "$m" = k8s.io/sample-apiserver ] || continue ;; esac
			printf '\t%s => %s v0.%s\n' "$m" "$m" "${K8S_VERSION#1.}"
			n=$((n + 1))
		done
		printf ')\n'
	} >go.mod
	[ "$n" -ge 20 ] || die "found only $n staging replaces in $KGOMOD (expected ~30); go.mod layout changed?"
	printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver"\n' >tools.go
	log "mapped $n staging modules to v0.${K8S_VERSION#1.}"

	STEP="kube-apiserver: go mod tidy"
	go mod tidy
	log "modules resolved in $((SECONDS - t)) s"

	STEP="kube-apiserver: go build"
	t=$SECONDS
	MINOR=$(echo "$K8S_VERSION" | cut -d. -f2)
	LDF="-s -w"
	LDF+=" -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION"
	LDF+=" -X k8s.io/component-base/version.gitMajor=1"
	LDF+=" -X k8s.io/component-base/version.gitMinor=$MINOR"
	LDF+=" -X k8s.io/component-base/version.gitTreeState=clean"
	LDF+=" -X k8s.io/client-go/pkg/version.gitVersion=v$K8S_VERSION"
	CGO_ENABLED=0 go build -trimpath -ldflags "$LDF" -o "$VDIR/kube-apiserver.tmp" \
		k8s.io/kubernetes/cmd/kube-apiserver
	log "compiled in $((SECONDS - t)) s"

	STEP="kube-apiserver: verify version"
	got=$("$VDIR/kube-apiserver.tmp" --version 2>&1) || die "built binary does not run: $got"
	[ "$got" = "Kubernetes v$K8S_VERSION" ] || die "built binary reports '$got', want 'Kubernetes v$K8S_VERSION'"
	mv -f "$VDIR/kube-apiserver.tmp" "$KAPI"
	kapi_ok || die "$KAPI does not report Kubernetes v$K8S_VERSION after install"
	cd /
	cleanup
	CLEANUP=()
	log "kube-apiserver v$K8S_VERSION built at $KAPI"
fi

# --------------------------------------------------------------------------------------------
STEP="etcd (Debian etcd-server)"
ETCD=/usr/bin/etcd
pkg_installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}
if pkg_installed etcd-server && [ -x "$ETCD" ]; then
	log "etcd-server already installed"
else
	command -v apt-get >/dev/null 2>&1 || die "etcd-server is not installed and apt-get is not available"
	[ "$(id -u)" = 0 ] || die "etcd-server is not installed; run as root (or: apt-get install etcd-server)"
	reinstall=()
	if pkg_installed etcd-server; then
		reinstall=(--reinstall)
		log "etcd-server installed but $ETCD missing: reinstalling"
	fi
	# Where systemd does run, keep the postinst from starting etcd.service: we start nothing.
	if [ -d /run/systemd/system ] && [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		CLEANUP+=(/usr/sbin/policy-rc.d)
	fi
	STEP="etcd: apt-get update"
	t=$SECONDS
	apt-get -o DPkg::Lock::Timeout=300 update -qq
	STEP="etcd: apt-get install etcd-server"
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
		--no-install-recommends "${reinstall[@]+"${reinstall[@]}"}" etcd-server
	log "etcd-server installed in $((SECONDS - t)) s"
fi
STEP="etcd: verify"
[ -x "$ETCD" ] || die "$ETCD not found after installing etcd-server"
ev=$("$ETCD" --version 2>&1 | sed -n 1p) || die "$ETCD --version failed: $ev"
case $ev in "etcd Version:"*) ;; *) die "$ETCD --version printed '$ev'" ;; esac
log "$ev"

# --------------------------------------------------------------------------------------------
STEP="systemd-nspawn (Debian systemd-container)"
# The machine-agent tests run real systemd instances, each the PID 1 of a systemd-nspawn
# container made by hack/systemd-sandbox.sh (never at the cgroup root; see that script).
if command -v systemd-nspawn >/dev/null 2>&1; then
	log "systemd-nspawn already installed"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	t=$SECONDS
	apt-get -o DPkg::Lock::Timeout=300 update -qq
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
		--no-install-recommends systemd-container
	log "systemd-container installed in $((SECONDS - t)) s"
else
	log "warning: systemd-nspawn missing and cannot install systemd-container (needs root and apt-get); machine-agent tests will skip or fail"
fi

# --------------------------------------------------------------------------------------------
STEP="assemble assets dir"
ln -sfn ../kube-apiserver "$ASSETS/kube-apiserver"
ln -sfn "$ETCD" "$ASSETS/etcd"
if [ -x /usr/bin/kubectl ]; then
	ln -sfn /usr/bin/kubectl "$ASSETS/kubectl"
elif command -v kubectl >/dev/null 2>&1; then
	ln -sfn "$(command -v kubectl)" "$ASSETS/kubectl"
else
	rm -f "$ASSETS/kubectl"
	log "warning: kubectl not found; $ASSETS has no kubectl (envtest itself does not need it)"
fi
[ -x "$ASSETS/kube-apiserver" ] && [ -x "$ASSETS/etcd" ] || die "assets in $ASSETS are not executable"
# The sandbox script travels with the assets, so tests find it through KUBEBUILDER_ASSETS.
install -m 0755 "$HACK_DIR/systemd-sandbox.sh" "$ASSETS/systemd-sandbox.sh.tmp"
mv -f "$ASSETS/systemd-sandbox.sh.tmp" "$ASSETS/systemd-sandbox.sh"

STEP="done"
log "assets ready in $((SECONDS - T0)) s: $ASSETS"
printf '%s\n' "$ASSETS" >&3
