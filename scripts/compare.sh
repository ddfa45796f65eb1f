#!/usr/bin/env bash
# Counts the three CustomPod implementations (lines, files, dependencies,
# binary) and writes the table of docs/comparison.md (between
# <!-- compare:begin --> and <!-- compare:end -->). No cluster needed.
#   scripts/compare.sh            write the table
#   scripts/compare.sh -stdout    print the table only
# See bench/counts.go for what is counted and how; `make verify` runs
# `-counts -check`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT/bench"
GOWORK=off exec go run . -counts "$@"
