#!/usr/bin/env bash
# Rewrites tools/go.mod from versions.env, the one file that pins every version.
#
# tools/ is a Go module that holds the tools' requirements and the
# repository's own tool, localwebhook (whose test needs controller-runtime's
# envtest); `make tools` builds from it. k8s.io/kubernetes cannot be required
# like an ordinary module: its go.mod points the k8s.io/* staging modules at
# ./staging/..., which is not in the module zip, so each of them is replaced by
# its published v0.x release.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../versions.env
source "$root/versions.env"
cd "$root/tools"
export GOWORK=off GOFLAGS=-mod=mod

echo ">> tools/go.mod: requiring the pinned tools"
go mod edit -go="$GO_VERSION" \
  -require="k8s.io/kubernetes@$KUBERNETES_VERSION" \
  -require="k8s.io/code-generator@$K8S_LIBS_VERSION" \
  -require="sigs.k8s.io/controller-tools@$CONTROLLER_TOOLS_VERSION" \
  -require="sigs.k8s.io/controller-runtime@$CONTROLLER_RUNTIME_VERSION" \
  -require="sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" \
  -require="go.etcd.io/etcd/server/v3@$ETCD_VERSION" \
  -require="sigs.k8s.io/kwok@$KWOK_VERSION" \
  -require="sigs.k8s.io/kind@$KIND_VERSION"

echo ">> tools/go.mod: replacing k8s.io/kubernetes's staging modules with their $K8S_LIBS_VERSION releases"
kmod=$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#\1#p' "$kmod")
[ -n "$staging" ] || { echo "expected staging replaces in $kmod, found none" >&2; exit 1; }
args=()
for m in $staging; do args+=("-replace=$m=$m@$K8S_LIBS_VERSION"); done
go mod edit "${args[@]}"

echo ">> go mod tidy (tools)"
go mod tidy
echo "tools/go.mod is in step with versions.env"
