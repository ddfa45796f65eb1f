#!/usr/bin/env bash
# The test tiers, each a make target (README.md says what each needs):
#   make test           (scripts/test.sh): what proves the code: make verify,
#                       every module's unit and envtest tests, the e2e suites
#                       on a kwok cluster with go test -short (each
#                       walkthrough's behaviour, every admission, RBAC and
#                       security check), and golangci-lint. Go alone.
#   make test-extended  (scripts/test.sh extended): the robustness drills
#                       that -short leaves out (kills, the API server outage,
#                       concurrent edits, leader election, a verb removed),
#                       the kwok provider's own tests and the bench's, on
#                       CLUSTER (kwok unless given; CI: an existing one).
#   make test-docs      (scripts/test.sh docs): the docs as people meet them:
#                       the site in headless Chromium, and every chapter
#                       typed into terminals (doctools/reader) under bash in
#                       order, under zsh each alone, and the workshop. Needs
#                       tmux, zsh, Chromium and npm too.
# Each stops at its first failure, and says where the time went (each step's
# wall time and CPU-seconds, children included) and which tests needed a
# retry. CI (.ci/run) runs all three, and the kind part.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
tier=${1:-test}
# The tests that try something a second time say so in this list (package
# e2e/retries, lib.sh's retried); the summary names them. One given from
# outside (CI's, for its later steps too) is added to.
if [ -z "${RETRIES_LOG:-}" ]; then
  export RETRIES_LOG=$ROOT/.cache/retries.log
  mkdir -p "$ROOT/.cache" && : >"$RETRIES_LOG"
fi
LANES_DIR=$ROOT/.cache/side-by-side/$tier
trap summary EXIT
# prebuild: compiles, into the Go build cache, every package the later steps'
# tests and builds import, module by module. It runs beside make tools, at a
# lower priority: on a cold cache, compiling Kubernetes leaves a core idle for
# much of the time (the packages on its critical path compile one at a time),
# and this fills it. The later steps then find their dependencies compiled;
# what it could not compile, they compile themselves, and report.
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
  [ $rc -eq 0 ] && echo "prebuild: done"
  return 0
}

# tools: make tools, and beside it (niced) the modules' dependencies compiled.
tools() {
  step "make tools: every pinned tool, built into bin/ (up to date: a few seconds)" "$ROOT/scripts/tools.sh"
}
prebuild_niced() {
  step "the modules' dependencies compiled into Go's build cache, beside make tools" nice -n 10 bash -c \
    "$(declare -f modules prebuild); ROOT='$ROOT'; prebuild"
}
tools_and_prebuild() {
  side_by_side "make tools" tools "the modules' dependencies compiled" prebuild_niced
}

ports_free() {
  step "preflight: the ports the suites listen on are free" in_module e2e go run ./cmd/preflight
}

cluster_cli() {
  step "cluster command: build bin/e2e-cluster" in_module e2e go build -o "$LOCALBIN/e2e-cluster" ./cmd/cluster
}

# make test: two lanes side by side, each in the order a failure is cheapest
# to find: (1) verify, then the modules' own tests (compiling and envtest:
# CPU); (2) the e2e suites (mostly waiting on their cluster), then lint.
tier_test() {
  ports_free || return
  tools_and_prebuild || return
  cluster_cli || return
  side_by_side "verify, then every module's own tests" checks \
    "the e2e suites on a kwok cluster (go test -short), then make lint" e2e_then_lint
}

# make test-extended: what go test -short left out of make test.
tier_extended() {
  ports_free || return
  tools || return
  cluster_cli || return
  extended_suites
}

# make test-docs: the site read in a browser beside the chapters typed into
# terminals. The reader's passes have networks of their own (Linux); the site
# serves on 127.0.0.1:1313, which nothing else takes.
tier_docs() {
  step "preflight: tmux and zsh, for the tutorial typed into terminals" need_reader_tools || return
  step "preflight: Chromium and npm, for the docs site in a browser" need_site_tools || return
  if ! own_network; then ports_free || return; fi
  tools || return
  cluster_cli || return
  side_by_side "the docs site in headless Chromium" site \
    "the tutorial as a reader types it" reader
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

need_reader_tools() {
  local t missing=""
  for t in tmux zsh; do
    command -v $t >/dev/null 2>&1 || missing="$missing $t"
  done
  [ -z "$missing" ] && return
  echo "make test-docs types the tutorial into terminals, and needs:$missing."
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
  echo "make test-docs reads the docs site in a browser, and needs:$missing."
  echo "Install it: Debian or Ubuntu: sudo apt-get install chromium npm; macOS: brew install node, and CHROMIUM=\"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome\"."
  return 1
}

checks() {
  step "verify: versions, gofmt, generated files" "$ROOT/scripts/verify.sh" || return
  # Verify has just proved every generated file current: the scaffolds' make
  # test runs without its manifests and generate prerequisites (controller-gen
  # on the same inputs again), and the e2e suites are told so too.
  local m
  for m in $(modules); do
    [ "$m" = e2e ] && continue
    if has_target "$ROOT/$m" test; then
      step "$m: make test -o manifests -o generate" make -C "$ROOT/$m" -o manifests -o generate test || return
    else
      step "$m: go test -short ./..." in_module "$m" env KUBEBUILDER_ASSETS="$LOCALBIN" go test -short -count=1 ./... || return
    fi
  done
  # tools/ is not among modules(), but holds the repository's own tool,
  # localwebhook, whose test applies each scaffold's CRDs with the pinned
  # kubectl to an envtest API server (given 60 s to start, as in the
  # scaffolds' make test).
  step "tools: go test ./... (localwebhook)" in_module tools env KUBEBUILDER_ASSETS="$LOCALBIN" KUBEBUILDER_CONTROLPLANE_START_TIMEOUT=60s go test -count=1 ./...
}

# site: `make docs-serve`, read in headless Chromium.
site() {
  step "docs: make docs-serve, read in a real browser (doctools/site)" in_module doctools go test -tags site -count=1 -timeout 30m ./site
}

e2e_suites() {
  # A cluster of its own, so that a cluster the user has up is left alone.
  # One package at a time (-p 1): the suites run `make install` and `make run`
  # in the same modules, and e2e/custompod/walkthrough's tests, one after
  # another, have the CustomPod CRD's conversion webhook and :8081 to
  # themselves; inside a package, the tests that call t.Parallel run side by
  # side (-parallel). -short leaves out the extended tier's drills.
  step "e2e: the suites on a kwok cluster, -short (CLUSTER_NAME=k8s-demo-test)" in_module e2e env E2E_GENERATED_CHECKED=1 CLUSTER=kwok CLUSTER_NAME=k8s-demo-test \
    "$LOCALBIN/e2e-cluster" run -- go test -short -count=1 -p 1 -parallel 4 -timeout 30m ./...
}

# extended MODULE: the tests of MODULE that mark themselves extended (they
# call tier.Extended, package e2e/tier), as a line "REGEXP PACKAGE...", for
# go test -run.
extended() {
  (cd "$ROOT/$1" && grep -rl --include='*_test.go' 'tier\.Extended(t)' . | sort |
    while read -r f; do
      awk -v d="$(dirname "$f")/" '/^func Test/ { name = $2; sub(/\(.*/, "", name) }
        /tier\.Extended\(t\)/ && name != "" { print d, name }' "$f"
    done | awk '{ tests = tests sep $2; sep = "|"; if (!($1 in seen)) { seen[$1]; pkgs = pkgs " " $1 } }
      END { if (tests == "") exit 1; printf "^(%s)$%s\n", tests, pkgs }') ||
    { echo "no test of $1 marks itself extended: the extended tier would run nothing" >&2; return 1; }
}

# in_module DIR command args...: runs the command in the module DIR.
in_module() {
  local dir=$1
  shift
  (cd "$ROOT/$dir" && GOWORK=off "$@")
}

extended_suites() {
  local cluster=${CLUSTER:-kwok} e2e bench
  e2e=$(extended e2e) && bench=$(extended bench) || return
  # shellcheck disable=SC2086 # the packages are words
  # A cluster of its own, as make test's, so that one the user has up (the
  # Makefile's CLUSTER_NAME, k8s-demo) is left alone.
  step "e2e: the extended tier's drills on CLUSTER=$cluster" in_module e2e env CLUSTER="$cluster" CLUSTER_NAME=k8s-demo-extended \
    "$LOCALBIN/e2e-cluster" run -- go test -count=1 -p 1 -parallel 4 -timeout 30m -run "${e2e%% *}" ${e2e#* } || return
  # shellcheck disable=SC2086
  step "bench: its extended tests" in_module bench go test -count=1 -run "${bench%% *}" ${bench#* }
}

# lint: `make lint`, after the e2e suites.
lint() {
  step "lint: golangci-lint on every module (make lint)" make -s -C "$ROOT" lint
}

reader() {
  # Its passes run at once, each in a network namespace of its own (Linux),
  # so their fixed ports do not meet those of a test beside it. Each typed block has a
  # time limit of its own (10 minutes unless its check says otherwise), which
  # finds a hang; the whole is given 2 hours: cold, on 2 cores, the workshop
  # pass alone was still typing after 45 minutes (CONTRIBUTING.md).
  step "reader: every chapter typed into tmux terminals, bash and zsh (doctools/reader)" in_module doctools go test -tags reader -count=1 -timeout 120m ./reader
}

build_steptime || exit
case $tier in
  test) tier_test ;;
  extended) tier_extended ;;
  docs) tier_docs ;;
  *) echo "scripts/test.sh: no tier \"$tier\": test, extended or docs" >&2; exit 2 ;;
esac
