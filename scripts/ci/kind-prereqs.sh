#!/usr/bin/env bash
# CI only: the Debian packages `make kind-node-image` needs on the build
# machine (debootstrap for the node's rootfs, with Debian's archive keyring and
# gpgv to check what it downloads; gcc for pause). Never run by make
# on a user's machine; .ci/run calls it. Idempotent.
set -euo pipefail
source "$(dirname "$0")/apt.sh"
need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
# --no-install-recommends below would leave out the keyring debootstrap only
# recommends; Ubuntu's apt does not bring it either.
[ -s /usr/share/keyrings/debian-archive-keyring.gpg ] || need+=(debian-archive-keyring)
command -v gpgv >/dev/null || need+=(gpgv)
command -v gcc >/dev/null || need+=(gcc libc6-dev)
if [ ${#need[@]} -eq 0 ]; then
  echo "  [kind-prereqs] debootstrap, debian-archive-keyring, gpgv and gcc are installed"
  exit 0
fi
echo "  [kind-prereqs] installing Debian's ${need[*]}"
apt_get update
apt_get install -y --no-install-recommends "${need[@]}" >/dev/null
echo "  [kind-prereqs] installed ${need[*]}"
