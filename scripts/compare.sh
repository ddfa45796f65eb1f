#!/usr/bin/env bash
# Measures the three CustomPod implementations and writes the table of
# docs/comparison.md (between <!-- compare:begin --> and <!-- compare:end -->).
#   scripts/compare.sh            on the cluster in KUBECONFIG, or else on `make -s kubeconfig`'s
#   scripts/compare.sh -stdout    print the table only
# See e2e/cmd/compare for what is counted and how.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${KUBECONFIG:-}" ]; then
  KUBECONFIG=$(make -s -C "$ROOT" kubeconfig)
  export KUBECONFIG
fi
cd "$ROOT/e2e"
GOWORK=off exec go run ./cmd/compare -root "$ROOT" "$@"
