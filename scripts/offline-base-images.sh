#!/usr/bin/env bash
# The base images the demos' Dockerfiles take as build arguments, made
# locally, for a `make docker-build` with no registry:
#
#   k8s-demo/golang:<go version>   Debian's rootfs of the kind node image plus
#                 this machine's Go toolchain ($(go env GOROOT)) and CA
#                 certificates (so it reaches the module proxy as the host does)
#   GOLANG_IMAGE  k8s-demo/golang-deps:<hash>   that, with the three demos'
#                 dependencies downloaded and compiled (client-go,
#                 controller-runtime...): the one layer their builds share, so
#                 each `make docker-build` compiles only the demo's own code
#                 (the hash is of the demos' go.mod and go.sum files and the
#                 list of packages compiled)
#   BASE_IMAGE    k8s-demo/static:nonroot        FROM scratch: CA certificates,
#                 /etc/passwd with nonroot (65532), /tmp; what distroless/static has
#
# It prints the DOCKER_BUILD_ARGS that use them (the last line of its output),
# e.g.  make -C kubebuilder-demo docker-build IMG=x DOCKER_BUILD_ARGS="$(scripts/offline-base-images.sh | tail -1)"
# --network=host lets the build's `go mod download` reach the Go module proxy
# the way this machine does. Users with internet keep the scaffolds' defaults
# (golang:1.26, gcr.io/distroless/static:nonroot) and need none of this.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
export DOCKER_BUILDKIT=0

die() { printf 'offline-base-images: %s\n' "$*" >&2; exit 1; }
docker info --format '{{.ServerVersion}}' >/dev/null 2>&1 || die "no Docker daemon answers (docker info failed)"

# The rootfs comes from the node image build (debootstrap, cached there).
rootfs=$(docker images --format '{{.Repository}}:{{.Tag}}' k8s-demo/kind-node-rootfs | head -1)
[ -n "$rootfs" ] || die "no k8s-demo/kind-node-rootfs image: run make kind-node-image first"

goroot=$(go env GOROOT)
gover=$(go env GOVERSION)
golang=k8s-demo/golang:${gover#go}
base=k8s-demo/static:nonroot

if ! docker image inspect "$golang" >/dev/null 2>&1; then
  echo "  making $golang from $rootfs and $goroot" >&2
  dir=$(mktemp -d)
  tar -C "$goroot" --exclude=./pkg/obj --exclude=./test -cf "$dir/go.tar" .
  cp /etc/ssl/certs/ca-certificates.crt "$dir/"
  cat >"$dir/Dockerfile" <<DOCKERFILE
FROM $rootfs
ADD go.tar /usr/local/go/
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ENV PATH=/usr/local/go/bin:/root/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
RUN go version
DOCKERFILE
  docker build -q -t "$golang" "$dir" >/dev/null || die "docker build of $golang failed"
  rm -rf "$dir"
fi

# The dependencies' packages each demo's image build compiles: what its main
# packages import, outside the demo's own module and the standard library.
demos="crd-demo kubebuilder-demo operator-demo"
ctx=$(mktemp -d)
for m in $demos; do
  mkdir -p "$ctx/$m"
  cp "$ROOT/$m/go.mod" "$ROOT/$m/go.sum" "$ctx/$m/"
  (cd "$ROOT/$m" && GOWORK=off CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go list -deps \
    -f '{{if and (not .Standard) .Module}}{{if not .Module.Main}}{{.ImportPath}}{{end}}{{end}}' ./...) >"$ctx/$m/deps.txt" ||
    die "go list of $m's dependencies failed"
done
deps=k8s-demo/golang-deps:$(cd "$ctx" && find . -type f | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-12)
if docker image inspect "$deps" >/dev/null 2>&1; then
  rm -rf "$ctx"
else
  echo "  making $deps: the three demos' dependencies, compiled once for their image builds" >&2
  cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $golang
COPY . /deps/
# Built as the Dockerfiles build (CGO_ENABLED=0, no -trimpath), into the build
# cache each demo's build then finds them in.
RUN for m in $demos; do (cd /deps/\$m && go mod download && CGO_ENABLED=0 go build \$(cat deps.txt)) || exit 1; done && rm -rf /deps
DOCKERFILE
  start=$SECONDS
  docker build --network=host -t "$deps" "$ctx" >"$ctx.log" 2>&1 || { tail -30 "$ctx.log" >&2; die "docker build of $deps failed"; }
  rm -rf "$ctx" "$ctx.log"
  echo "  made $deps in $(fmt_secs $((SECONDS - start)))" >&2
  # The ones made before were for go.mod and go.sum files since changed: no
  # build asks for them again, and each is about 1.8 GB.
  for old in $(docker images --format '{{.Repository}}:{{.Tag}}' k8s-demo/golang-deps); do
    if [ "$old" != "$deps" ] && docker rmi "$old" >/dev/null 2>&1; then
      echo "  removed $old, made for the demos' go.mod and go.sum files as they were" >&2
    fi
  done
fi

if ! docker image inspect "$base" >/dev/null 2>&1; then
  echo "  making $base" >&2
  dir=$(mktemp -d)
  mkdir -p "$dir/etc/ssl/certs" "$dir/tmp" "$dir/home/nonroot"
  chmod 1777 "$dir/tmp"
  chown 65532:65532 "$dir/home/nonroot"
  docker run --rm --entrypoint cat "$rootfs" /etc/ssl/certs/ca-certificates.crt >"$dir/etc/ssl/certs/ca-certificates.crt"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$dir/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$dir/etc/group"
  tar -C "$dir" --numeric-owner -c . | docker import - "$base" >/dev/null
  rm -rf "$dir"
fi
echo "  $deps and $base are there" >&2
echo "--network=host --build-arg GOLANG_IMAGE=$deps --build-arg BASE_IMAGE=$base"
