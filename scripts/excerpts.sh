#!/usr/bin/env bash
# Keeps the code excerpts in docs/*.md equal to the files they quote.
#   scripts/excerpts.sh -check            fails, with a diff, when an excerpt differs from its source
#   scripts/excerpts.sh -update           rewrites the excerpts from their sources
#   scripts/excerpts.sh -check FILE.md    only that file
# See doctools/cmd/excerpts and docs/README.md ("How these docs stay true").
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
args=()
for a in "$@"; do
  case $a in
    -*) args+=("$a") ;;
    *) args+=("$(realpath "$a")") ;;
  esac
done
cd "$ROOT/doctools"
GOWORK=off exec go run ./cmd/excerpts -root "$ROOT" "${args[@]}"
