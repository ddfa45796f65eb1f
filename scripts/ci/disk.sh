#!/usr/bin/env bash
# CI only: enough free disk for a whole run, checked before anything is built.
#
# A full disk fails far from its cause: the linker's "no space left on
# device", then envtest's etcd that never starts, then thirty failed tests.
# So the run stops here instead, saying how much each filesystem lacks and
# what is largest on it.
#
# What a run adds, at its peak, where it writes (CONTRIBUTING.md, "Disk"):
#   the work tree: bin/, the reader's clones, the kind part's checkout
#   Go's build cache (go env GOCACHE)
#   temporary files (TMPDIR): test binaries, envtest's etcd and API server
#   Docker's data: the node and base images, the demos' images, the kind
#     clusters' volumes
# Paths on one filesystem need the sum of their parts free there.
#
# Before measuring, it removes from Docker what earlier runs left that
# nothing uses, if Docker answers: images no tag names, made more than a day
# ago (each docker-build leaves its builder stage so, and the image its tag
# moved from; the newer ones are the next builds' layer cache).
set -euo pipefail
cd "$(dirname "$0")/../.."

say() { printf '  [disk] %s\n' "$*"; }

# The parts, in MiB: what a run at the commit CONTRIBUTING.md names added
# there at its peak, and half as much again. They peak at different times:
# their sum is above what the run took at its peak.
need_tree=2300 need_gocache=2600 need_tmp=4500 need_docker=9000

gocache=$(go env GOCACHE)
tmp=${TMPDIR:-/tmp}
docker_root=/var/lib/docker
if timeout 5 docker info >/dev/null 2>&1; then
  docker_root=$(docker info --format '{{.DockerRootDir}}')
  say "docker image prune, of what is a day old: $(docker image prune -f --filter until=24h | tail -1)"
fi

# existing PATH: PATH, or its nearest parent that exists (df needs one).
existing() {
  local p=$1
  while [ ! -e "$p" ]; do p=$(dirname "$p"); done
  printf '%s\n' "$p"
}
# The filesystem a path is on, as df names it: a bind mount (Docker's data
# often is one) is named as what it mounts, and shares its free space.
fs_of() { df -Pk "$(existing "$1")" | awk 'NR == 2 { print $1 }'; }
free_mib() { df -Pk "$(existing "$1")" | awk 'NR == 2 { printf "%d", $4 / 1024 }'; }
gib() { awk -v m="$1" 'BEGIN { printf "%.1f GiB", m / 1024 }'; }

parts="the work tree|$PWD|$need_tree
Go's build cache|$gocache|$need_gocache
temporary files|$tmp|$need_tmp
Docker's data|$docker_root|$need_docker"

short=0
filesystems=$(printf '%s\n' "$parts" | while IFS='|' read -r _ path _; do fs_of "$path"; done | sort -u)
for fs in $filesystems; do
  need=0 names= largest= on=
  while IFS='|' read -r name path mib; do
    [ "$(fs_of "$path")" = "$fs" ] || continue
    on=$path
    need=$((need + mib))
    names="$names${names:+, }$name $(gib "$mib")"
    if [ -e "$path" ]; then
      largest="$largest    $name, $path: $(du -sk "$path" 2>/dev/null | awk '{ printf "%.1f GiB", $1 / 1048576 }')
"
    fi
  done <<EOF
$parts
EOF
  free=$(free_mib "$on")
  if [ "$free" -ge "$need" ]; then
    say "ok: $fs has $(gib "$free") free; a run needs about $(gib "$need") there ($names)"
  else
    short=1
    say "FAILED: $fs has $(gib "$free") free; a run needs about $(gib "$need") there ($names). What is there now:"
    printf '%s' "$largest"
  fi
done
if [ "$short" -ne 0 ]; then
  say "free some disk and run again: go clean -cache empties Go's build cache; docker system prune removes unused containers, networks and images."
  exit 1
fi
