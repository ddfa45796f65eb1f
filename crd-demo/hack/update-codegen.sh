#!/usr/bin/env bash
# Regenerates the code that code-generator writes for pkg/apis:
#   pkg/apis/*/v1/zz_generated.deepcopy.go   DeepCopy, DeepCopyObject
#   pkg/client/clientset/versioned           typed clients (and fakes for tests)
#   pkg/client/applyconfiguration            server-side apply configurations
#   pkg/client/listers, pkg/client/informers the cache side of the informer pipeline
#
# The article ran generate-groups.sh from a vendor/ directory in GOPATH; that
# script is gone. Today code-generator ships kube_codegen.sh, a library of
# shell functions, and a Go module finds it in the module cache. Its version
# is the one go.mod pins (see its `tool` lines).
#
# Generation depends on this module's go.mod alone, so it runs with
# GOWORK=off: the result is the same inside the repository's go.work or
# outside it, and the code-generator version is the one go.mod pins, not one
# another module of the workspace might select.
set -o errexit -o nounset -o pipefail
export GOWORK=off

SCRIPT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# The generators resolve packages with `go list` from the current directory.
cd "${SCRIPT_ROOT}"
THIS_PKG=example.com/k8s-demo/crd-demo

# kube_codegen.sh `go install`s the generators into GOBIN, then runs them from
# there. Put them with the project's other tools, in the repository's bin/,
# unless LOCALBIN says otherwise.
GOBIN=${LOCALBIN:-$(cd "${SCRIPT_ROOT}/.." && pwd -P)/bin}
export GOBIN
mkdir -p "${GOBIN}"

CODEGEN_PKG=${CODEGEN_PKG:-$(go list -m -f '{{.Dir}}' k8s.io/code-generator)}
# shellcheck source=/dev/null
source "${CODEGEN_PKG}/kube_codegen.sh"

# kube_codegen.sh greps these for files to replace; make sure they exist.
mkdir -p "${SCRIPT_ROOT}"/pkg/client/{applyconfiguration,clientset,informers,listers}

# DeepCopy for every package tagged +k8s:deepcopy-gen (see doc.go).
kube::codegen::gen_helpers \
    --boilerplate "${SCRIPT_ROOT}/hack/boilerplate.go.txt" \
    "${SCRIPT_ROOT}/pkg/apis"

# Clientset, apply configurations, listers and informers for every type tagged
# +genclient, in the article's layout: pkg/client/{clientset,informers,listers}.
kube::codegen::gen_client \
    --with-watch \
    --with-applyconfig \
    --output-dir "${SCRIPT_ROOT}/pkg/client" \
    --output-pkg "${THIS_PKG}/pkg/client" \
    --boilerplate "${SCRIPT_ROOT}/hack/boilerplate.go.txt" \
    "${SCRIPT_ROOT}/pkg/apis"
