# Sourced by the CI set-up scripts: Debian's apt-get, as root, asking nothing
# of a terminal. .ci/run runs these steps under timeout, which puts them in a
# process group of their own; in a terminal, apt-get gives dpkg a pty of its
# own (Dpkg::Use-Pty) and sets the terminal's modes to do it, and a process
# group in the background that does is stopped (SIGTTOU), for good.
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}
apt_get() {
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -qq -o Dpkg::Use-Pty=0 "$@" </dev/null
}
