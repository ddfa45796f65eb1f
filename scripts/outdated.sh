#!/usr/bin/env bash
# `make outdated`: asks the Go module proxy (and the npm registry, for
# FlexSearch) for releases newer than each pin in versions.env, and prints
# them beside the pin. It changes nothing. Pre-releases are left out; a
# release whose go.mod needs a newer Go than the one here says so (the
# project builds every tool with the machine's Go).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../versions.env
source "$root/versions.env"
# go list -m runs outside every module of the repository.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
export GOWORK=off GOFLAGS=-mod=mod

# KEY | module whose releases the pin follows
pins=(
  "KUBERNETES_VERSION|k8s.io/kubernetes"
  "K8S_LIBS_VERSION|k8s.io/client-go"
  "CONTROLLER_RUNTIME_VERSION|sigs.k8s.io/controller-runtime"
  "CONTROLLER_TOOLS_VERSION|sigs.k8s.io/controller-tools"
  "KUBEBUILDER_VERSION|sigs.k8s.io/kubebuilder/v4"
  "HELM_VERSION|helm.sh/helm/v4"
  "KUSTOMIZE_VERSION|sigs.k8s.io/kustomize/kustomize/v5"
  "ETCD_VERSION|go.etcd.io/etcd/server/v3"
  "KWOK_VERSION|sigs.k8s.io/kwok"
  "KIND_VERSION|sigs.k8s.io/kind"
  "GOLANGCI_LINT_VERSION|github.com/golangci/golangci-lint/v2"
  "CONTAINERD_VERSION|github.com/containerd/containerd/v2"
  "CRICTL_VERSION|sigs.k8s.io/cri-tools"
  "COREDNS_VERSION|github.com/coredns/coredns"
  "DISTRIBUTION_VERSION|github.com/distribution/distribution/v3"
  "HUGO_VERSION|github.com/gohugoio/hugo"
  "D2_VERSION|oss.terrastruct.com/d2"
  "HEXTRA_VERSION|github.com/imfing/hextra"
  "KUBE_ROUTER_VERSION|github.com/cloudnativelabs/kube-router/v2"
)

# go_needed MODULE VERSION: the go directive of MODULE's go.mod at VERSION.
go_needed() {
  local gomod
  gomod=$(go mod download -json "$1@$2" 2>/dev/null | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [ -n "$gomod" ] && awk '$1 == "go" { print $2; exit }' "$gomod"
}

# older A B: true when go version A is older than B (major.minor.patch).
older() {
  local IFS=.
  # shellcheck disable=SC2206
  local a=($1) b=($2) i
  for i in 0 1 2; do
    [ "${a[i]:-0}" -lt "${b[i]:-0}" ] && return 0
    [ "${a[i]:-0}" -gt "${b[i]:-0}" ] && return 1
  done
  return 1
}

gover=$(go env GOVERSION | sed 's/^go//')
found=0
printf '%-28s %-10s %s\n' "versions.env" "pinned" "newer releases (the module proxy's list, oldest first)"
for p in "${pins[@]}"; do
  key=${p%%|*} mod=${p#*|}
  pin=$(eval "echo \${$key}")
  if ! list=$(go list -m -versions "$mod" 2>&1); then
    printf '%-28s %-10s could not ask the proxy for %s: %s\n' "$key" "$pin" "$mod" "$(echo "$list" | tail -1)"
    continue
  fi
  newer="" after=""
  # The list is in semver order; keep what follows the pin, releases only.
  for v in ${list#"$mod"}; do
    if [ "$v" = "$pin" ]; then after=1; continue; fi
    [ -n "$after" ] || continue
    case $v in *-*) continue ;; esac
    need=$(go_needed "$mod" "$v" || true)
    if [ -n "$need" ] && older "$gover" "$need"; then v="$v (needs go $need)"; fi
    newer="${newer:+$newer, }$v"
  done
  if [ -z "$after" ]; then
    printf '%-28s %-10s the proxy does not list the pin for %s; it lists: %s\n' "$key" "$pin" "$mod" "$(echo "${list#"$mod"}" | tr ' ' '\n' | grep -v -- - | tail -3 | tr '\n' ' ')"
    found=1
  elif [ -n "$newer" ]; then
    printf '%-28s %-10s %s\n' "$key" "$pin" "$newer"
    found=1
  else
    printf '%-28s %-10s up to date\n' "$key" "$pin"
  fi
done

# kind's node image: the default that the newest kind names.
kind_latest=$(go list -m -versions sigs.k8s.io/kind | tr ' ' '\n' | grep -v -- - | tail -1)
dir=$(go mod download -json "sigs.k8s.io/kind@$kind_latest" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
image=$(sed -n 's/^const Image = "\(.*\)"/\1/p' "$dir/pkg/apis/config/defaults/image.go")
if [ "$image" = "$KIND_NODE_IMAGE_DEFAULT" ]; then
  printf '%-28s %-10s up to date (kind %s'"'"'s default)\n' "KIND_NODE_IMAGE_DEFAULT" "${KIND_NODE_IMAGE_DEFAULT%%@*}" "$kind_latest"
else
  printf '%-28s %-10s kind %s defaults to %s\n' "KIND_NODE_IMAGE_DEFAULT" "${KIND_NODE_IMAGE_DEFAULT#kindest/node:}" "$kind_latest" "$image"
  found=1
fi

# FlexSearch comes from the npm registry.
if command -v npm >/dev/null 2>&1; then
  latest=$(npm view flexsearch version 2>/dev/null || true)
  if [ -z "$latest" ]; then
    printf '%-28s %-10s could not ask the npm registry\n' FLEXSEARCH_VERSION "$FLEXSEARCH_VERSION"
  elif [ "$latest" = "$FLEXSEARCH_VERSION" ]; then
    printf '%-28s %-10s up to date\n' FLEXSEARCH_VERSION "$FLEXSEARCH_VERSION"
  else
    # FLEXSEARCH_INTEGRITY moves with the version: say where to read it.
    printf '%-28s %-10s npm'"'"'s latest is %s (FLEXSEARCH_INTEGRITY: npm view flexsearch@%s dist.integrity)\n' \
      FLEXSEARCH_VERSION "$FLEXSEARCH_VERSION" "$latest" "$latest"
    found=1
  fi
fi

if [ $found -ne 0 ]; then
  echo
  echo "To move a pin: edit versions.env, run make sync-versions, then make test (CONTRIBUTING.md, \"Keeping up\")."
fi
