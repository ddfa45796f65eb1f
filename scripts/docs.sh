#!/usr/bin/env bash
# The docs as a site, and their diagrams.
#
#   scripts/docs.sh build            the site, into .cache/site/public (make docs)
#   scripts/docs.sh serve            build it, then serve it on DOCS_ADDR (make docs-serve)
#   scripts/docs.sh diagrams         render docs/diagrams/*.d2 into their .svg (make diagrams)
#   scripts/docs.sh check-diagrams   fail when an .svg is not what its .d2 renders to (make verify)
#
# Hugo and D2 are built from Go modules (scripts/tools.sh), the theme comes
# through the Go module proxy and FlexSearch from the npm registry, each at
# the version versions.env pins. The built site requests nothing from
# outside the machine.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$ROOT/versions.env"
site=$ROOT/.cache/site
DOCS_ADDR=${DOCS_ADDR:-127.0.0.1:1313}

# render D2FILE SVGFILE: the one rendering every machine makes alike (the
# layout engine and fonts are D2's own).
render() {
  "$LOCALBIN/d2" --layout=dagre --theme=0 --pad=16 "$1" "$2" >/dev/null 2>"$2.log" || {
    cat "$2.log" >&2
    rm -f "$2.log"
    return 1
  }
  rm -f "$2.log"
}

diagrams() {
  "$ROOT/scripts/tools.sh" d2 >/dev/null
  local f n=0
  for f in "$ROOT"/docs/diagrams/*.d2; do
    render "$f" "${f%.d2}.svg"
    n=$((n + 1))
  done
  echo "diagrams: $n rendered into docs/diagrams/"
}

check_diagrams() {
  "$ROOT/scripts/tools.sh" d2 >/dev/null
  local f tmp bad=0 n=0
  tmp=$(mktemp -d)
  for f in "$ROOT"/docs/diagrams/*.d2; do
    n=$((n + 1))
    render "$f" "$tmp/out.svg"
    if ! cmp -s "$tmp/out.svg" "${f%.d2}.svg"; then
      echo "docs/diagrams/$(basename "${f%.d2}").svg is not what $(basename "$f") renders to: run make diagrams and commit it" >&2
      bad=1
    fi
  done
  rm -rf "$tmp"
  [ $bad -eq 0 ] && echo "diagrams: the $n .svg files are their .d2 sources' renderings"
  return $bad
}

# theme: the Hextra module's directory in the Go module cache, downloaded
# through the proxy if missing, its hash checked against versions.env.
theme() {
  local json sum dir
  json=$(cd "$ROOT/tools" && GOWORK=off GONOSUMDB=github.com/imfing/hextra GOFLAGS=-mod=mod \
    go mod download -json "github.com/imfing/hextra@$HEXTRA_VERSION")
  sum=$(printf '%s\n' "$json" | awk -F'"' '$2 == "Sum" { print $4 }')
  dir=$(printf '%s\n' "$json" | awk -F'"' '$2 == "Dir" { print $4 }')
  if [ "$sum" != "$HEXTRA_SUM" ]; then
    echo "docs: github.com/imfing/hextra@$HEXTRA_VERSION has hash '$sum', versions.env pins HEXTRA_SUM=$HEXTRA_SUM" >&2
    return 1
  fi
  echo "$dir"
}

# flexsearch: the theme's search library from the npm registry, its tarball
# checked against FLEXSEARCH_INTEGRITY before it is installed, with no
# install scripts. The integrity it was checked against is kept beside it, so
# an install made before the pin (or under another one) is made again.
flexsearch() {
  local npmdir=$site/npm
  local pkg=$npmdir/node_modules/flexsearch/package.json stamp=$npmdir/flexsearch.integrity
  if [ -f "$pkg" ] && [ "$(awk -F'"' '$2 == "version" { print $4; exit }' "$pkg")" = "$FLEXSEARCH_VERSION" ] &&
    [ "$(cat "$stamp" 2>/dev/null)" = "$FLEXSEARCH_INTEGRITY" ]; then
    return 0
  fi
  if ! command -v npm >/dev/null; then
    echo "docs: npm is needed once, to fetch the search library flexsearch@$FLEXSEARCH_VERSION from the npm registry (Debian/Ubuntu: sudo apt-get install npm; macOS: brew install node)" >&2
    return 1
  fi
  if ! command -v openssl >/dev/null; then
    echo "docs: openssl is needed to check flexsearch@$FLEXSEARCH_VERSION against FLEXSEARCH_INTEGRITY, and is not on PATH (Debian/Ubuntu: sudo apt-get install openssl)" >&2
    return 1
  fi
  echo "docs: flexsearch@$FLEXSEARCH_VERSION from the npm registry"
  local tmp tgz got
  tmp=$(mktemp -d)
  # npm pack fetches the registry's tarball as it is, and runs nothing.
  tgz=$(cd "$tmp" && npm pack --ignore-scripts --loglevel=error "flexsearch@$FLEXSEARCH_VERSION" | tail -1)
  if [ -z "$tgz" ] || [ ! -f "$tmp/$tgz" ]; then
    echo "docs: npm pack flexsearch@$FLEXSEARCH_VERSION wrote no tarball (expected one in $tmp, saw: $(ls "$tmp"))" >&2
    rm -rf "$tmp"
    return 1
  fi
  # npm's integrity format: sha512-, then the base64 of the tarball's SHA-512.
  got=sha512-$(openssl dgst -sha512 -binary "$tmp/$tgz" | openssl base64 -A)
  if [ "$got" != "$FLEXSEARCH_INTEGRITY" ]; then
    echo "docs: flexsearch@$FLEXSEARCH_VERSION from the npm registry has integrity $got, versions.env pins FLEXSEARCH_INTEGRITY=$FLEXSEARCH_INTEGRITY" >&2
    rm -rf "$tmp"
    return 1
  fi
  mkdir -p "$npmdir"
  rm -f "$stamp"
  npm install --prefix "$npmdir" --ignore-scripts --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    "$tmp/$tgz" >/dev/null
  rm -rf "$tmp"
  echo "$FLEXSEARCH_INTEGRITY" >"$stamp"
}

build() {
  "$ROOT/scripts/tools.sh" hugo d2
  local dir
  dir=$(theme)
  flexsearch
  (cd "$ROOT/doctools" && GOWORK=off go run ./cmd/site -root "$ROOT" -out "$site")
  rm -rf "$site/public"
  # The theme's directory in the module cache is named hextra@VERSION.
  "$LOCALBIN/hugo" build --source "$ROOT/site" --themesDir "$(dirname "$dir")" --theme "$(basename "$dir")" \
    --destination "$site/public" --cleanDestinationDir --noBuildLock --logLevel warn
  echo "docs: the site is in ${site#"$ROOT"/}/public; make docs-serve serves it on http://$DOCS_ADDR/"
}

case ${1:-} in
  build) build ;;
  serve)
    build
    cd "$ROOT/doctools" && GOWORK=off exec go run ./cmd/site -serve "$site/public" -addr "$DOCS_ADDR"
    ;;
  diagrams) diagrams ;;
  check-diagrams) check_diagrams ;;
  *)
    echo "usage: scripts/docs.sh build|serve|diagrams|check-diagrams" >&2
    exit 2
    ;;
esac
