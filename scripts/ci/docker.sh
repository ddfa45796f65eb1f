#!/usr/bin/env bash
# CI only: make a Docker engine answer on this machine, for `make e2e CLUSTER=kind`.
#
# Never run by `make` on a user's machine: it installs packages and starts a
# daemon as root. .ci/run calls it; run it by hand only if you want exactly that.
#
#   1. a daemon already answers: nothing to do.
#   2. no dockerd: install Debian's docker.io (the engine, containerd, runc).
#   3. start dockerd in the background, logging to $DOCKERD_LOG.
#   4. if privileged containers are refused because the sandbox's capability
#      bounding set lacks CAP_SYS_RESOURCE, install a runc wrapper that drops
#      that capability from each container's OCI spec, make it dockerd's
#      default runtime, and restart dockerd.
#
# Idempotent: each step says what it found and what it did. Exit status 0 means
# `docker run --privileged` works; anything else says why not.
set -euo pipefail

DOCKERD_LOG=${DOCKERD_LOG:-/var/log/dockerd-ci.log}
WRAPPER=/usr/local/bin/runc-no-sys-resource
DAEMON_JSON=/etc/docker/daemon.json
PROBE_IMAGE=k8s-demo/ci-probe:busybox

say() { printf '  [docker-ci] %s\n' "$*"; }
die() { printf '  [docker-ci] FAILED: %s\n' "$*" >&2; exit 1; }

daemon_answers() { timeout 5 docker info --format '{{.ServerVersion}}' >/dev/null 2>&1; }

source "$(dirname "$0")/apt.sh"

install_engine() {
  if command -v dockerd >/dev/null; then
    say "dockerd is installed: $(command -v dockerd)"
    return
  fi
  command -v apt-get >/dev/null || die "no dockerd and no apt-get: install a Docker engine by hand"
  say "no dockerd: installing Debian's docker.io (engine, containerd, runc)"
  apt_get update
  apt_get install -y --no-install-recommends \
    docker.io jq iptables >/dev/null
  say "installed $(dockerd --version)"
}

start_daemon() {
  if daemon_answers; then
    return
  fi
  if pgrep -x dockerd >/dev/null; then
    say "dockerd runs but does not answer yet; waiting"
  else
    say "starting dockerd in the background (log: $DOCKERD_LOG)"
    as_root bash -c "nohup dockerd >>'$DOCKERD_LOG' 2>&1 &"
  fi
  local i
  for i in $(seq 1 60); do
    daemon_answers && { say "dockerd answers: server $(docker info --format '{{.ServerVersion}}')"; return; }
    sleep 1
  done
  tail -20 "$DOCKERD_LOG" >&2 || true
  die "dockerd did not answer within 60s (see $DOCKERD_LOG)"
}

stop_daemon() {
  local pid
  pid=$(pgrep -x dockerd || true)
  [ -n "$pid" ] || return 0
  say "stopping dockerd (pid $pid)"
  as_root kill "$pid"
  local i
  for i in $(seq 1 30); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 1
  done
  die "dockerd (pid $pid) did not stop within 30s"
}

# A tiny image to probe with, made locally: nothing can be pulled here.
probe_image() {
  docker image inspect "$PROBE_IMAGE" >/dev/null 2>&1 && return
  if ! dpkg -s busybox-static >/dev/null 2>&1; then
    say "installing Debian's busybox-static for a probe image"
    apt_get install -y busybox-static >/dev/null
  fi
  local bb=/bin/busybox
  local dir
  dir=$(mktemp -d)
  mkdir -p "$dir/bin"
  cp "$bb" "$dir/bin/busybox"
  ln -s busybox "$dir/bin/sh"
  ln -s busybox "$dir/bin/true"
  tar -C "$dir" -c . | docker import - "$PROBE_IMAGE" >/dev/null
  rm -rf "$dir"
  say "made probe image $PROBE_IMAGE"
}

privileged_works() {
  docker run --rm --privileged "$PROBE_IMAGE" /bin/true >/tmp/docker-ci-probe.log 2>&1
}

install_wrapper() {
  say "installing the capability-dropping runtime $WRAPPER"
  command -v jq >/dev/null || apt_get install -y jq >/dev/null
  as_root tee "$WRAPPER" >/dev/null <<'EOF'
#!/bin/sh
# runc, minus CAP_SYS_RESOURCE: this sandbox's bounding set lacks it, so a
# privileged container (which asks for every capability) fails to start.
# Installed by scripts/ci/docker.sh of the k8s-demo project (CI only).
# The spec is config.json in the bundle (create/run) or the --process file (exec).
drop() {
  [ -f "$1" ] || return 0
  jq '(if .process then .process else . end).capabilities |= (if . then with_entries(.value |= (if type == "array" then map(select(. != "CAP_SYS_RESOURCE")) else . end)) else . end)' "$1" >"$1.tmp" && mv "$1.tmp" "$1"
}
prev=
for a in "$@"; do
  case "$prev" in
    --bundle|-b) drop "$a/config.json" ;;
    --process|-p) drop "$a" ;;
  esac
  case "$a" in
    --bundle=*) drop "${a#--bundle=}/config.json" ;;
    --process=*) drop "${a#--process=}" ;;
  esac
  prev=$a
done
exec runc "$@"
EOF
  as_root chmod 0755 "$WRAPPER"
}

register_wrapper() {
  as_root mkdir -p "$(dirname "$DAEMON_JSON")"
  local cur='{}'
  [ -s "$DAEMON_JSON" ] && cur=$(cat "$DAEMON_JSON")
  local want
  want=$(jq --arg p "$WRAPPER" '.runtimes["runc-no-sys-resource"] = {path: $p} | .["default-runtime"] = "runc-no-sys-resource"' <<<"$cur")
  if [ "$(jq -S . <<<"$cur")" = "$(jq -S . <<<"$want")" ]; then
    say "$DAEMON_JSON already makes runc-no-sys-resource the default runtime"
    return 1
  fi
  say "registering runc-no-sys-resource as dockerd's default runtime in $DAEMON_JSON"
  as_root tee "$DAEMON_JSON" >/dev/null <<<"$want"
  return 0
}

main() {
  if daemon_answers; then
    say "a Docker daemon answers: server $(docker info --format '{{.ServerVersion}}')"
  else
    install_engine
    start_daemon
  fi
  probe_image
  if privileged_works; then
    say "privileged containers work"
    return
  fi
  if ! grep -q 'unable to apply caps' /tmp/docker-ci-probe.log; then
    cat /tmp/docker-ci-probe.log >&2
    die "docker run --privileged failed, and not for a missing capability (output above)"
  fi
  say "privileged containers are refused: $(grep -o 'unable to apply caps[^"]*' /tmp/docker-ci-probe.log | head -1)"
  install_wrapper
  if register_wrapper; then
    stop_daemon
    start_daemon
  fi
  privileged_works || { cat /tmp/docker-ci-probe.log >&2; die "docker run --privileged still fails with the wrapper (output above)"; }
  say "privileged containers work through runc-no-sys-resource"
}

main "$@"
