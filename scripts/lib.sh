# Helpers shared by the scripts: timed, titled steps and a summary of where
# the time went.
# shellcheck shell=bash

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export ROOT
export LOCALBIN=${LOCALBIN:-$ROOT/bin}

_step_names=()
_step_secs=()
_step_cpu=()
_step_status=()
# The failed tests' lines, from side_by_side's failed lanes, for the summary.
_failed_tests=()

# bin/steptime (e2e/cmd/steptime) measures a step's CPU-seconds, children
# included; build_steptime builds it (a second when up to date).
export STEPTIME=${STEPTIME:-$LOCALBIN/steptime}
build_steptime() {
  (cd "$ROOT/e2e" && GOWORK=off go build -o "$STEPTIME" ./cmd/steptime)
}

fmt_secs() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# add_cpu A B...: the sum of CPU-seconds ("-" where a step was not measured).
add_cpu() {
  printf '%s\n' "$@" | awk '$1 != "-" { s += $1 } END { printf "%.1f", s }'
}

# step "title" command args...: runs a command under a title, timing it: its
# wall time, and the CPU-seconds it and every process it started spent
# (bin/steptime). A shell function given as the command runs in a bash of its
# own, with this script's functions: it must not record steps itself.
step() {
  local title=$1 start=$SECONDS rc=0 cpu=- t
  shift
  printf '\n\033[1m==> %s\033[0m\n' "$title"
  if [ -x "$STEPTIME" ]; then
    t=$(mktemp "${TMPDIR:-/tmp}/step.XXXXXX")
    if [ "$(type -t "$1")" = function ]; then
      "$STEPTIME" -o "$t" -- bash -c "$(declare -f); \"\$@\"" step "$@" || rc=$?
    else
      "$STEPTIME" -o "$t" -- "$@" || rc=$?
    fi
    cpu=$(cut -d' ' -f1 "$t" 2>/dev/null)
    rm -f "$t"
  else
    "$@" || rc=$?
  fi
  _step_names+=("$title")
  _step_secs+=($((SECONDS - start)))
  _step_cpu+=("${cpu:--}")
  _step_status+=("$([ $rc -eq 0 ] && echo ok || echo "FAILED ($rc)")")
  return $rc
}

# summary: where the time went, one line a step: wall time, CPU-seconds
# (children included; "-" where not measured) and how it ended.
summary() {
  local total=0 cpus=() i
  printf '\n\033[1mWhere the time went\033[0m\n'
  printf '  %-66s %8s %9s\n' "" "wall" "CPU-s"
  for i in "${!_step_names[@]}"; do
    printf '  %-66s %8s %9s  %s\n' "${_step_names[$i]}" "$(fmt_secs "${_step_secs[$i]}")" "${_step_cpu[$i]}" "${_step_status[$i]}"
    # Steps run side by side, named "(1) ..." and "(2) ...", are in the
    # total once, through their "side by side, in all" line.
    case "${_step_names[$i]}" in "("[0-9]")"*) continue ;; esac
    total=$((total + _step_secs[i]))
    cpus+=("${_step_cpu[$i]}")
  done
  printf '  %-66s %8s %9s\n' "total" "$(fmt_secs $total)" "$(add_cpu ${cpus[@]+"${cpus[@]}"})"
  failures_summary
  retries_summary
}

# failures_summary: what the lanes that failed said of their failed tests,
# go test's "--- FAIL" lines (subtests too), each with what says why
# (failed_tests). Each lane's whole output is printed above it (and kept in
# .cache/side-by-side/), but a log cut to its end, as CI shows it, would
# otherwise name the failed step and not the test.
failures_summary() {
  local i said=
  for ((i = 0; i < ${#_failed_tests[@]}; i++)); do
    [ -n "${_failed_tests[$i]}" ] || continue
    if [ -z "$said" ]; then
      printf '\n\033[1mWhat failed\033[0m (the failed tests, from each failed lane'"'"'s output)\n'
      said=yes
    fi
    printf '%s\n' "${_failed_tests[$i]}" | sed 's/^/  /'
  done
}

# failed_tests: from go test's output on stdin, each "--- FAIL" line (subtests
# too) with the first and the last of that test's own log entries: the first
# often says where it was, the last is what stopped it (a t.Fatal comes last,
# after every step's log, and may run on over indented lines: up to 40 of
# them are kept). Passing tests' lines are left out.
failed_tests() {
  awk '
    BEGIN { skip = -1 }
    function ind(s) { match(s, /^ */); return RLENGTH }
    function close_to(n) {
      while (depth > 0 && n <= at[depth]) {
        if (last[depth] != "" && last[depth] != first[depth]) printf "%s", last[depth]
        depth--
      }
    }
    {
      sub(/\r$/, "")
      n = ind($0)
      if (skip >= 0 && n > skip) next
      skip = -1
      if ($0 ~ /^ *--- FAIL: /) {
        close_to(n); depth++; at[depth] = n; first[depth] = ""; last[depth] = ""; kept[depth] = 0
        print; next
      }
      if ($0 ~ /^ *(--- (PASS|SKIP): |=== )/) { close_to(n); skip = n; next }
      close_to(n)
      if (depth == 0) next
      if (n == at[depth] + 4 && $0 ~ /^ *[^ ]+\.go:[0-9]+: /) {
        if (first[depth] == "") { first[depth] = $0 "\n"; print }
        last[depth] = $0 "\n"; kept[depth] = 0
      } else if (n > at[depth] + 4 && last[depth] != "" && kept[depth] < 40) {
        last[depth] = last[depth] $0 "\n"; kept[depth]++
      }
    }
    END { close_to(-1) }
  '
}

# retried "who: what": adds a line to the list of what was tried a second
# time ($RETRIES_LOG, which make test sets; e2e/retries is the Go side), for
# the summary. A retry is allowed only where the code says why.
retried() {
  [ -n "${RETRIES_LOG:-}" ] || return 0
  printf '%s\n' "$*" >>"$RETRIES_LOG"
}

# retries_summary: every retry of the run, by name, or that there was none.
retries_summary() {
  [ -n "${RETRIES_LOG:-}" ] || return 0
  if [ ! -s "$RETRIES_LOG" ]; then
    printf '  %s\n' "retries: none (no test tried anything a second time)"
    return 0
  fi
  printf '\n\033[1mRetried\033[0m (%d; each allowed where its code says why; the list: %s)\n' \
    "$(wc -l <"$RETRIES_LOG" | tr -d ' ')" "${RETRIES_LOG#"$ROOT"/}"
  sed 's/^/  /' "$RETRIES_LOG"
}

# side_by_side "title A" funcA "title B" funcB ...: runs functions made of
# steps at once, each with its output in $LANES_DIR (.cache/side-by-side/
# unless set: a script that runs another's lanes in one of its own gives each
# a folder of its own), saying every
# minute what each is at; then prints each one's output whole, one after the
# other, and adds their steps to the summary. Fails if any failed.
side_by_side() {
  local dir=${LANES_DIR:-$ROOT/.cache/side-by-side} start=$SECONDS
  rm -rf "$dir" && mkdir -p "$dir"
  local titles=() funcs=() pids=() reported=() i n
  while [ $# -ge 2 ]; do
    titles+=("$1")
    funcs+=("$2")
    reported+=("")
    shift 2
  done
  n=${#funcs[@]}
  for ((i = 0; i < n; i++)); do
    (
      _step_names=() _step_secs=() _step_cpu=() _step_status=()
      rc=0
      "${funcs[$i]}" || rc=$?
      for j in "${!_step_names[@]}"; do
        printf '%s|%s|%s|%s\n' "${_step_secs[$j]}" "${_step_cpu[$j]}" "${_step_status[$j]}" "${_step_names[$j]}"
      done >"$dir/$i.steps"
      echo $rc >"$dir/$i.rc"
      exit $rc
    ) >"$dir/$i.log" 2>&1 &
    pids+=($!)
  done
  printf '\n\033[1m==> side by side:'
  for ((i = 0; i < n; i++)); do
    printf ' (%d) %s;' $((i + 1)) "${titles[$i]}"
  done
  printf '\033[0m\n'
  printf '    their output follows when all are done; meanwhile: tail -f %s/N.log (N from 0)\n' "${dir#"$ROOT"/}"
  # Every minute, what each is at; and the moment one ends, how it ended (a
  # failure is then known without waiting for the others).
  local running=1 esc
  esc=$(printf '\033')
  while [ $running = 1 ]; do
    running=0
    for ((i = 0; i < n; i++)); do
      if kill -0 "${pids[$i]}" 2>/dev/null; then
        running=1
      elif [ -z "${reported[$i]}" ]; then
        reported[i]=yes
        local last
        last=$(tail -1 "$dir/$i.steps" 2>/dev/null)
        case "$last" in
          *"|ok|"*) printf '    (%d) %s: done, ok\n' $((i + 1)) "$(fmt_secs $((SECONDS - start)))" ;;
          *) printf '    (%d) %s: FAILED at "%s"; its output: %s/%d.log (and below, once the others are done)\n' \
               $((i + 1)) "$(fmt_secs $((SECONDS - start)))" "${last##*|}" "${dir#"$ROOT"/}" "$i" ;;
        esac
      fi
    done
    [ $running = 1 ] || break
    sleep 5
    if [ $(((SECONDS - start) % 60)) -lt 5 ]; then
      for ((i = 0; i < n; i++)); do
        local at
        at=$(grep -a '==>' "$dir/$i.log" 2>/dev/null | tail -1 | sed "s/$esc\[[0-9;]*m//g; s/^==> //")
        kill -0 "${pids[$i]}" 2>/dev/null && printf '    (%d) %s: at %s\n' $((i + 1)) "$(fmt_secs $((SECONDS - start)))" "${at:-its start}"
      done
    fi
  done
  local rc=0 r cpus=()
  for ((i = 0; i < n; i++)); do
    # The lane's own record of how it ended, not wait's: bash forgets a
    # finished child's status once its pid is reused (pid_max is 32768 on
    # many Linux machines, and a lane can end many minutes before the
    # other), and wait then says 127 for a lane that passed.
    wait "${pids[$i]}" 2>/dev/null || true
    r=$(cat "$dir/$i.rc" 2>/dev/null || echo 1)
    [ $r -eq 0 ] || rc=$r
    printf '\n\033[1m==> (%d) %s: its output\033[0m\n' $((i + 1)) "${titles[$i]}"
    cat "$dir/$i.log"
    if [ $r -ne 0 ]; then
      _failed_tests+=("$(sed "s/$esc\[[0-9;]*m//g" "$dir/$i.log" | failed_tests | cut -c1-300 | head -150)")
    fi
    local secs cpu status name
    while IFS='|' read -r secs cpu status name; do
      _step_names+=("($((i + 1))) $name")
      _step_secs+=("$secs")
      _step_cpu+=("$cpu")
      _step_status+=("$status")
      cpus+=("$cpu")
    done < <(cat "$dir/$i.steps" 2>/dev/null)
  done
  _step_names+=("side by side, in all")
  _step_secs+=($((SECONDS - start)))
  _step_cpu+=("$(add_cpu ${cpus[@]+"${cpus[@]}"})")
  _step_status+=("$([ $rc -eq 0 ] && echo ok || echo "FAILED ($rc)")")
  return $rc
}

# modules: the repository's Go modules, tools/ aside (MODULES="a b" narrows it).
modules() {
  if [ -n "${MODULES:-}" ]; then
    printf '%s\n' $MODULES
    return
  fi
  local m
  for m in "$ROOT"/*/go.mod; do
    m=$(basename "$(dirname "$m")")
    [ "$m" = tools ] || echo "$m"
  done
}

# has_target DIR TARGET: whether DIR's Makefile defines TARGET.
has_target() {
  [ -f "$1/Makefile" ] && grep -qE "^$2:" "$1/Makefile"
}
