#!/usr/bin/env bash
# Part of `make verify`: the controllers' loop files stay short enough to teach,
# and the three CustomPod implementations keep the same helpers in the same
# files, so that docs/comparison.md can set them side by side.
#
# A loop file holds the reconciler, its RBAC, Reconcile (syncHandler in
# client-go) in numbered steps, and its setup. What hardens it for production
# lives beside it, in a file named for what it holds (CONTRIBUTING.md).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

budget=150
loop_files='crd-demo/controller.go
crd-demo/pkg/custompod/controller.go
kubebuilder-demo/internal/controller/custompod_controller.go
operator-demo/internal/controller/zhhnzw/custompod_controller.go
operator-demo/internal/controller/apps/podset_controller.go'

# FILE FUNCTION: where each CustomPod implementation keeps each helper.
helpers='pod_names.go sortPods
pod_names.go podName
pod_names.go ordinal
pod_names.go deleteRank
pod_writes.go createPods
pod_writes.go createPod
pod_writes.go deletePods
pod_template.go newPod
status.go updateStatus
status.go isPodReady
status.go isPodFinished
events.go podsNote'
impl_dirs='crd-demo/pkg/custompod
kubebuilder-demo/internal/controller
operator-demo/internal/controller/zhhnzw'

bad=0
for f in $loop_files; do
  n=$(wc -l <"$f" | tr -d ' ')
  if [ "$n" -gt "$budget" ]; then
    echo "check-loop-files: $f has $n lines, over the budget of $budget: move what is not the loop into a file named for what it holds" >&2
    bad=1
  fi
done

for d in $impl_dirs; do
  while read -r file fn; do
    if ! grep -Eq "^func (\([^)]*\) )?$fn\(" "$d/$file" 2>/dev/null; then
      echo "check-loop-files: expected func $fn in $d/$file, as in the other CustomPod implementations; not found there" >&2
      bad=1
    fi
  done <<EOF
$helpers
EOF
done
exit $bad
