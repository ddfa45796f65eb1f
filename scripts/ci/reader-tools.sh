#!/usr/bin/env bash
# CI-only: installs what `make test` needs besides Go to type the tutorial
# into terminals (doctools/reader): tmux and zsh, and iproute2's ip; and to read
# the docs site in a browser (doctools/site): chromium and npm; from Debian's
# packages. A reader
# installs them as the README says; make never runs this.
set -euo pipefail
source "$(dirname "$0")/apt.sh"
missing=""
for t in tmux zsh; do
  command -v $t >/dev/null 2>&1 || missing="$missing $t"
done
# The docs site's test (doctools/site): headless Chromium, and npm for the
# site's search library.
[ -x /usr/bin/chromium ] || missing="$missing chromium"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
# A Chinese font, so that the Chinese pages' screenshots show characters.
fc-list :lang=zh 2>/dev/null | grep -q . || missing="$missing fonts-wqy-microhei"
# ip (iproute2) gives each pass of the reader a network of its own, so that
# they run at once; without it they run one after another.
command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || missing="$missing iproute2"
if [ -z "$missing" ]; then
  echo "tmux, zsh, ip, chromium, npm and a Chinese font: already here"
  exit 0
fi
command -v apt-get >/dev/null || { echo "no apt-get: install$missing by hand" >&2; exit 1; }
echo "installing$missing from Debian's packages"
apt_get update
# shellcheck disable=SC2086
apt_get install -y --no-install-recommends $missing
