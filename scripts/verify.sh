#!/usr/bin/env bash
# `make verify`: fails when anything committed disagrees with what it should be.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
rc=0

"$ROOT/scripts/check-versions.sh" || rc=1

# go.work must use every module but tools/, and nothing else.
want=$(modules | sed 's#^#./#' | sort)
got=$(awk '/^use/ { if ($2 == "(") inuse = 1; else print $2; next } inuse && $1 == ")" { inuse = 0 } inuse { print $1 }' "$ROOT/go.work" | sort)
if [ "$want" != "$got" ]; then
  echo "go.work: uses [$(echo $got)], expected every module but tools/: [$(echo $want)]" >&2
  rc=1
fi

unformatted=$(cd "$ROOT" && gofmt -l $(modules) tools 2>&1)
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting (run gofmt -w):" >&2
  echo "$unformatted" >&2
  rc=1
fi

for m in $(modules); do
  if has_target "$ROOT/$m" verify; then
    echo ">> $m: make verify"
    make -s -C "$ROOT/$m" verify || rc=1
  fi
done

if [ $rc -ne 0 ]; then
  echo "verify: FAILED" >&2
  exit 1
fi
echo "verify: ok"
