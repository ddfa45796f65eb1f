#!/usr/bin/env bash
# `make kind-node-image`: a kind node image for KUBERNETES_VERSION, built with
# no image registry: Debian's packages and Go modules only.
#
#   scripts/kind-node-image.sh            build it unless an image of this tag exists
#   scripts/kind-node-image.sh --tag      print the tag only (KIND_NODE_IMAGE=$(...))
#
# The tag carries a hash of every input (the pins in versions.env, images/kind-node/
# and this script), so a build is skipped until one of them changes.
#
# Stages, each cached:
#   1. binaries: kubelet, kubeadm, kube-proxy, kubectl, kube-apiserver,
#      kube-controller-manager, kube-scheduler and etcd from k8s.io/kubernetes
#      and etcd's module (scripts/tools.sh, bin/); containerd, ctr, crictl,
#      CoreDNS and kube-router from their Go modules; pause from pause.c in
#      k8s.io/kubernetes.
#   2. rootfs: debootstrap of KIND_NODE_DEBIAN_SUITE with what a kind node runs
#      (systemd, runc, iptables, conntrack, CNI plugins...), imported into Docker.
#   3. control-plane images, named as `kubeadm config images list` prints them:
#      each binary alone in a `docker import`ed image (kube-proxy on the rootfs,
#      which has the iptables it runs); kube-router on the rootfs too (iptables,
#      ipset), the NetworkPolicy enforcer of files/kind/manifests/default-cni.yaml.
#   4. the node: images/kind-node/Dockerfile on the rootfs, with kind's entrypoint
#      and node files taken from the pinned kind module.
#   5. preload: containerd started in the node, the images imported into its
#      k8s.io namespace (unpacked when first used), the container committed.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
# shellcheck source=../versions.env
source "$ROOT/versions.env"

export DOCKER_BUILDKIT=0 # the classic builder: it never looks for buildx or a registry
cache=$ROOT/.cache/kind-node
context_dir=$ROOT/images/kind-node
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Debian's archive keys (package debian-archive-keyring). With them and
# --force-check-gpg, debootstrap refuses a Release whose signature it cannot
# check, instead of falling back to unverified packages over plain http.
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
# What a kind node runs (kind's images/base/Dockerfile installs the same set),
# plus Debian's runc and CNI plugins, busybox for the small helper images, and
# ipset for kube-router's image.
packages=systemd,systemd-sysv,dbus,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,ca-certificates,curl,procps,bash,jq,socat,e2fsprogs,ebtables,runc,containernetworking-plugins,busybox-static,ipset

pins="KUBERNETES_VERSION=$KUBERNETES_VERSION KIND_VERSION=$KIND_VERSION ETCD_VERSION=$ETCD_VERSION CONTAINERD_VERSION=$CONTAINERD_VERSION CRICTL_VERSION=$CRICTL_VERSION COREDNS_VERSION=$COREDNS_VERSION DISTRIBUTION_VERSION=$DISTRIBUTION_VERSION KUBE_ROUTER_VERSION=$KUBE_ROUTER_VERSION KIND_NODE_DEBIAN_SUITE=$KIND_NODE_DEBIAN_SUITE packages=$packages"
inputs_hash() {
  {
    echo "$pins"
    cat "$0"
    (cd "$context_dir" && find . -type f | LC_ALL=C sort | xargs sha256sum)
  } | sha256sum | cut -c1-12
}
tag=k8s-demo/kind-node:$KUBERNETES_VERSION-$(inputs_hash)
# The keyring is in the hash so that a rootfs debootstrapped before the
# signature check was forced is not reused.
rootfs_tag=k8s-demo/kind-node-rootfs:$KIND_NODE_DEBIAN_SUITE-$(echo "$packages $mirror $keyring" | sha256sum | cut -c1-12)

if [ "${1:-}" = --tag ]; then
  echo "$tag"
  exit 0
fi

say() { printf '  %s\n' "$*"; }
die() { printf 'kind-node-image: %s\n' "$*" >&2; exit 1; }


# --- 1. binaries ---------------------------------------------------------------
binaries() {
  "$ROOT/scripts/tools.sh" kube-apiserver kube-controller-manager kube-scheduler kubectl etcd \
    kubelet kubeadm kube-proxy containerd containerd-shim-runc-v2 ctr crictl coredns registry kube-router
  local kmod
  kmod=$(cd "$ROOT/tools" && GOWORK=off go list -m -f '{{.Dir}}' k8s.io/kubernetes)
  if [ "$(cat "$LOCALBIN/.stamps/pause" 2>/dev/null)" != "$KUBERNETES_VERSION" ]; then
    command -v gcc >/dev/null || die "pause is built with gcc -static: apt-get install gcc libc6-dev"
    gcc -Os -static -Wall -Werror -DVERSION="$KUBERNETES_VERSION" -o "$LOCALBIN/pause" "$kmod/build/pause/linux/pause.c"
    echo "$KUBERNETES_VERSION" >"$LOCALBIN/.stamps/pause"
    say "pause built from $kmod/build/pause/linux/pause.c"
  fi
}

# --- 2. rootfs -----------------------------------------------------------------
# Also run before stage 1, so that a missing keyring fails at once.
debootstrap_preflight() {
  command -v debootstrap >/dev/null || die "the rootfs is made with debootstrap: apt-get install debootstrap debian-archive-keyring"
  [ -s "$keyring" ] ||
    die "debootstrap checks Debian's signatures with the keyring $keyring, and there is no such file: apt-get install debian-archive-keyring"
  command -v gpgv >/dev/null || die "debootstrap checks Debian's signatures with gpgv, which is not on PATH: apt-get install gpgv"
}

rootfs() {
  if docker image inspect "$rootfs_tag" >/dev/null 2>&1; then
    say "$rootfs_tag is there"
    return
  fi
  debootstrap_preflight
  local dir=$cache/rootfs
  rm -rf "$dir"
  say "debootstrap $KIND_NODE_DEBIAN_SUITE from $mirror (about 2 minutes; log: $cache/debootstrap.log)"
  if ! debootstrap --variant=minbase --force-check-gpg --keyring "$keyring" --include="$packages" \
    "$KIND_NODE_DEBIAN_SUITE" "$dir" "$mirror" >"$cache/debootstrap.log" 2>&1; then
    tail -20 "$cache/debootstrap.log" >&2
    die "debootstrap failed (log: $cache/debootstrap.log); a Release not signed by a key of $keyring fails here too"
  fi
  # Smaller image, and no stale state: apt lists and caches, machine-id (kind's
  # entrypoint makes one per node).
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/* "$dir"/var/log/*.log
  : >"$dir/etc/machine-id"
  tar -C "$dir" --numeric-owner -c . | docker import - "$rootfs_tag" >/dev/null
  rm -rf "$dir"
  say "imported $rootfs_tag ($(docker image inspect -f '{{.Size}}' "$rootfs_tag" | awk '{printf "%d MB", $1/1e6}'))"
}

# --- 3. control-plane images ---------------------------------------------------
# img NAME BINARY...: a FROM-scratch image of static binaries in /usr/local/bin.
img() {
  local name=$1 entry=$2
  shift 2
  local dir
  dir=$(mktemp -d)
  mkdir -p "$dir/usr/local/bin" "$dir/etc" "$dir/tmp"
  chmod 1777 "$dir/tmp"
  local b
  for b in "$@"; do cp "$LOCALBIN/$b" "$dir/usr/local/bin/"; done
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$dir/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$dir/etc/group"
  tar -C "$dir" --numeric-owner --owner=0 --group=0 -c . |
    docker import --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' --change "ENTRYPOINT $entry" - "$name" >/dev/null
  rm -rf "$dir"
  say "made $name"
}

# Pods that name `busybox` get this, through the node's docker.io mirror.
# Kept for what readers type (`kubectl run --image=busybox`): :latest, which the kubelet always pulls.
busybox_image=docker.io/library/busybox:latest
# The controllers' pods name this tag, with IfNotPresent: the same image,
# preloaded, so they start without a pull.
busybox_pinned=docker.io/library/busybox:1.36
# And those that name `curlimages/curl:latest`: the scaffolds' e2e suites
# (kubebuilder-demo/test/e2e) read the manager's metrics with it.
curl_image=docker.io/curlimages/curl:latest
# The images the node's docker.io mirror holds (pods pull them by these names).
mirror_images=("$busybox_image" "$busybox_pinned" "$curl_image")
# The NetworkPolicy enforcer's, which default-cni.yaml names (IfNotPresent):
# preloaded like the control-plane images. A name of the project's own, as
# it is not kube-router's published image.
kube_router_image=docker.io/k8s-demo/kube-router:$KUBE_ROUTER_VERSION

images_list=()
load_images_list() {
  local i
  while IFS= read -r i; do images_list+=("$i"); done < <("$LOCALBIN/kubeadm" config images list --kubernetes-version "$KUBERNETES_VERSION" 2>/dev/null)
  [ ${#images_list[@]} -gt 0 ] || die "kubeadm config images list printed nothing"
}

control_plane_images() {
  say "kubeadm $KUBERNETES_VERSION expects: ${images_list[*]}"
  local i
  for i in "${images_list[@]}"; do
    case "$i" in
      */kube-apiserver:*) img "$i" '["/usr/local/bin/kube-apiserver"]' kube-apiserver ;;
      */kube-controller-manager:*) img "$i" '["/usr/local/bin/kube-controller-manager"]' kube-controller-manager ;;
      */kube-scheduler:*) img "$i" '["/usr/local/bin/kube-scheduler"]' kube-scheduler ;;
      */etcd:*)
        [ "${i##*:}" = "${ETCD_VERSION#v}-0" ] || die "kubeadm wants $i, but versions.env pins ETCD_VERSION=$ETCD_VERSION"
        img "$i" '["/usr/local/bin/etcd"]' etcd ;;
      */coredns:*)
        [ "${i##*:}" = "$COREDNS_VERSION" ] || die "kubeadm wants $i, but versions.env pins COREDNS_VERSION=$COREDNS_VERSION"
        img "$i" '["/usr/local/bin/coredns"]' coredns ;;
      */pause:*) img "$i" '["/usr/local/bin/pause"]' pause ;;
      */kube-proxy:*)
        # kube-proxy runs iptables and conntrack: it gets the node's rootfs.
        local dir
        dir=$(mktemp -d)
        cp "$LOCALBIN/kube-proxy" "$dir/"
        printf 'FROM %s\nCOPY kube-proxy /usr/local/bin/kube-proxy\n' "$rootfs_tag" >"$dir/Dockerfile"
        docker build -q -t "$i" "$dir" >/dev/null
        rm -rf "$dir"
        say "made $i (on $rootfs_tag)" ;;
      *) die "kubeadm wants $i, which this script does not know how to build" ;;
    esac
  done
  # kube-router runs iptables and ipset: it gets the node's rootfs too.
  local dir
  dir=$(mktemp -d)
  cp "$LOCALBIN/kube-router" "$dir/"
  printf 'FROM %s\nCOPY kube-router /usr/local/bin/kube-router\n' "$rootfs_tag" >"$dir/Dockerfile"
  docker build -q -t "$kube_router_image" "$dir" >/dev/null
  rm -rf "$dir"
  docker run --rm --entrypoint bash "$kube_router_image" -c 'command -v ipset iptables-restore' >/dev/null ||
    die "$kube_router_image lacks ipset or iptables"
  say "made $kube_router_image (on $rootfs_tag)"
  # busybox, which the demos' pods run: Debian's busybox-static, with its
  # applets linked in /bin as the upstream image has them.
  dir=$(busybox_tree)
  tar -C "$dir" --numeric-owner --owner=0 --group=0 -c . |
    docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["sh"]' - "$busybox_image" >/dev/null
  docker tag "$busybox_image" "$busybox_pinned"
  rm -rf "$dir"
  say "made $busybox_image and $busybox_pinned (Debian's busybox-static)"
  # curl, which the scaffolds' e2e suites run in a pod (`/bin/sh -c "for i in
  # $(seq 1 30); do curl -v -k ...`): Debian's curl with the libraries ldd
  # lists for it (the dynamic loader too) and the CA certificates, on the same
  # busybox tree for the shell, seq and sleep.
  dir=$(busybox_tree)
  docker run --rm --entrypoint bash "$rootfs_tag" -c \
    'tar -ch /usr/bin/curl /etc/ssl/certs/ca-certificates.crt $(ldd /usr/bin/curl | grep -o "/[^ ]*") 2>/dev/null' |
    tar -C "$dir" -x
  tar -C "$dir" --numeric-owner --owner=0 --group=0 -c . |
    docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'ENTRYPOINT ["/usr/bin/curl"]' - "$curl_image" >/dev/null
  rm -rf "$dir"
  docker run --rm --user 1000 --read-only "$curl_image" --version >/dev/null || die "$curl_image does not run curl"
  say "made $curl_image (Debian's curl on busybox-static)"
}

# busybox_tree: a new directory holding Debian's busybox-static in /bin, its
# applets linked beside it, a /tmp and an /etc/passwd; prints its path.
busybox_tree() {
  local dir applet
  dir=$(mktemp -d)
  mkdir -p "$dir/bin" "$dir/tmp" "$dir/etc"
  chmod 1777 "$dir/tmp"
  docker run --rm --entrypoint /bin/busybox "$rootfs_tag" cat /bin/busybox >"$dir/bin/busybox"
  chmod 0755 "$dir/bin/busybox"
  for applet in $(docker run --rm --entrypoint /bin/busybox "$rootfs_tag" --list); do
    [ "$applet" = busybox ] || ln -s busybox "$dir/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' >"$dir/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' >"$dir/etc/group"
  echo "$dir"
}

# --- 4. node -------------------------------------------------------------------
stage_tag=k8s-demo/kind-node-stage:build
node() {
  local ctx=$cache/context kindmod
  kindmod=$(cd "$ROOT/tools" && GOWORK=off go mod download -json "sigs.k8s.io/kind@$KIND_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [ -d "$kindmod/images/base/files" ] || die "no images/base/files in the kind module at $kindmod"
  rm -rf "$ctx"
  mkdir -p "$ctx/bin" "$ctx/kind-base"
  # kind's node contract at KIND_VERSION: its entrypoint, /kind/bin helpers,
  # containerd, kubelet and crictl configuration and systemd units.
  cp -r "$kindmod/images/base/files/." "$ctx/kind-base/"
  rm -rf "$ctx/kind-base/LICENSES"
  chmod -R u+w "$ctx/kind-base"
  # The sandbox (pause) image kubeadm expects, not the one kind's base pins.
  local pause
  pause=$(printf '%s\n' "${images_list[@]}" | grep '/pause:')
  sed -i "s#^\(\s*sandbox_image\s*=\s*\).*#\1\"$pause\"#" "$ctx/kind-base/etc/containerd/config.toml"
  grep -q "sandbox_image = \"$pause\"" "$ctx/kind-base/etc/containerd/config.toml" ||
    die "could not set sandbox_image to $pause in kind's containerd config.toml"
  # A kind node may lack CAP_SYS_RESOURCE (Docker in a sandbox that lacks it:
  # scripts/ci/docker.sh); then runc cannot lower a pod's oom_score_adj below
  # containerd's own and every pod fails ("failed to update
  # /proc/self/oom_score_adj: Permission denied"). Restricting clamps the value
  # instead, as kind does for rootless nodes; with the capability, containerd
  # runs at -999 and no pod asks for less, so nothing changes.
  sed -i 's/^\(\s*restrict_oom_score_adj\s*=\s*\).*/\1true/' "$ctx/kind-base/etc/containerd/config.toml"
  grep -q 'restrict_oom_score_adj = true' "$ctx/kind-base/etc/containerd/config.toml" ||
    die "could not set restrict_oom_score_adj in kind's containerd config.toml"
  # Registry hosts (the docker.io mirror) come from /etc/containerd/certs.d.
  printf '\n[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/etc/containerd/certs.d"\n' \
    >>"$ctx/kind-base/etc/containerd/config.toml"
  # kind's base image makes its containerd base spec the same way.
  "$LOCALBIN/ctr" oci spec |
    jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' |
    jq 'del(.process.rlimits)' >"$ctx/cri-base.json"
  echo "$KUBERNETES_VERSION" >"$ctx/version"
  cp -r "$context_dir/files" "$context_dir/Dockerfile" "$ctx/"
  # The enforcer's image, as control_plane_images tagged it.
  sed -i "s#docker.io/k8s-demo/kube-router:KUBE_ROUTER_VERSION#$kube_router_image#" "$ctx/files/kind/manifests/default-cni.yaml"
  grep -q "image: $kube_router_image\$" "$ctx/files/kind/manifests/default-cni.yaml" ||
    die "could not set kube-router's image in default-cni.yaml"
  local b
  for b in kubelet kubeadm kubectl containerd containerd-shim-runc-v2 ctr crictl registry; do cp "$LOCALBIN/$b" "$ctx/bin/"; done
  docker build --build-arg ROOTFS="$rootfs_tag" -t "$stage_tag" "$ctx" | grep -E '^Step|containerd|runc|Kubernetes' || die "docker build of the node stage failed"
  rm -rf "$ctx"
}

# --- 5. preload ----------------------------------------------------------------
preload() {
  local c=k8s-demo-kind-node-build
  docker rm -f "$c" >/dev/null 2>&1 || true
  # containerd alone (no systemd), on a volume-free /var so the commit keeps
  # what it imports; --no-unpack needs no snapshotter, so overlay-in-overlay
  # is never tried here.
  docker run -d --name "$c" --privileged --entrypoint /usr/local/bin/containerd "$stage_tag" >/dev/null
  local i
  for i in $(seq 1 30); do
    docker exec "$c" ctr version >/dev/null 2>&1 && break
    [ "$i" = 30 ] && { docker logs "$c" 2>&1 | tail -20 >&2; die "containerd did not start in the build container"; }
    sleep 1
  done
  for i in "${images_list[@]}" "$kube_router_image"; do
    docker save "$i" | docker exec -i "$c" ctr --namespace=k8s.io images import --all-platforms --no-unpack --digests - >/dev/null ||
      die "importing $i into the node's containerd failed"
    say "preloaded $i"
  done
  # The docker.io mirror: busybox and curl go into its storage, baked into the image.
  for i in "${mirror_images[@]}"; do
    docker save "$i" | docker exec -i "$c" ctr --namespace=k8s.io images import --no-unpack --digests - >/dev/null ||
      die "importing $i into the node's containerd failed"
  done
  docker exec -d "$c" env OTEL_TRACES_EXPORTER=none registry serve /etc/kind-offline/registry.yml
  for i in $(seq 1 20); do
    docker exec "$c" bash -c 'exec 3<>/dev/tcp/127.0.0.1/5000' 2>/dev/null && break
    [ "$i" = 20 ] && die "the registry did not start in the build container"
    sleep 0.5
  done
  local mirror_ref
  for i in "${mirror_images[@]}"; do
    mirror_ref=127.0.0.1:5000/${i#docker.io/}
    docker exec "$c" ctr --namespace=k8s.io images tag "$i" "$mirror_ref" >/dev/null
    docker exec "$c" ctr --namespace=k8s.io images push --plain-http "$mirror_ref" >/dev/null ||
      die "pushing $i into the node's docker.io mirror failed"
    docker exec "$c" ctr --namespace=k8s.io images rm "$mirror_ref" >/dev/null
  done
  docker exec "$c" pkill -x registry || true
  say "${mirror_images[*]} are in the node's docker.io mirror"
  local have missing=()
  have=$(docker exec "$c" ctr --namespace=k8s.io images ls -q)
  for i in "${images_list[@]}" "${mirror_images[@]}" "$kube_router_image"; do
    grep -qx "$i" <<<"$have" || missing+=("$i")
  done
  [ ${#missing[@]} -eq 0 ] || die "after the import the node's containerd lacks ${missing[*]}; it has: $(tr '\n' ' ' <<<"$have")"
  docker stop "$c" >/dev/null
  docker commit \
    --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' --change 'CMD []' \
    --change 'ENV container=docker' \
    "$c" "$tag" >/dev/null
  docker rm "$c" >/dev/null
  docker rmi "$stage_tag" >/dev/null 2>&1 || true
  say "committed $tag ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%d MB", $1/1e6}'))"
}

# Each stage runs as its own process, so that `set -e` holds inside it (bash
# ignores it in a function called as `step ... || ...`).
if [ "${1:-}" = --stage ]; then
  [ "$2" = binaries ] || load_images_list
  "$2"
  exit 0
fi

docker info --format '{{.ServerVersion}}' >/dev/null 2>&1 ||
  die "no Docker daemon answers (docker info failed): the node image is a Docker image; start Docker first"
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "kind-node-image: $tag is up to date"
  exit 0
fi
docker image inspect "$rootfs_tag" >/dev/null 2>&1 || debootstrap_preflight
echo "kind-node-image: building $tag (cold: about 20 minutes on 2 cores; later builds reuse every finished stage)"
trap summary EXIT
mkdir -p "$cache"
step "[1/5] binaries (Go modules, stamped in bin/.stamps)" "$0" --stage binaries || exit 1
step "[2/5] rootfs: Debian $KIND_NODE_DEBIAN_SUITE packages" "$0" --stage rootfs || exit 1
step "[3/5] control-plane images (no registry)" "$0" --stage control_plane_images || exit 1
step "[4/5] node image stage" "$0" --stage node || exit 1
step "[5/5] preload the images into the node's containerd" "$0" --stage preload || exit 1
docker image inspect "$tag" >/dev/null 2>&1 || die "the build ended without an image $tag"
echo
echo "kind-node-image: built $tag"
echo "  use it: CLUSTER=kind KIND_NODE_IMAGE=$tag make cluster-up"
