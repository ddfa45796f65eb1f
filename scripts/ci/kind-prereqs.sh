#!/usr/bin/env bash
# CI only: the Debian packages `make kind-node-image` needs on the build
# machine (debootstrap for the node's rootfs, gcc for pause). Never run by make
# on a user's machine; .ci/run calls it. Idempotent.
set -euo pipefail
need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v gcc >/dev/null || need+=(gcc libc6-dev)
if [ ${#need[@]} -eq 0 ]; then
  echo "  [kind-prereqs] debootstrap and gcc are installed"
  exit 0
fi
echo "  [kind-prereqs] installing Debian's ${need[*]}"
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }
as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
echo "  [kind-prereqs] installed ${need[*]}"
