#!/usr/bin/env bash
# Fails when a go.mod disagrees with versions.env, the one file that pins
# every version. `make sync-versions` rewrites tools/go.mod; the demo modules
# are updated with `go get` (the message says which).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../versions.env
source "$root/versions.env"
bad=0

# check FILE MODULE WANT: the version of MODULE that FILE builds with (a
# replace directive wins over a require), if it has MODULE at all.
check() {
  local file=$1 mod=$2 want=$3 got
  got=$(awk -v m="$mod" '
    ($1 == m && $2 == "=>" && $4 ~ /^v/) { rep = $4 }
    ($1 == "replace" && $2 == m && $3 == "=>" && $5 ~ /^v/) { rep = $5 }
    ($1 == m && $2 ~ /^v/ && req == "") { req = $2 }
    ($1 == "require" && $2 == m && req == "") { req = $3 }
    END { print (rep != "" ? rep : req) }' "$file")
  [ -z "$got" ] && return 0
  if [ "$got" != "$want" ]; then
    echo "${file#"$root"/}: $mod is $got, versions.env pins $want (fix: cd $(dirname "${file#"$root"/}") && go get $mod@$want)" >&2
    bad=1
  fi
}

for gomod in "$root"/*/go.mod; do
  got=$(awk '$1 == "go" { print $2; exit }' "$gomod")
  if [ "$got" != "$GO_VERSION" ]; then
    echo "${gomod#"$root"/}: go $got, versions.env pins $GO_VERSION" >&2
    bad=1
  fi
  for m in api apimachinery client-go apiextensions-apiserver code-generator apiserver component-base; do
    check "$gomod" "k8s.io/$m" "$K8S_LIBS_VERSION"
  done
  check "$gomod" sigs.k8s.io/controller-runtime "$CONTROLLER_RUNTIME_VERSION"
  check "$gomod" sigs.k8s.io/controller-tools "$CONTROLLER_TOOLS_VERSION"
  check "$gomod" sigs.k8s.io/kind "$KIND_VERSION"
  check "$gomod" sigs.k8s.io/kwok "$KWOK_VERSION"
  check "$gomod" k8s.io/kubernetes "$KUBERNETES_VERSION"
  check "$gomod" go.etcd.io/etcd/server/v3 "$ETCD_VERSION"
  check "$gomod" sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION"
done

# The scaffolds' .custom-gcl.yml names the golangci-lint version that
# `golangci-lint custom` builds: the pinned one.
for gcl in "$root"/*/.custom-gcl.yml; do
  [ -f "$gcl" ] || continue
  got=$(awk '$1 == "version:" { print $2; exit }' "$gcl")
  if [ "$got" != "$GOLANGCI_LINT_VERSION" ]; then
    echo "${gcl#"$root"/}: version $got, versions.env pins GOLANGCI_LINT_VERSION=$GOLANGCI_LINT_VERSION" >&2
    bad=1
  fi
done

if [ $bad -ne 0 ]; then
  echo "versions: some files disagree with versions.env (tools/: run make sync-versions)" >&2
  exit 1
fi
echo "versions: every go.mod agrees with versions.env"
