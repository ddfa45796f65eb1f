#!/usr/bin/env bash
# Fails if the committed generated code differs from what
# hack/update-codegen.sh writes today: it regenerates into a scratch copy of
# the module and diffs the two. Nothing in the working tree is touched.
#
# Like update-codegen.sh, it works with GOWORK=off and inside the
# repository's go.work: the scratch copy is always a module of its own.
set -o errexit -o nounset -o pipefail

SCRIPT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# The generators still go to the repository's bin/, not to the scratch copy's.
LOCALBIN=${LOCALBIN:-$(cd "${SCRIPT_ROOT}/.." && pwd -P)/bin}
export LOCALBIN

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/crd-demo-codegen.XXXXXX")
trap 'rm -rf "${SCRATCH}"' EXIT

# What generation reads and writes: the module files, hack/ and pkg/.
cp -a "${SCRIPT_ROOT}/go.mod" "${SCRIPT_ROOT}/go.sum" "${SCRIPT_ROOT}/hack" "${SCRIPT_ROOT}/pkg" "${SCRATCH}/"
"${SCRATCH}/hack/update-codegen.sh"

if ! diff -Naupr "${SCRIPT_ROOT}/pkg" "${SCRATCH}/pkg"; then
    echo >&2
    echo "Generated code is out of date (see the diff above, - committed, + generated)." >&2
    echo "Run hack/update-codegen.sh (or: make generate) and commit the result." >&2
    exit 1
fi
echo "Generated code is up to date."
