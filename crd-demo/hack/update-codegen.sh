#!/usr/bin/env bash
# Regenerates the code that code-generator writes for pkg/apis:
#   pkg/apis/*/v1/zz_generated.deepcopy.go   DeepCopy, DeepCopyObject
#   pkg/apis/*/v1/zz_generated.model_name.go the types' OpenAPI names
#   pkg/client/openapi                       the types' OpenAPI schemas
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

# A scratch directory for this run, removed on exit: kube_codegen.sh makes
# temporary files in TMPDIR and leaves them there.
TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/crd-demo-codegen-tmp.XXXXXX")
export TMPDIR
trap 'rm -rf "${TMPDIR}"' EXIT

CODEGEN_PKG=${CODEGEN_PKG:-$(go list -m -f '{{.Dir}}' k8s.io/code-generator)}
# shellcheck source=/dev/null
source "${CODEGEN_PKG}/kube_codegen.sh"

# kube_codegen.sh greps these for files to replace; make sure they exist.
mkdir -p "${SCRIPT_ROOT}"/pkg/client/{applyconfiguration,clientset,informers,listers,openapi}

# DeepCopy for every package tagged +k8s:deepcopy-gen (see doc.go).
kube::codegen::gen_helpers \
    --boilerplate "${SCRIPT_ROOT}/hack/boilerplate.go.txt" \
    "${SCRIPT_ROOT}/pkg/apis"

# OpenAPI schemas for every package tagged +k8s:openapi-gen (see doc.go), as
# Go code, and the OpenAPIModelName methods that name them. openapi-gen also
# checks the types against the API conventions Kubernetes' own types follow;
# the violations known and accepted (most of them in apimachinery's types)
# are in hack/api-rule-violations.list, and a new one fails the generation.
# UPDATE_API_KNOWN_VIOLATIONS=true rewrites that list instead.
kube::codegen::gen_openapi \
    --output-dir "${SCRIPT_ROOT}/pkg/client/openapi" \
    --output-pkg "${THIS_PKG}/pkg/client/openapi" \
    --output-model-name-file zz_generated.model_name.go \
    --report-filename "${SCRIPT_ROOT}/hack/api-rule-violations.list" \
    ${UPDATE_API_KNOWN_VIOLATIONS:+--update-report} \
    --boilerplate "${SCRIPT_ROOT}/hack/boilerplate.go.txt" \
    "${SCRIPT_ROOT}/pkg/apis"

# The same schemas as one OpenAPI document, for applyconfiguration-gen. A file
# rather than <(...), so that errexit stops the script if models-schema fails.
SCHEMA=${TMPDIR}/models-schema.json
go run "${THIS_PKG}/pkg/client/openapi/cmd/models-schema" >"${SCHEMA}"

# Clientset, apply configurations, listers and informers for every type tagged
# +genclient, in the article's layout: pkg/client/{clientset,informers,listers}.
# With the schemas, applyconfiguration-gen embeds them, and the fake
# clientset's NewClientset tracks managed fields and merges an apply as the
# API server does: the list of conditions by type, not as a whole.
kube::codegen::gen_client \
    --with-watch \
    --with-applyconfig \
    --applyconfig-openapi-schema "${SCHEMA}" \
    --output-dir "${SCRIPT_ROOT}/pkg/client" \
    --output-pkg "${THIS_PKG}/pkg/client" \
    --boilerplate "${SCRIPT_ROOT}/hack/boilerplate.go.txt" \
    "${SCRIPT_ROOT}/pkg/apis"
