#!/usr/bin/env bash
# `make verify`: fails when anything committed disagrees with what it should be.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
rc=0

"$ROOT/scripts/check-versions.sh" || rc=1
"$ROOT/scripts/check-tracked-files.sh" || rc=1
"$ROOT/scripts/check-loop-files.sh" || rc=1

# go.work must use every module but tools/, and nothing else.
want=$(modules | sed 's#^#./#' | sort)
got=$(awk '/^use/ { if ($2 == "(") inuse = 1; else print $2; next } inuse && $1 == ")" { inuse = 0 } inuse { print $1 }' "$ROOT/go.work" | sort)
if [ "$want" != "$got" ]; then
  echo "go.work: uses [$(echo $got)], expected every module but tools/: [$(echo $want)]" >&2
  rc=1
fi

# Every module's go.mod and go.sum as `go mod tidy` writes them (tools/'s
# too): an import added or dropped shows here, not in a later go.mod diff.
for m in $(modules) tools; do
  if ! out=$(cd "$ROOT/$m" && GOWORK=off go mod tidy -diff 2>&1); then
    echo "$m: go.mod or go.sum is not what go mod tidy writes (run: cd $m && GOWORK=off go mod tidy):" >&2
    echo "$out" >&2
    rc=1
  fi
done

unformatted=$(cd "$ROOT" && gofmt -l $(modules) tools scripts/scaffold 2>&1)
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting (run gofmt -w):" >&2
  echo "$unformatted" >&2
  rc=1
fi

# snapshot DIR: a hash of every file in DIR but its build output.
snapshot() {
  (cd "$1" && find . -type f -not -path './bin/*' -not -name '*.out' -print0 | sort -z | xargs -0 sha256sum)
}

for m in $(modules); do
  if has_target "$ROOT/$m" verify; then
    echo ">> $m: make verify"
    make -s -C "$ROOT/$m" verify || rc=1
  elif has_target "$ROOT/$m" manifests && has_target "$ROOT/$m" generate; then
    # The kubebuilder layout has no verify target: regenerating must change
    # nothing (operator-sdk's adds the OLM bundle to what is generated), and
    # neither may the installer, dist/install.yaml, with the default image.
    targets="manifests generate build-installer"
    has_target "$ROOT/$m" bundle && targets+=" bundle"
    # The Helm chart (dist/chart), from the installer: helm lint and helm template.
    has_target "$ROOT/$m" chart && targets+=" chart"
    echo ">> $m: make $targets changes nothing"
    # The scaffolds' boilerplate says YEAR, which `make generate` replaces
    # with the current year: give it the year the committed files carry, so
    # that a later year is no drift.
    year=$(grep -rho -m1 '^Copyright [0-9][0-9][0-9][0-9]' --include=zz_generated.deepcopy.go "$ROOT/$m" | head -1 | cut -d' ' -f2)
    before=$(snapshot "$ROOT/$m")
    make -s -C "$ROOT/$m" $targets ${year:+YEAR=$year} >/dev/null || rc=1
    after=$(snapshot "$ROOT/$m")
    if [ "$before" != "$after" ]; then
      echo "$m: make $targets changed these files; commit what they generate:" >&2
      diff <(echo "$before") <(echo "$after") | awk '/^[<>]/ { print "  " $3 }' | sort -u >&2
      rc=1
    fi
  fi
done

# The scripts make runs, and the shell blocks the docs ask a reader to type,
# must work on a Mac: bash 3.2, BSD tools, zsh (doctools/cmd/portable).
echo ">> scripts and typed shell blocks: bash 3.2, BSD tools, zsh"
(cd "$ROOT/doctools" && GOWORK=off go run ./cmd/portable -root "$ROOT") || rc=1

# comparison.md's counts (lines, files, dependencies) must be the code's.
echo ">> docs/comparison.md: its counts match the code"
(cd "$ROOT/bench" && GOWORK=off go run . -counts -check) || rc=1

# The bench's figures on every page (bench.md's table, comparison.md's
# summary) must be what its data file, docs/bench.json, gives.
echo ">> docs: the bench's figures are its data's"
(cd "$ROOT/bench" && GOWORK=off go run . -check) || rc=1

# Every code excerpt in docs/ must match the source it is pulled from.
echo ">> docs: excerpts match their sources"
"$ROOT/scripts/excerpts.sh" -check || rc=1

# Each diagram's SVG is what its D2 source renders to (make diagrams).
echo ">> docs: the diagrams are their sources' renderings"
"$ROOT/scripts/docs.sh" check-diagrams || rc=1

# Links and anchors resolve, on GitHub and on the site alike, and every
# Chinese page keeps its English twin's code blocks (doctools/cmd/doccheck).
echo ">> docs: links and anchors resolve; the Chinese pages keep their English pages' code blocks"
(cd "$ROOT/doctools" && GOWORK=off go run ./cmd/doccheck -root "$ROOT") || rc=1

# docs/README.md's times: each page's reading time from its words, and the
# reader runner's timings (docs/reader-times.tsv).
echo ">> docs: the reading order's times are the pages' and the reader's"
(cd "$ROOT/doctools" && GOWORK=off go run ./cmd/doctimes -check -root "$ROOT") || rc=1

# kubebuilder-demo and operator-demo hold the same CustomPod: only what
# operator-sdk adds may differ.
if [ -f "$ROOT/kubebuilder-demo/go.mod" ] && [ -f "$ROOT/operator-demo/go.mod" ]; then
  echo ">> CustomPod is the same in kubebuilder-demo and operator-demo"
  # make test runs this beside the e2e suites, whose `make install` has
  # controller-gen write the CRDs again in place: a file read while it is
  # being written differs. A real difference is there on a second look too.
  if ! "$ROOT/scripts/compare-scaffolds.sh" >/dev/null; then
    sleep 10
    if "$ROOT/scripts/compare-scaffolds.sh" >/dev/null; then
      echo "   (the same on a second look, 10 s later: a file was being rewritten)"
      retried "scripts/verify.sh: compare-scaffolds.sh found a difference that was gone 10 s later (a file being rewritten by a make install beside it)"
    else
      echo "scripts/compare-scaffolds.sh: the CustomPod API or controller differs (run it to see how)" >&2
      rc=1
    fi
  fi
fi

# Each scaffold is what the kubebuilder CLI writes for its README's commands,
# plus the changes scripts/scaffold/DEMO/files.txt lists (a replay, in a
# temporary directory).
echo ">> the scaffolds are the kubebuilder CLI's output plus their listed changes"
"$ROOT/scripts/scaffold-check.sh" || rc=1

if [ $rc -ne 0 ]; then
  echo "verify: FAILED" >&2
  exit 1
fi
echo "verify: ok"
