#!/usr/bin/env bash
# Part of `make verify`: git holds no built binary and no file over 2 MB.
# A binary belongs in bin/ or .cache/ (both ignored), built from source by
# make; a large file makes every clone slower for good. A file that must be
# large goes on the list below, with its reason.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

limit=2097152 # 2 MiB
# PATH<TAB>reason, for files allowed over the limit. None is today: the
# diagrams (docs/diagrams/*.svg) and the chart (docs/bench.png) are well under it.
allowed=''

is_allowed() {
  [ -n "$allowed" ] && printf '%s\n' "$allowed" | cut -f1 | grep -Fxq -- "$1"
}

# The index, not the work tree: a file `git add` has staged is caught before
# it is committed. Sizes from one `git cat-file --batch-check`; only the files
# git itself finds binary (`ls-files --eol`: i/-text) are opened.
bad=0
paths=$(git ls-files)
sizes=$(git ls-files -s | awk '{ print $2 }' | git cat-file --batch-check='%(objectsize)')
while IFS=$'\t' read -r size path; do
  if [ "$size" -gt "$limit" ] && ! is_allowed "$path"; then
    echo "check-tracked-files: $path is $size bytes, over the limit of $limit: build it, or list it in scripts/check-tracked-files.sh with a reason" >&2
    bad=1
  fi
done < <(paste <(printf '%s\n' "$sizes") <(printf '%s\n' "$paths"))

# A compiled program, whatever its mode: ELF (Linux), Mach-O (macOS, 32 and
# 64 bit, and universal), PE (Windows).
while IFS=$'\t' read -r info path; do
  case $info in i/-text*) ;; *) continue ;; esac
  # od stops after 4 bytes: git may then die of SIGPIPE, which is no error.
  magic=$(git cat-file blob ":$path" 2>/dev/null | od -An -tx1 -N4 | tr -d ' \n' || :)
  case $magic in
  7f454c46 | cffaedfe | cefaedfe | feedfacf | feedface | cafebabe | 4d5a*)
    echo "check-tracked-files: $path is a compiled program (magic $magic): programs are built into bin/ by make, never committed (git rm --cached $path)" >&2
    bad=1
    ;;
  esac
done < <(git ls-files --eol)
exit $bad
