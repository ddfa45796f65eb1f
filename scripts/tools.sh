#!/usr/bin/env bash
# Builds the project's pinned tools from Go modules into ./bin.
#
#   scripts/tools.sh            build every tool that is missing or at another version
#   scripts/tools.sh NAME...    only these (e.g. golangci-lint, which `make tools` skips)
#
# Each tool gets a stamp, bin/.stamps/NAME, holding the version it was built at;
# a tool whose stamp matches versions.env is skipped, so a warm run takes well
# under a second. Nothing is fetched except through the Go module proxy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../versions.env
source "$root/versions.env"
bin=${LOCALBIN:-$root/bin}
mkdir -p "$bin/.stamps"

# The server binaries report the version they were built from; without these
# stamps they say v0.0.0-master and `kubectl version` cannot parse them.
kube_minor=${KUBERNETES_VERSION#v1.}; kube_minor=${kube_minor%%.*}
kube_ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$kube_minor -X $pkg.gitTreeState=clean"
done
kwok_ldflags="-X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v} -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=${KUBERNETES_VERSION#v}"

# name | version | package (in tools/go.mod) | ldflags
tools=(
  "kube-apiserver|$KUBERNETES_VERSION|k8s.io/kubernetes/cmd/kube-apiserver|$kube_ldflags"
  "kube-controller-manager|$KUBERNETES_VERSION|k8s.io/kubernetes/cmd/kube-controller-manager|$kube_ldflags"
  "kube-scheduler|$KUBERNETES_VERSION|k8s.io/kubernetes/cmd/kube-scheduler|$kube_ldflags"
  "kubectl|$KUBERNETES_VERSION|k8s.io/kubernetes/cmd/kubectl|$kube_ldflags"
  "etcd|$ETCD_VERSION|go.etcd.io/etcd/server/v3|"
  "kwok|$KWOK_VERSION|sigs.k8s.io/kwok/cmd/kwok|$kwok_ldflags"
  "kwokctl|$KWOK_VERSION|sigs.k8s.io/kwok/cmd/kwokctl|$kwok_ldflags"
  "kind|$KIND_VERSION|sigs.k8s.io/kind|"
  "controller-gen|$CONTROLLER_TOOLS_VERSION|sigs.k8s.io/controller-tools/cmd/controller-gen|"
  "kustomize|$KUSTOMIZE_VERSION|sigs.k8s.io/kustomize/kustomize/v5|"
)
for gen in applyconfiguration-gen client-gen conversion-gen deepcopy-gen defaulter-gen \
           informer-gen lister-gen register-gen validation-gen; do
  tools+=("$gen|$K8S_LIBS_VERSION|k8s.io/code-generator/cmd/$gen|")
done
# Built on request only: golangci-lint is large and only `make lint` needs it;
# the others go into the offline kind node image (scripts/kind-node-image.sh).
optional=(
  "golangci-lint|$GOLANGCI_LINT_VERSION|github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION|"
  "kubelet|$KUBERNETES_VERSION|k8s.io/kubernetes/cmd/kubelet|$kube_ldflags"
  "kubeadm|$KUBERNETES_VERSION|k8s.io/kubernetes/cmd/kubeadm|$kube_ldflags"
  "kube-proxy|$KUBERNETES_VERSION|k8s.io/kubernetes/cmd/kube-proxy|$kube_ldflags"
  "containerd|$CONTAINERD_VERSION|github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD_VERSION|"
  "containerd-shim-runc-v2|$CONTAINERD_VERSION|github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION|"
  "ctr|$CONTAINERD_VERSION|github.com/containerd/containerd/v2/cmd/ctr@$CONTAINERD_VERSION|"
  "crictl|$CRICTL_VERSION|wrap:sigs.k8s.io/cri-tools@$CRICTL_VERSION:sigs.k8s.io/cri-tools/cmd/crictl|"
  "coredns|$COREDNS_VERSION|github.com/coredns/coredns@$COREDNS_VERSION|"
  "registry|$DISTRIBUTION_VERSION|github.com/distribution/distribution/v3/cmd/registry@$DISTRIBUTION_VERSION|"
)

fmt_secs() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# build NAME VERSION PACKAGE LDFLAGS, printing a heartbeat while it runs.
build() {
  local name=$1 version=$2 pkg=$3 ldflags=$4 start=$SECONDS
  printf '  %-24s %-9s building...\n' "$name" "$version"
  ( while sleep 30; do printf '  %-24s %-9s still building (%s)\n' "$name" "$version" "$(fmt_secs $((SECONDS - start)))"; done ) &
  local beat=$! rc=0
  if [[ $pkg == wrap:* ]]; then
    # wrap:MODULE@VERSION:PACKAGE, for a module `go install pkg@version`
    # refuses (the proxy will not list cri-tools' versions): built from a
    # throwaway module that requires it, the same dependency versions.
    local spec=${pkg#wrap:} mod pkgpath tmp
    mod=${spec%%:*} pkgpath=${spec#*:}
    tmp=$(mktemp -d)
    ( cd "$tmp" && printf 'module example.com/k8s-demo/wrap\n\ngo %s\n\nrequire %s %s\n' "$GO_VERSION" "${mod%@*}" "${mod#*@}" >go.mod &&
      printf '//go:build tools\n\npackage wrap\n\nimport _ "%s"\n' "$pkgpath" >tools.go &&
      GOWORK=off GOFLAGS=-mod=mod go mod tidy &&
      GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin/$name" "$pkgpath" ) || rc=$?
    rm -rf "$tmp"
  elif [[ $pkg == *@* ]]; then
    # A tool that is not in tools/go.mod (it would drag its own dependency
    # versions into the others): `go install pkg@version`, straight from the proxy.
    (cd "$root" && GOWORK=off GOBIN="$bin" CGO_ENABLED=0 go install -trimpath "$pkg") || rc=$?
  else
    (cd "$root/tools" && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin/$name" "$pkg") || rc=$?
  fi
  kill "$beat" 2>/dev/null; wait "$beat" 2>/dev/null || true
  if [ $rc -ne 0 ]; then
    echo "  $name $version: build failed (exit $rc)" >&2
    return $rc
  fi
  echo "$version" > "$bin/.stamps/$name"
  printf '  %-24s %-9s built in %s\n' "$name" "$version" "$(fmt_secs $((SECONDS - start)))"
}

wanted=("${tools[@]}")
if [ $# -gt 0 ]; then
  wanted=()
  for want in "$@"; do
    found=""
    for t in "${tools[@]}" "${optional[@]}"; do
      [ "${t%%|*}" = "$want" ] && { wanted+=("$t"); found=1; }
    done
    [ -n "$found" ] || { echo "unknown tool '$want'; known: $(for t in "${tools[@]}" "${optional[@]}"; do printf '%s ' "${t%%|*}"; done)" >&2; exit 2; }
  done
fi

todo=()
for t in "${wanted[@]}"; do
  IFS='|' read -r name version _ <<<"$t"
  if [ -x "$bin/$name" ] && [ "$(cat "$bin/.stamps/$name" 2>/dev/null)" = "$version" ]; then
    continue
  fi
  todo+=("$t")
done

if [ ${#todo[@]} -eq 0 ]; then
  echo "tools: all ${#wanted[@]} up to date in ${bin#"$root"/}/"
  exit 0
fi

echo "tools: building ${#todo[@]} of ${#wanted[@]} into ${bin#"$root"/}/ (a cold build takes several minutes)"
total_start=$SECONDS
i=0
for t in "${todo[@]}"; do
  i=$((i + 1))
  IFS='|' read -r name version pkg ldflags <<<"$t"
  printf '[%d/%d]' "$i" "${#todo[@]}"
  build "$name" "$version" "$pkg" "$ldflags"
done
echo "tools: done in $(fmt_secs $((SECONDS - total_start)))"
