#!/usr/bin/env bash
# The scaffolds are the kubebuilder CLI's output. For each demo, replays the
# commands its README gives (every line that starts "kubebuilder init|edit|
# create" or "operator-sdk init|edit|create") with the pinned CLI
# (bin/kubebuilder, KUBEBUILDER_VERSION) in a temporary directory named as the
# demo, and compares what the CLI wrote with the module's git-tracked files.
# Each `create api` and `create webhook` gets --make=false: the `make
# generate` the CLI runs after it writes only files of the class generated
# below, which are not compared here (verify.sh has make write them again in
# the module). With those runs, on a busy 2-core machine, the check took 222
# CPU-seconds (controller-gen's runs, and the build of the replay's own),
# without them 22 (CONTRIBUTING.md).
#
# scripts/scaffold/<demo>/files.txt puts every file of the two in one class:
#   cli           the CLI's, byte for byte
#   patched       the CLI's plus patches/<file>.patch (the line gives the reason)
#   own           the tutorial's: only its presence is checked
#   generated     written by make (manifests, generate, build-installer,
#                 bundle): verify.sh checks that make writes it again unchanged
#   removed       the CLI writes it; the module does without (the line says why)
#   operator-sdk  operator-sdk's, which cannot be had here: a file the go/v4
#                 CLI does not write (presence only), or its additions to one
#                 it does (a patch)
# A path ending in / stands for every file under it (not for cli or patched,
# which name their files). The "Copyright <year>." line, where the CLI writes
# the current year, is the only thing normalised.
#
# A file the list names counts while it is untracked too (so a new file can
# be checked before it is committed); any other untracked file does not.
#
# operator-demo's README names operator-sdk: scripts/scaffold/operator-sdk is
# kubebuilder's go/v4 CLI under that name (it writes the name into AGENTS.md).
#
# The Go modules come from the module cache (GOPROXY=file://...), and from
# `go env GOPROXY` only for what the cache lacks: warm, nothing is fetched.
#
# Usage: scripts/scaffold-check.sh [-update] [DEMO...]
#   -update  rewrite the patches from the modules' files after an intended
#            change (and the reason line at the top of each), then check.
#   SCAFFOLD_KEEP=1 keeps the temporary directory and prints where it is.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../versions.env
source "$ROOT/versions.env"
SCAFFOLD=$ROOT/scripts/scaffold

update=false
demos=()
for a in "$@"; do
  case $a in
    -update) update=true ;;
    -*) echo "usage: $0 [-update] [DEMO...]" >&2; exit 2 ;;
    *) demos+=("${a%/}") ;;
  esac
done
if [ ${#demos[@]} -eq 0 ]; then
  for d in "$SCAFFOLD"/*/files.txt; do
    d=$(dirname "$d")
    demos+=("$(basename "$d")")
  done
fi

say() { echo "scaffold-check: $*" >&2; }
if ! git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  say "needs a git checkout: the module's side is its tracked files (git ls-files)"
  exit 1
fi
start=$SECONDS
work=$(mktemp -d "${TMPDIR:-/tmp}/scaffold-check.XXXXXX")
if [ "${SCAFFOLD_KEEP:-}" = 1 ]; then
  trap 'say "kept $work"' EXIT
else
  trap 'rm -rf "$work"' EXIT
fi

# The CLIs, first on the replays' PATH under the names the READMEs use.
kb=$ROOT/bin/kubebuilder
got=$("$kb" version 2>/dev/null | awk '$1 == "KubeBuilder:" { print $2 }')
if [ "$got" != "$KUBEBUILDER_VERSION" ]; then
  say "bin/kubebuilder is ${got:-missing}, versions.env pins KUBEBUILDER_VERSION=$KUBEBUILDER_VERSION: run make tools"
  exit 1
fi
mkdir -p "$work/cli-bin"
ln -s "$kb" "$work/cli-bin/kubebuilder"
modcache=$(go env GOMODCACHE)
goproxy="file://$modcache/cache/download"
[ "$(go env GOPROXY)" = off ] || goproxy="$goproxy,$(go env GOPROXY)"

if grep -qE '^operator-sdk (init|edit|create) ' $(for d in "${demos[@]}"; do echo "$ROOT/$d/README.md"; done) 2>/dev/null; then
  src=$SCAFFOLD/operator-sdk
  got=$(awk '$1 == "sigs.k8s.io/kubebuilder/v4" { print $2 } $1 == "require" && $2 == "sigs.k8s.io/kubebuilder/v4" { print $3 }' "$src/go.mod")
  if [ "$got" != "$KUBEBUILDER_VERSION" ]; then
    say "scripts/scaffold/operator-sdk/go.mod requires kubebuilder $got, versions.env pins $KUBEBUILDER_VERSION" \
      "(fix: cd scripts/scaffold/operator-sdk && go get sigs.k8s.io/kubebuilder/v4@$KUBEBUILDER_VERSION && go mod tidy)"
    exit 1
  fi
  if ! (cd "$src" && GOWORK=off GOPROXY=$goproxy GOFLAGS=-mod=readonly go build -o "$work/cli-bin/operator-sdk" .) >"$work/operator-sdk.log" 2>&1; then
    say "building scripts/scaffold/operator-sdk failed:"
    cat "$work/operator-sdk.log" >&2
    exit 1
  fi
fi

# replay DEMO: the README's CLI commands, in $work/DEMO/cli/DEMO (the
# directory name is the project's name).
replay() {
  local demo=$1 dir=$work/$1/cli/$1 log=$work/$1/replay.log n=0 total line
  mkdir -p "$dir"
  grep -E '^(kubebuilder|operator-sdk) (init|edit|create) ' "$ROOT/$demo/README.md" >"$work/$demo/commands"
  total=$(($(wc -l <"$work/$demo/commands")))
  if [ "$total" -lt 1 ]; then
    say "$demo: its README.md gives no kubebuilder or operator-sdk command"
    return 1
  fi
  (
    cd "$dir" || exit 1
    # What make and the repository export would reach the scaffold's own
    # Makefile: LOCALBIN would put its controller-gen into the repository's bin/.
    unset LOCALBIN MAKEFLAGS MAKELEVEL MFLAGS MAKEOVERRIDES GNUMAKEFLAGS
    export GOWORK=off GOPROXY=$goproxy PATH="$work/cli-bin:$PATH"
    set -f
    while read -r line; do
      n=$((n + 1))
      printf 'scaffold-check: %s %3ds [%d/%d] %s\n' "$demo" $((SECONDS - start)) "$n" "$total" "$line" >&2
      # shellcheck disable=SC2086 # the command's words, as the README has them
      set -- $line
      case $2 in create) set -- "$@" --make=false ;; esac
      echo "\$ $*" >>"$log"
      "$@" </dev/null >>"$log" 2>&1 || exit 1
    done <"$work/$demo/commands"
  ) || {
    say "$demo: replaying its README's commands failed; the last lines of the log:"
    tail -25 "$log" | sed 's/^/    /' >&2
    return 1
  }
}

# norm SRC DST: SRC with the year of its "Copyright <year>." line normalised.
norm() {
  mkdir -p "$(dirname "$2")"
  if grep -q '^Copyright [0-9][0-9][0-9][0-9]\.' "$1"; then
    sed 's/^Copyright [0-9][0-9][0-9][0-9]\./Copyright YEAR./' "$1" >"$2"
  else
    cat "$1" >"$2"
  fi
}

# show EXPECTED SEEN WHAT-EXPECTED WHAT-SEEN: a unified diff, at most 60 lines.
show() {
  local d n
  d=$(diff -u "$1" "$2" | tail -n +3)
  n=$(printf '%s\n' "$d" | wc -l)
  {
    echo "    --- expected: $3"
    echo "    +++ seen: $4"
    printf '%s\n' "$d" | head -60 | sed 's/^/    /'
    [ "$n" -le 60 ] || echo "    ... ($((n - 60)) more lines)"
  } >&2
}

# check DEMO: compares the replay with the module; with -update, first
# rewrites the patches.
check() {
  local demo=$1 t=$work/$1 list=$SCAFFOLD/$1/files.txt
  local rel_list=scripts/scaffold/$1/files.txt bad=0
  local path class in_cli in_mod reason p
  err() { say "$demo/$*"; bad=1; }

  # The list: CLASS PATH [REASON]; "#" starts a comment.
  if ! awk -v f="$rel_list" '
    /^[ \t]*(#|$)/ { next }
    {
      c = $1; p = $2; r = $0
      sub(/^[ \t]*[^ \t]+[ \t]+[^ \t]+[ \t]*/, "", r)
      if (c !~ /^(cli|patched|own|generated|removed|operator-sdk)$/) { printf "%s:%d: unknown class %s\n", f, NR, c > "/dev/stderr"; bad = 1 }
      if (p == "") { printf "%s:%d: no path\n", f, NR > "/dev/stderr"; bad = 1 }
      if (c ~ /^(patched|removed|operator-sdk)$/ && r == "") { printf "%s:%d: %s %s needs a reason\n", f, NR, c, p > "/dev/stderr"; bad = 1 }
      if (p ~ /\/$/ && c ~ /^(cli|patched)$/) { printf "%s:%d: a directory (%s) may not be %s: list its files\n", f, NR, p, c > "/dev/stderr"; bad = 1 }
      if (p in seen) { printf "%s:%d: %s is listed twice (line %d too)\n", f, NR, p, seen[p] > "/dev/stderr"; bad = 1 }
      seen[p] = NR
      printf "%s\t%s\t%s\n", c, p, r
    }
    END { exit bad }' "$list" >"$t/entries"; then
    say "$rel_list is malformed"
    return 1
  fi

  # The CLI's files, and the module's: tracked, plus what the list names.
  (cd "$t/cli/$demo" && find . -type f -not -path './bin/*' | sed 's#^\./##' | LC_ALL=C sort) >"$t/cli.files"
  {
    git -C "$ROOT" -c core.quotepath=off ls-files -- "$demo" | sed "s#^$demo/##" | while read -r p; do
      [ -f "$ROOT/$demo/$p" ] && echo "$p"
    done
    awk -F'\t' '$1 != "removed" && $2 !~ /\/$/ { print $2 }' "$t/entries" | while read -r p; do
      [ -f "$ROOT/$demo/$p" ] && echo "$p"
    done
  } | LC_ALL=C sort -u >"$t/mod.files"

  # PATH, CLASS ("none" if unlisted), IN-CLI, IN-MODULE, REASON for every
  # path of the union and every exact path of the list; a directory entry
  # that matches nothing, as "unmatched". (No empty field: read would merge
  # two tabs.)
  awk -F'\t' -v OFS='\t' '
    FILENAME == ARGV[1] { if ($2 ~ /\/$/) { dirs[++nd] = $2; dclass[nd] = $1; dreason[nd] = $3 } else { cls[$2] = $1; why[$2] = $3; all[$2] = 1 }; next }
    FILENAME == ARGV[2] { incli[$0] = 1; all[$0] = 1; next }
    { inmod[$0] = 1; all[$0] = 1 }
    END {
      for (p in all) {
        c = "none"; r = ""
        if (p in cls) { c = cls[p]; r = why[p] }
        else for (i = 1; i <= nd; i++) if (index(p, dirs[i]) == 1) { c = dclass[i]; r = dreason[i]; used[i] = 1 }
        print p, c, (p in incli) ? 1 : 0, (p in inmod) ? 1 : 0, r
      }
      for (i = 1; i <= nd; i++) if (!(i in used)) print dirs[i], "unmatched", 0, 0, dreason[i]
    }' "$t/entries" "$t/cli.files" "$t/mod.files" | LC_ALL=C sort >"$t/union"

  if $update; then
    update_patches "$demo" || bad=1
  fi

  # A patch with no entry that uses it is stale.
  if [ -d "$SCAFFOLD/$demo/patches" ]; then
    (cd "$SCAFFOLD/$demo/patches" && find . -type f -name '*.patch' | sed 's#^\./##; s#\.patch$##') | while read -r p; do
      if ! awk -F'\t' -v p="$p" '$1 == p && $3 == 1 && $4 == 1 && ($2 == "patched" || $2 == "operator-sdk") { found = 1 } END { exit !found }' "$t/union"; then
        say "$demo/$p: scripts/scaffold/$demo/patches/$p.patch is stale: expected no patch, as $p is not a patched file of both the CLI and the module (scripts/scaffold-check.sh -update removes it)"
        echo bad
      fi
    done | grep -q bad && bad=1
  fi

  local n_cli=0 n_patched=0 n_own=0 n_generated=0 n_removed=0 n_sdk=0
  while IFS="$(printf '\t')" read -r path class in_cli in_mod reason; do
    case $class in
      none)
        if [ "$in_cli" = 1 ]; then
          err "$path: the CLI writes it and $rel_list does not list it: expected a line for it (cli, patched, generated, own or removed), seen none (the CLI's file set changed?)"
        else
          err "$path: in the module, not written by the CLI and not in $rel_list: expected no such file, or a line \"own $path\" (a stray file?)"
        fi
        continue ;;
      unmatched)
        err "$path: listed in $rel_list, but no file of the CLI or the module is under it"
        continue ;;
    esac
    case $class in
      removed)
        n_removed=$((n_removed + 1))
        if [ "$in_mod" = 1 ]; then
          err "$path: listed as removed ($reason), but the module has it: expected no such file"
        elif [ "$in_cli" = 0 ]; then
          err "$path: listed as removed, but the CLI no longer writes it: expected the CLI to write it, seen no such file (the CLI's file set changed: update $rel_list)"
        fi
        continue ;;
      cli | patched)
        if [ "$in_cli" = 0 ]; then
          err "$path: listed as $class, but the CLI no longer writes it: expected the CLI to write it, seen no such file (the CLI's file set changed: update $rel_list)"
          continue
        fi ;;
    esac
    if [ "$in_mod" = 0 ]; then
      err "$path: listed as $class, but the module has no such file (not tracked by git, or missing)"
      continue
    fi
    case $class in
      own) n_own=$((n_own + 1)); continue ;;
      generated) n_generated=$((n_generated + 1)); continue ;;
      operator-sdk)
        n_sdk=$((n_sdk + 1))
        [ "$in_cli" = 1 ] || continue ;;
      cli) n_cli=$((n_cli + 1)) ;;
      patched) n_patched=$((n_patched + 1)) ;;
    esac
    norm "$t/cli/$demo/$path" "$t/a/$path"
    norm "$ROOT/$demo/$path" "$t/b/$path"
    if [ "$class" = cli ]; then
      if ! cmp -s "$t/a/$path" "$t/b/$path"; then
        err "$path: differs from the CLI's (listed as cli: byte for byte, the Copyright year aside):"
        show "$t/a/$path" "$t/b/$path" "the CLI's" "the module's $demo/$path"
      fi
      continue
    fi
    # patched, or operator-sdk's additions to a file the CLI writes.
    p=$SCAFFOLD/$demo/patches/$path.patch
    if [ ! -f "$p" ]; then
      err "$path: listed as $class, but there is no patch: expected scripts/scaffold/$demo/patches/$path.patch (scripts/scaffold-check.sh -update writes it); the module's file differs from the CLI's:"
      show "$t/a/$path" "$t/b/$path" "the CLI's" "the module's $demo/$path"
      continue
    fi
    if [ "$(head -1 "$p")" != "$demo/$path: $reason" ]; then
      err "$path: the first line of scripts/scaffold/$demo/patches/$path.patch is not the reason $rel_list gives: expected \"$demo/$path: $reason\", seen \"$(head -1 "$p")\" (scripts/scaffold-check.sh -update rewrites it)"
    fi
    mkdir -p "$t/apply/$(dirname "$path")"
    cat "$t/a/$path" >"$t/apply/$path"
    if ! (cd "$t/apply" && GIT_CEILING_DIRECTORIES=$work git apply --whitespace=nowarn "$p") 2>"$t/apply.err"; then
      err "$path: its patch no longer applies to the CLI's file ($(head -1 "$t/apply.err")): the CLI's file changed; the module's differs from it as follows (scripts/scaffold-check.sh -update writes the patch again):"
      show "$t/a/$path" "$t/b/$path" "the CLI's" "the module's $demo/$path"
    elif ! cmp -s "$t/apply/$path" "$t/b/$path"; then
      err "$path: differs from the CLI's plus its patch (scripts/scaffold/$demo/patches/$path.patch); a change not in the patch:"
      show "$t/apply/$path" "$t/b/$path" "the CLI's + the patch" "the module's $demo/$path"
    fi
  done <"$t/union"

  local summary="$n_cli the CLI's, $n_patched patched, $n_own own, $n_generated generated, $n_removed removed"
  [ "$n_sdk" = 0 ] || summary="$summary, $n_sdk operator-sdk's"
  if [ $bad -ne 0 ]; then
    say "$demo: FAILED ($summary)"
    return 1
  fi
  say "$demo: ok: $summary"
}

# update_patches DEMO: writes a patch for each file classed patched (or
# operator-sdk's, where the CLI writes it too) from the module's file, and
# removes the patches nothing uses.
update_patches() {
  local demo=$1 t=$work/$1 dir=$SCAFFOLD/$1/patches new=$work/$1/new-patches path class in_cli in_mod reason p rc=0
  rm -rf "$new" && mkdir -p "$new"
  while IFS="$(printf '\t')" read -r path class in_cli in_mod reason; do
    case $class in patched | operator-sdk) ;; *) continue ;; esac
    [ "$in_cli" = 1 ] && [ "$in_mod" = 1 ] || continue
    rm -rf "$t/gen" && mkdir -p "$t/gen"
    norm "$t/cli/$demo/$path" "$t/gen/a/$path"
    norm "$ROOT/$demo/$path" "$t/gen/b/$path"
    if cmp -s "$t/gen/a/$path" "$t/gen/b/$path"; then
      say "$demo/$path: listed as $class, but it is the CLI's, byte for byte: no patch written (list it as cli)"
      rc=1
      continue
    fi
    p=$new/$path.patch
    mkdir -p "$(dirname "$p")"
    {
      echo "$demo/$path: $reason"
      echo "(The CLI's file plus this patch is the module's. scripts/scaffold-check.sh -update writes it, with the reason files.txt gives.)"
      echo
      (cd "$t/gen" && git -c core.quotepath=false -c diff.noprefix=false -c diff.mnemonicprefix=false \
        diff --no-index --no-prefix --no-color --no-ext-diff --no-textconv --diff-algorithm=myers \
        "a/$path" "b/$path") | grep -v '^index '
    } >"$p"
    if [ -f "$dir/$path.patch" ] && cmp -s "$p" "$dir/$path.patch"; then :; else
      say "$demo/$path: wrote scripts/scaffold/$demo/patches/$path.patch"
    fi
  done <"$t/union"
  if [ -d "$dir" ]; then
    (cd "$dir" && find . -type f -name '*.patch' | sed 's#^\./##') | while read -r p; do
      [ -f "$new/$p" ] || say "$demo/${p%.patch}: removed its patch, which nothing uses any more"
    done
  fi
  # Only now, with every patch written, replace the old ones.
  rm -rf "$dir"
  if [ -n "$(ls "$new")" ]; then mv "$new" "$dir"; fi
  return $rc
}

# The replays, side by side (most of the time goes to the go command).
pids=()
for d in "${demos[@]}"; do
  if [ ! -f "$SCAFFOLD/$d/files.txt" ] || [ ! -f "$ROOT/$d/README.md" ]; then
    say "$d: expected $d/README.md and scripts/scaffold/$d/files.txt"
    exit 2
  fi
  say "$d: replaying its README's commands with kubebuilder $KUBEBUILDER_VERSION (as $(grep -m1 -oE '^(kubebuilder|operator-sdk) init' "$ROOT/$d/README.md" | cut -d' ' -f1)), Go modules from the module cache"
  replay "$d" &
  pids+=($!)
done
rc=0
for pid in "${pids[@]}"; do
  wait "$pid" || rc=1
done
[ $rc -eq 0 ] || exit 1

for d in "${demos[@]}"; do
  check "$d" || rc=1
done
if [ $rc -ne 0 ]; then
  say "FAILED after $((SECONDS - start))s: fix the module, or the list (scripts/scaffold/DEMO/files.txt) and then the patches (scripts/scaffold-check.sh -update)"
  exit 1
fi
say "ok: the scaffolds are kubebuilder $KUBEBUILDER_VERSION's output plus the listed changes ($((SECONDS - start))s)"
