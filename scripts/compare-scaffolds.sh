#!/usr/bin/env bash
# What operator-sdk adds to a kubebuilder project: diffs kubebuilder-demo
# against operator-demo and prints a summary.
#
# Both modules hold the same CustomPod operator; operator-demo is operator-sdk's
# layout of it (go/v4 plus the manifests and scorecard plugins), made
# multigroup for its two extra APIs. Before comparing, a copy of
# kubebuilder-demo is normalised so that only real differences remain:
#   - the module path and project name (kubebuilder-demo -> operator-demo);
#   - the multigroup moves: api/v1 -> api/zhhnzw/v1 (and v2; v2's apply
#     configurations, api/v2/applyconfiguration/api/v2 ->
#     api/zhhnzw/v2/applyconfiguration/zhhnzw/v2),
#     internal/controller -> internal/controller/zhhnzw (package zhhnzw),
#     internal/webhook/v2 -> internal/webhook/zhhnzw/v2,
#     config/rbac/custompod_* -> config/rbac/zhhnzw_custompod_*,
#     config/crd/patches/webhook_in_custompods.yaml -> webhook_in_zhhnzw_custompods.yaml.
#
# Exits non-zero when the CustomPod API or controller differ after that (the
# two tutorials must teach the same code), or a file of the infrastructure
# both hold a copy of (must_match below).
#
# Usage: scripts/compare-scaffolds.sh [-v]   (-v also prints the diffs)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
KB=$ROOT/kubebuilder-demo
OP=$ROOT/operator-demo
verbose=false
[ "${1:-}" = -v ] && verbose=true

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
norm=$work/kubebuilder-demo

# Copy the tracked sources, not build output.
excludes=(--exclude=./bin --exclude=cover.out --exclude=.git --exclude=Dockerfile.cross)
mkdir -p "$norm"
tar -C "$KB" "${excludes[@]}" -cf - . | tar -C "$norm" -xf -

# The multigroup moves.
mkdir -p "$norm/api/zhhnzw" "$norm/internal/controller/zhhnzw" "$norm/internal/webhook/zhhnzw"
for v in "$norm"/api/v*; do mv "$v" "$norm/api/zhhnzw/"; done
[ ! -d "$norm/internal/webhook/v2" ] || mv "$norm/internal/webhook/v2" "$norm/internal/webhook/zhhnzw/v2"
[ ! -f "$norm/config/crd/patches/webhook_in_custompods.yaml" ] ||
  mv "$norm/config/crd/patches/webhook_in_custompods.yaml" "$norm/config/crd/patches/webhook_in_zhhnzw_custompods.yaml"
find "$norm/internal/controller" -maxdepth 1 -type f -exec mv {} "$norm/internal/controller/zhhnzw/" \;
# edit FILE SED-ARGS...: sed in place, as GNU's and BSD's sed -i spell it differently.
edit() { local f=$1; shift; sed "$@" "$f" >"$f.edit" && mv "$f.edit" "$f"; }
for f in "$norm"/internal/controller/zhhnzw/*.go; do
  edit "$f" 's/^package controller$/package zhhnzw/'
done
for f in "$norm"/config/rbac/custompod_*_role.yaml; do
  base=$(basename "$f")
  mv "$f" "$norm/config/rbac/zhhnzw_$base"
  edit "$norm/config/rbac/zhhnzw_$base" -E 's/name: custompod-(admin|editor|viewer)-role/name: zhhnzw-custompod-\1-role/'
done
edit "$norm/config/rbac/kustomization.yaml" 's/^- custompod_/- zhhnzw_custompod_/'
[ ! -f "$norm/config/crd/kustomization.yaml" ] ||
  edit "$norm/config/crd/kustomization.yaml" 's#patches/webhook_in_custompods.yaml#patches/webhook_in_zhhnzw_custompods.yaml#'

# The module path and project name, in every text file.
grep -rlI -e kubebuilder-demo -e 'k8s-demo/kubebuilder-demo' "$norm" | while read -r f; do
  edit "$f" \
    -e 's#k8s-demo/kubebuilder-demo/api/v\([0-9]\)/applyconfiguration/api/v\1"#k8s-demo/operator-demo/api/zhhnzw/v\1/applyconfiguration/zhhnzw/v\1"#g' \
    -e 's#k8s-demo/kubebuilder-demo/api/v\([0-9]\)"#k8s-demo/operator-demo/api/zhhnzw/v\1"#g' \
    -e 's#k8s-demo/kubebuilder-demo/internal/controller"#k8s-demo/operator-demo/internal/controller/zhhnzw"#g' \
    -e 's#k8s-demo/kubebuilder-demo/internal/webhook/v2"#k8s-demo/operator-demo/internal/webhook/zhhnzw/v2"#g' \
    -e 's/kubebuilder-demo/operator-demo/g'
done

# Lists of files (relative paths) on each side.
list() { (cd "$1" && find . -type f "${@:2}" | sed 's#^\./##' | sort); }
list "$norm" >"$work/kb.list"
list "$OP" -not -path './bin/*' -not -name cover.out -not -path './.git/*' -not -name Dockerfile.cross >"$work/op.list"
comm -13 "$work/kb.list" "$work/op.list" >"$work/only-op"
comm -23 "$work/kb.list" "$work/op.list" >"$work/only-kb"
comm -12 "$work/kb.list" "$work/op.list" >"$work/both"

# group PATH: which of operator-sdk's additions a file belongs to.
group() {
  case $1 in
    bundle/* | bundle.Dockerfile | hack/bundle/*) echo "OLM bundle" ;;
    config/scorecard/*) echo "scorecard" ;;
    config/manifests/*) echo "manifests (CSV base)" ;;
    api/apps/* | internal/controller/apps/* | config/*/apps_* | config/*/apps.mock.com_*) echo "PodSet API (apps/v1alpha1)" ;;
    api/network/* | internal/controller/network/* | config/*/network_* | config/*/network.mock.com_*) echo "Vpc API (network/v1)" ;;
    internal/webhook/network/* | config/webhook/manifests.yaml) echo "Vpc webhook (network/v1)" ;;
    *) echo "other" ;;
  esac
}

printf '\033[1mkubebuilder-demo -> operator-demo\033[0m (after normalising the module path and the multigroup moves)\n'

printf '\n\033[1mOnly in operator-demo\033[0m (%d files)\n' "$(wc -l <"$work/only-op")"
while read -r f; do printf '%s\t%s\n' "$(group "$f")" "$f"; done <"$work/only-op" | sort -s -t$'\t' -k1,1 |
  awk -F'\t' '$1 != g { g = $1; printf "  %s:\n", g } { printf "    %s\n", $2 }'

if [ -s "$work/only-kb" ]; then
  printf '\n\033[1mOnly in kubebuilder-demo\033[0m\n'
  sed 's/^/    /' "$work/only-kb"
fi

printf '\n\033[1mIn both, different\033[0m (lines: +added -removed in operator-demo)\n'
same=0
while read -r f; do
  if cmp -s "$norm/$f" "$OP/$f"; then
    same=$((same + 1))
    continue
  fi
  counts=$(diff "$norm/$f" "$OP/$f" | awk '/^>/ { a++ } /^</ { r++ } END { printf "+%d -%d", a, r }' || true)
  printf '    %-60s %s\n' "$f" "$counts"
  if $verbose; then diff -u "$norm/$f" "$OP/$f" | sed 's/^/      /' || true; fi
done <"$work/both"
printf '\n\033[1mIn both, identical\033[0m: %d files\n' "$same"

# The CustomPod API and controller must be the same code in both tutorials,
# and so must the infrastructure below them.
must_match=(
  api/zhhnzw/v1/custompod_types.go
  api/zhhnzw/v1/custompod_conversion.go
  api/zhhnzw/v1/groupversion_info.go
  api/zhhnzw/v1/zz_generated.deepcopy.go
  api/zhhnzw/v2/custompod_types.go
  api/zhhnzw/v2/custompod_conversion.go
  api/zhhnzw/v2/groupversion_info.go
  api/zhhnzw/v2/zz_generated.deepcopy.go
  internal/controller/zhhnzw/custompod_controller.go
  internal/controller/zhhnzw/events.go
  internal/controller/zhhnzw/pod_events.go
  internal/controller/zhhnzw/pod_names.go
  internal/controller/zhhnzw/pod_template.go
  internal/controller/zhhnzw/pod_writes.go
  internal/controller/zhhnzw/status.go
  internal/webhook/zhhnzw/v2/custompod_webhook.go
  config/crd/bases/zhhnzw.mock.com_custompods.yaml
  config/crd/patches/webhook_in_zhhnzw_custompods.yaml
  # Development infrastructure both need and neither may import from the
  # other (each module builds on its own): one copy each, kept the same.
  internal/webhook/certs/certs.go
  internal/webhook/certs/certs_test.go
  internal/conversionfuzz/conversionfuzz.go
  internal/metricsauth/metricsauth.go
  internal/metricsauth/metricsauth_test.go
)
printf '\n\033[1mCustomPod types and controller, and the shared infrastructure\033[0m\n'
rc=0
for f in "${must_match[@]}"; do
  if [ ! -f "$norm/$f" ] || [ ! -f "$OP/$f" ]; then
    printf '    MISSING    %s\n' "$f"
    rc=1
  elif cmp -s "$norm/$f" "$OP/$f"; then
    printf '    identical  %s\n' "$f"
  else
    printf '    DIFFERENT  %s\n' "$f"
    diff -u "$norm/$f" "$OP/$f" | sed 's/^/      /' || true
    rc=1
  fi
done
if [ $rc -ne 0 ]; then
  echo "The CustomPod API or controller of operator-demo, or a shared file, differs from kubebuilder-demo's beyond the normalisation." >&2
fi
exit $rc
