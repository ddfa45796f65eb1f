# Helpers shared by the scripts: timed, titled steps and a summary of where
# the time went.
# shellcheck shell=bash

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export ROOT
export LOCALBIN=${LOCALBIN:-$ROOT/bin}

_step_names=()
_step_secs=()
_step_status=()

fmt_secs() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# step "title" command args...: runs a command under a title, timing it.
step() {
  local title=$1 start=$SECONDS rc=0
  shift
  printf '\n\033[1m==> %s\033[0m\n' "$title"
  "$@" || rc=$?
  _step_names+=("$title")
  _step_secs+=($((SECONDS - start)))
  _step_status+=("$([ $rc -eq 0 ] && echo ok || echo "FAILED ($rc)")")
  return $rc
}

# summary: where the time went, one line a step.
summary() {
  local total=0 i
  printf '\n\033[1mWhere the time went\033[0m\n'
  for i in "${!_step_names[@]}"; do
    printf '  %-60s %8s  %s\n' "${_step_names[$i]}" "$(fmt_secs "${_step_secs[$i]}")" "${_step_status[$i]}"
    total=$((total + _step_secs[i]))
  done
  printf '  %-60s %8s\n' "total" "$(fmt_secs $total)"
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
