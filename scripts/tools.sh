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

# src_hash DIR: part of the stamp of a tool of the repository's own,
# tools/DIR, so that a change to its code (or to tools/go.mod) builds it again
# (cksum: POSIX, on macOS too).
src_hash() {
  local f
  for f in "$root/tools/go.mod" "$root/tools/$1"/*.go; do
    case $f in *_test.go) ;; *) cat "$f" ;; esac
  done | cksum | cut -d' ' -f1
}

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
  # Not in tools/go.mod: kubebuilder's own k8s.io/* requirements would move
  # those that the server binaries build with.
  "kubebuilder|$KUBEBUILDER_VERSION|sigs.k8s.io/kubebuilder/v4@$KUBEBUILDER_VERSION|"
  # The scaffolds' charts (dist/chart): make verify lints and renders them,
  # CI's kind part installs them. Its module stamps only the minor version.
  "helm|$HELM_VERSION|helm.sh/helm/v4/cmd/helm@$HELM_VERSION|-X helm.sh/helm/v4/internal/version.version=$HELM_VERSION"
  # The repository's own: the scaffolds' `make run` serves their webhooks with it.
  "localwebhook|$K8S_LIBS_VERSION-$(src_hash localwebhook)|example.com/k8s-demo/tools/localwebhook|"
)
for gen in applyconfiguration-gen client-gen conversion-gen deepcopy-gen defaulter-gen \
           informer-gen lister-gen register-gen validation-gen; do
  tools+=("$gen|$K8S_LIBS_VERSION|k8s.io/code-generator/cmd/$gen|")
done
# main_hash NAME: part of the stamp of a tool built from images/kind-node/NAME/main.go,
# so that a change to that file builds it again (cksum: POSIX, on macOS too).
main_hash() { cksum <"$root/images/kind-node/$1/main.go" | cut -d' ' -f1; }
# Built on request only: golangci-lint is large and only `make lint` needs it,
# hugo and d2 only `make docs`;
# the others go into the offline kind node image (scripts/kind-node-image.sh).
optional=(
  "golangci-lint|$GOLANGCI_LINT_VERSION|github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION|"
  "hugo|$HUGO_VERSION|github.com/gohugoio/hugo@$HUGO_VERSION|"
  "d2|$D2_VERSION|oss.terrastruct.com/d2@$D2_VERSION|"
  "kubelet|$KUBERNETES_VERSION|k8s.io/kubernetes/cmd/kubelet|$kube_ldflags"
  "kubeadm|$KUBERNETES_VERSION|k8s.io/kubernetes/cmd/kubeadm|$kube_ldflags"
  "kube-proxy|$KUBERNETES_VERSION|k8s.io/kubernetes/cmd/kube-proxy|$kube_ldflags"
  "containerd|$CONTAINERD_VERSION|github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD_VERSION|"
  "containerd-shim-runc-v2|$CONTAINERD_VERSION|github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION|"
  "ctr|$CONTAINERD_VERSION|github.com/containerd/containerd/v2/cmd/ctr@$CONTAINERD_VERSION|"
  "crictl|$CRICTL_VERSION|wrap:sigs.k8s.io/cri-tools@$CRICTL_VERSION:sigs.k8s.io/cri-tools/cmd/crictl|"
  "coredns|$COREDNS_VERSION-$(main_hash coredns)|main:github.com/coredns/coredns@$COREDNS_VERSION:images/kind-node/coredns|"
  "registry|$DISTRIBUTION_VERSION-$(main_hash registry)|main:github.com/distribution/distribution/v3@$DISTRIBUTION_VERSION:images/kind-node/registry|"
  # Its NetworkPolicy enforcer; versions.env says why this one, and why only its firewall runs.
  "kube-router|$KUBE_ROUTER_VERSION|github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION|"
)

fmt_secs() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# out_name PACKAGE: the file `go build -o DIR/` writes for a main package (its
# last path element, or the one before a major-version suffix such as /v3).
out_name() {
  local base=${1##*/}
  if [[ $base =~ ^v[0-9]+$ ]]; then base=${1%/*}; base=${base##*/}; fi
  echo "$base"
}

# heartbeat LABEL: prints every 30s while a build runs; its pid is in $beat.
heartbeat() {
  local label=$1 start=$SECONDS
  # sleep's output goes nowhere, so that once the loop is killed no orphaned
  # sleep holds a pipe the caller reads open.
  ( while sleep 30 >/dev/null 2>&1; do printf '  %s: still building (%s)\n' "$label" "$(fmt_secs $((SECONDS - start)))"; done ) &
  beat=$!
}

# build_group LDFLAGS TOOL...: the tools of tools/go.mod that share these
# ldflags, in one `go build`: the packages they share compile once, and the
# links run side by side. -s -w: no symbol table or DWARF, so each link is
# quicker and each binary smaller (no one debugs these tools).
build_group() {
  local ldflags=$1 start=$SECONDS names=() pkgs=() t name version pkg rc=0 out
  shift
  for t in "$@"; do
    IFS='|' read -r name version pkg _ <<<"$t"
    names+=("$name"); pkgs+=("$pkg")
  done
  printf '  %s: building...\n' "${names[*]}"
  heartbeat "${names[*]}"
  out=$(mktemp -d)
  (cd "$root/tools" && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ldflags" -o "$out/" "${pkgs[@]}") || rc=$?
  kill "$beat" 2>/dev/null; wait "$beat" 2>/dev/null || true
  if [ $rc -ne 0 ]; then
    rm -rf "$out"
    echo "  ${names[*]}: build failed (exit $rc)" >&2
    return $rc
  fi
  for t in "$@"; do
    IFS='|' read -r name version pkg _ <<<"$t"
    mv "$out/$(out_name "$pkg")" "$bin/$name"
    echo "$version" >"$bin/.stamps/$name"
  done
  rm -rf "$out"
  printf '  %s: built in %s\n' "${names[*]}" "$(fmt_secs $((SECONDS - start)))"
}

# build_module NAME VERSION SPEC [LDFLAGS]: a tool outside tools/go.mod.
build_module() {
  local name=$1 version=$2 pkg=$3 ldflags=${4:-} start=$SECONDS rc=0
  printf '  %-24s %-9s building...\n' "$name" "$version"
  heartbeat "$name"
  if [[ $pkg == main:* || $pkg == wrap:* ]]; then
    # Built in a throwaway module that requires MODULE at VERSION, with the
    # dependency versions MODULE's go.mod gives:
    #   wrap:MODULE@VERSION:PACKAGE  PACKAGE itself, for a module whose
    #       `go install pkg@version` the proxy refuses (it will not list
    #       cri-tools' versions);
    #   main:MODULE@VERSION:DIR      DIR's main.go, a trimmed main of MODULE.
    local kind=${pkg%%:*} spec=${pkg#*:} mod target tmp
    mod=${spec%%:*} target=${spec#*:}
    tmp=$(mktemp -d)
    ( cd "$tmp" && printf 'module example.com/k8s-demo/%s\n\ngo %s\n\nrequire %s %s\n' "$name" "$GO_VERSION" "${mod%@*}" "${mod#*@}" >go.mod &&
      if [ "$kind" = main ]; then
        cp "$root/$target/main.go" . && target=.
      else
        printf '//go:build tools\n\npackage wrap\n\nimport _ "%s"\n' "$target" >tools.go
      fi &&
      GOWORK=off GOFLAGS=-mod=mod go mod tidy &&
      GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/$name" "$target" ) || rc=$?
    rm -rf "$tmp"
  else
    # A tool that is not in tools/go.mod (it would drag its own dependency
    # versions into the others): `go install pkg@version`, straight from the proxy.
    (cd "$root" && GOWORK=off GOBIN="$bin" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w $ldflags" "$pkg") || rc=$?
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
# Tools of tools/go.mod are grouped by their ldflags, one `go build` a group.
groups=() # distinct ldflags, in order
for t in "${todo[@]}"; do
  IFS='|' read -r name version pkg ldflags <<<"$t"
  [[ $pkg == *@* ]] && continue
  seen=""
  for g in ${groups[@]+"${groups[@]}"}; do [ "$g" = "$ldflags" ] && seen=1; done
  [ -n "$seen" ] || groups+=("$ldflags")
done
for g in ${groups[@]+"${groups[@]}"}; do
  members=()
  for t in "${todo[@]}"; do
    IFS='|' read -r name version pkg ldflags <<<"$t"
    [[ $pkg == *@* ]] && continue
    [ "$ldflags" = "$g" ] && members+=("$t")
  done
  build_group "$g" "${members[@]}"
done
for t in "${todo[@]}"; do
  IFS='|' read -r name version pkg ldflags <<<"$t"
  [[ $pkg == *@* ]] || continue
  build_module "$name" "$version" "$pkg" "$ldflags"
done
echo "tools: done in $(fmt_secs $((SECONDS - total_start)))"
