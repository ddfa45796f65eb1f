#!/usr/bin/env bash
# `make test`: everything, in the order a failure is cheapest to find.
#   1. the pinned tools (built once, then skipped in a fraction of a second)
#   2. side by side:
#      (1) make verify (versions, gofmt, generated code and manifests, the
#          diagrams, the docs' links and Chinese twins), then each demo
#          module's own `make test` (unit and envtest suites) and the tests
#          of tools/ (localwebhook), then the docs
#          site served by `make docs-serve` and read in headless Chromium;
#      (2) the e2e suites, on a kwok cluster of their own that is removed after,
#          then golangci-lint on every module (make lint);
#      (3) the tutorial followed as a reader types it (doctools/reader): every
#          chapter typed into tmux terminals, under bash and under zsh, from
#          fresh clones with clusters of their own; the workshop from its
#          pre-work, the README's `make demo`.
# It stops at the first failure, and always says where the time went and
# which tests needed a retry.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
# The tests that try something a second time say so in this list (package
# e2e/retries, lib.sh's retried); the summary names them. One given from
# outside (CI's, for its later steps too) is added to.
if [ -z "${RETRIES_LOG:-}" ]; then
  export RETRIES_LOG=$ROOT/.cache/retries.log
  mkdir -p "$ROOT/.cache" && : >"$RETRIES_LOG"
fi
trap summary EXIT

# prebuild: compiles, into the Go build cache, every package the later steps'
# tests and builds import, module by module. It runs beside make tools, at a
# lower priority: on a cold cache, compiling Kubernetes leaves a core idle for
# much of the time (the packages on its critical path compile one at a time),
# and this fills it. The later steps then find their dependencies compiled.
# A package with only test files is left out: `go build` refuses it ("no
# non-test Go files"), and what its tests import is listed on its own.
prebuild() {
  local m pkgs rc=0
  for m in $(modules); do
    pkgs=$(cd "$ROOT/$m" && GOWORK=off go list -e -deps -test \
      -f '{{if and (not .ForTest) (or .GoFiles .CgoFiles)}}{{.ImportPath}}{{end}}' ./... | grep -v '\.test$') &&
      (cd "$ROOT/$m" && GOWORK=off go build $pkgs) ||
      { echo "prebuild: $m: failed"; rc=1; }
  done
  return $rc
}
prebuild_logged() {
  prebuild && echo "prebuild: done"
}
# prebuild_wait PID: waits for it; what it could not compile is shown, not
# fatal: the later steps compile it themselves, and report what fails.
prebuild_wait() {
  wait "$1"
  if ! grep -q '^prebuild: done' "$ROOT/.cache/prebuild.log"; then
    echo "the dependencies' compile stopped short; the later steps compile the rest:"
    grep -v '^go: downloading' "$ROOT/.cache/prebuild.log"
  fi
  return 0
}

run_tests() {
  # Before anything long: the suites' programs need their fixed ports free.
  step "preflight: the ports the suites listen on are free" bash -c "cd '$ROOT/e2e' && GOWORK=off go run ./cmd/preflight" || return
  step "preflight: tmux and zsh, for the tutorial typed into terminals" need_reader_tools || return
  step "preflight: Chromium and npm, for the docs site in a browser" need_site_tools || return
  mkdir -p "$ROOT/.cache"
  nice -n 10 bash -c "$(declare -f modules prebuild prebuild_logged); ROOT='$ROOT'; prebuild_logged" >"$ROOT/.cache/prebuild.log" 2>&1 &
  local prebuild_pid=$!
  step "tools: make tools (and, beside it, the modules' dependencies compiled: .cache/prebuild.log)" "$ROOT/scripts/tools.sh" || { kill $prebuild_pid 2>/dev/null; return 1; }
  # What it did not finish, the later steps compile themselves; a package it
  # could not compile, they report.
  step "the modules' dependencies compiled (what is left of it)" prebuild_wait $prebuild_pid
  step "cluster command: build bin/e2e-cluster" bash -c "cd '$ROOT/e2e' && GOWORK=off go build -o '$LOCALBIN/e2e-cluster' ./cmd/cluster" || return
  # Two lines of work side by side, each in the order a failure is cheapest
  # to find: (1) the checks that need no cluster of their own, then the
  # README's demo (compiling and envtest: mostly CPU); (2) the e2e suites
  # (mostly waiting on their cluster). One after the other, a core sat idle
  # through the suites. Both may run `make install` or `make build` in the same
  # module: what controller-gen writes there is the same from either.
  # The reader's passes and the e2e suites' programs listen on the same fixed
  # ports (crd-demo's backend on 8090): side by side only where the passes
  # get networks of their own.
  if own_network; then
    side_by_side "verify, then the demos' own tests" checks \
      "the e2e suites on a kwok cluster, then make lint" e2e_then_lint \
      "the tutorial as a reader types it" reader
  else
    side_by_side "verify, then the demos' own tests" checks \
      "the e2e suites on a kwok cluster, make lint, then the tutorial as a reader types it" e2e_then_reader
  fi
}

# own_network: whether a program can get a network namespace of its own here
# (doctools/reader's OwnNetwork asks the same).
own_network() {
  [ "$(uname -s)" = Linux ] && command -v unshare >/dev/null 2>&1 || return 1
  command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || return 1
  if [ "$(id -u)" = 0 ]; then unshare --net true 2>/dev/null; else unshare --net --map-root-user true 2>/dev/null; fi
}

e2e_then_lint() {
  e2e_suites && lint
}

e2e_then_reader() {
  e2e_suites && lint && reader
}

need_reader_tools() {
  local t missing=""
  for t in tmux zsh; do
    command -v $t >/dev/null 2>&1 || missing="$missing $t"
  done
  [ -z "$missing" ] && return
  echo "make test types the tutorial into terminals, and needs:$missing."
  echo "Install it: Debian or Ubuntu: sudo apt-get install tmux zsh; macOS: brew install tmux (zsh is macOS's shell)."
  return 1
}

# The docs site's test builds the site (npm fetches its search library) and
# reads it in headless Chromium (CHROMIUM names one elsewhere than Debian's).
need_site_tools() {
  local missing=""
  command -v npm >/dev/null 2>&1 || missing="$missing npm"
  [ -x "${CHROMIUM:-/usr/bin/chromium}" ] || missing="$missing chromium"
  [ -z "$missing" ] && return
  echo "make test reads the docs site in a browser, and needs:$missing."
  echo "Install it: Debian or Ubuntu: sudo apt-get install chromium npm; macOS: brew install node, and CHROMIUM=\"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome\"."
  return 1
}

checks() {
  step "verify: versions, gofmt, generated files" "$ROOT/scripts/verify.sh" || return
  local m
  for m in $(modules); do
    [ "$m" = e2e ] && continue
    if has_target "$ROOT/$m" test; then
      step "$m: make test" make -C "$ROOT/$m" test || return
    else
      step "$m: go test ./..." bash -c "cd '$ROOT/$m' && GOWORK=off KUBEBUILDER_ASSETS='$LOCALBIN' go test -count=1 ./..." || return
    fi
  done
  # tools/ is not among modules(), but holds the repository's own tool,
  # localwebhook, whose test applies each scaffold's CRDs with the pinned
  # kubectl to an envtest API server (given 60 s to start, as in the
  # scaffolds' make test).
  step "tools: go test ./... (localwebhook)" bash -c "cd '$ROOT/tools' && GOWORK=off KUBEBUILDER_ASSETS='$LOCALBIN' KUBEBUILDER_CONTROLPLANE_START_TIMEOUT=60s go test -count=1 ./..." || return
  # The docs as a site: `make docs-serve`, read in headless Chromium.
  step "docs: make docs-serve, read in a real browser (doctools/site)" bash -c \
    "cd '$ROOT/doctools' && GOWORK=off go test -tags site -count=1 -timeout 30m ./site" || return
  # The README's first command, `make demo`, is typed into a terminal from a
  # fresh clone by the reader lane (the workshop's pre-work).
}

e2e_suites() {
  # A cluster of its own, so that a cluster the user has up is left alone.
  # One package at a time (-p 1): the suites run `make install` and `make run`
  # in the same modules, and e2e/custompod/walkthrough's tests, one after
  # another, have the CustomPod CRD's conversion webhook and :8081 to
  # themselves; inside a package, the tests that call t.Parallel run side by
  # side (-parallel).
  step "e2e: the suites on a kwok cluster (CLUSTER_NAME=k8s-demo-test)" bash -c \
    "cd '$ROOT/e2e' && CLUSTER=kwok CLUSTER_NAME=k8s-demo-test '$LOCALBIN/e2e-cluster' run -- go test -count=1 -p 1 -parallel 4 -timeout 30m ./..."
}

# lint: `make lint`, after the e2e suites, in the lane that ends first (the
# reader's is the longest). About 5 minutes in a fresh clone, as CI's (it
# builds golangci-lint into the clone's bin/, and its analysis cache is keyed
# by the clone's paths); about 10 seconds when run again in the same clone.
lint() {
  step "lint: golangci-lint on every module (make lint)" make -s -C "$ROOT" lint
}

reader() {
  # Its passes run at once, each in a network namespace of its own (Linux),
  # so their fixed ports do not meet the e2e suites'. Each typed block has a
  # time limit of its own (10 minutes unless its check says otherwise), which
  # finds a hang; the whole is given 2 hours: cold, on 2 cores, the workshop
  # pass alone was still typing after 45 minutes (CONTRIBUTING.md).
  step "reader: every chapter typed into tmux terminals, bash and zsh (doctools/reader)" bash -c \
    "cd '$ROOT/doctools' && GOWORK=off go test -tags reader -count=1 -timeout 120m ./reader"
}

run_tests
