package walkthrough

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"example.com/k8s-demo/e2e/custompod"
	"example.com/k8s-demo/e2e/harness"
	"example.com/k8s-demo/e2e/impls"
)

// The CustomPod CRD, read and written through the dynamic client (the e2e
// module has no apiextensions clientset).
var (
	crdsGVR      = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	customPodCRD = "custompods.zhhnzw.mock.com"
)

// migrationManifest is the StorageVersionMigration chapter 6 applies.
var migrationManifest = []string{"crd-demo", "example", "custompods-storage-migration.yaml"}

// TestCustomPodStorageMigration has Kubernetes move CustomPods stored as v1
// to v2 (chapter 6, step 5): the CRD stores v1 for a while, CustomPods are
// written then, it stores v2 again, and a StorageVersionMigration (1.37, on by
// default) must rewrite them and leave only v2 in status.storedVersions.
//
// The CRD storing v1 makes every write of a v2 client go through the
// conversion webhook: this test runs crd-demo's, beside the cluster, as
// TestCustomPodConversion does. In the cluster,
// TestCustomPod/client-go/migration runs the same checks on the Deployment
// TestCustomPod made.
func TestCustomPodStorageMigration(t *testing.T) {
	if harness.InCluster() {
		t.Skip("in the cluster, TestCustomPod/client-go/migration checks the migration on TestCustomPod's Deployment")
	}
	h := harness.New(t)
	startConversionWebhook(h, implementations[0]) // crd-demo's: it needs no `make run`
	testStorageMigration(h)
}

// testStorageMigration needs the CRD's conversion webhook served and crd-demo's
// controller reconciling the test's namespace, and nothing else changing the
// CRD.
func testStorageMigration(h *harness.H) {
	h.Helper()
	dyn, err := dynamic.NewForConfig(h.Env.Config)
	if err != nil {
		h.Fatal(err)
	}
	crds := dyn.Resource(crdsGVR)
	v1 := dyn.Resource(customPodsV1).Namespace(h.Namespace)
	v2 := dyn.Resource(impls.CustomPods).Namespace(h.Namespace)
	h.Track("custompods.v2.zhhnzw.mock.com")

	// createV1 creates a CustomPod as the articles' clients do, with no pods
	// (the controller then writes its status once, and never again), and
	// waits for that status: from then on only this test writes it.
	createV1 := func(name string) {
		h.Helper()
		cp := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "zhhnzw.mock.com/v1", "kind": "CustomPod",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"replicas": int64(0)},
		}}
		// Until the webhook serves with the CA the CRD names, a v1 write fails.
		h.WaitFor("custompod/"+name+" to be created as v1 through the conversion webhook", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
			_, err := v1.Create(ctx, cp, metav1.CreateOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			return true, "", nil
		})
		h.WaitFor("the controller to write custompod/"+name+"'s status", time.Minute, func(ctx context.Context) (bool, string, error) {
			got, err := custompod.Get(ctx, h, name)
			if err != nil {
				return false, "", err
			}
			return got.Ready() == "True", fmt.Sprintf("Ready=%q", got.Ready()), nil
		})
	}

	// A cluster that had the articles' v1-only CRD: the CRD stores v1, and
	// the CustomPods written meanwhile are stored as v1. The API server
	// switches a moment after the CRD says so: "before", written first, tells
	// when (see waitForStorage).
	createV1("before")
	setStorageVersion(h, crds, "v1")
	h.Cleanup(func() {
		// Whatever happened, leave the CRD as the other tests expect it.
		if h.Failed() {
			setStorageVersion(h, crds, "v2")
		}
	})
	waitForStorage(h, v2, "before", "v1")
	createV1("after")
	createV1("probe")

	// The CRD of this release again: it stores v2, and remembers v1.
	setStorageVersion(h, crds, "v2")
	waitForStorage(h, v2, "probe", "v2")
	if stored := storedVersions(h, crds); !slices.Contains(stored, "v1") {
		h.Fatalf("the CRD's status.storedVersions is %v after it stored v1; want v1 in it", stored)
	}
	// What "before" and "after" are stored as now: v1. "probe": v2.
	rvs := map[string]string{}
	for _, name := range []string{"before", "after", "probe"} {
		cp, err := v2.Get(h.Ctx, name, metav1.GetOptions{})
		if err != nil {
			h.Fatal(err)
		}
		rvs[name] = cp.GetResourceVersion()
	}

	// The migration, as the chapter applies it; its name made the test's own.
	svm := readMigration(h)
	svm.Name += "-" + h.Namespace
	name := svm.Name
	h.Track("storageversionmigration/" + name)
	if _, err := h.Env.Client.StoragemigrationV1().StorageVersionMigrations().Create(h.Ctx, svm, metav1.CreateOptions{}); err != nil {
		h.Fatal(err)
	}
	h.Cleanup(func() {
		// Cluster-scoped: the namespace's deletion does not take it. A
		// failed test keeps it for the dump and for a look.
		if !h.Failed() {
			_ = h.Env.Client.StoragemigrationV1().StorageVersionMigrations().Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})

	// It succeeds, and then the controller-manager rewrites storedVersions.
	// A CRD created a moment ago takes longer (41 s on a fresh kwok cluster):
	// the migrator reads the objects from the garbage collector's cache,
	// which looks for new resources every 30 s, and retries with a growing
	// back-off meanwhile. It fails the migration a minute after its creation
	// if the resource is still not there; hence no wait shorter than two.
	h.WaitFor(fmt.Sprintf("storageversionmigration/%s to succeed and the CRD's status.storedVersions to become [v2]", name), 2*time.Minute,
		func(ctx context.Context) (bool, string, error) {
			migration, succeeded := "not found", false
			got, err := h.Env.Client.StoragemigrationV1().StorageVersionMigrations().Get(ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return false, "", err
			default:
				if c := meta.FindStatusCondition(got.Status.Conditions, string(storagemigrationv1.MigrationFailed)); c != nil && c.Status == metav1.ConditionTrue {
					h.Fatalf("storageversionmigration/%s failed: %s", name, c.Message)
				}
				migration = conditionsOf(got.Status.Conditions)
				succeeded = meta.IsStatusConditionTrue(got.Status.Conditions, string(storagemigrationv1.MigrationSucceeded))
			}
			crd, err := crds.Get(ctx, customPodCRD, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
			seen := fmt.Sprintf("storageversionmigration/%s: %s; the CRD: status.storedVersions %v, %s",
				name, migration, stored, storageMigratingOf(crd))
			return succeeded && slices.Equal(stored, []string{"v2"}), seen, nil
		})

	// It rewrote what was stored as v1, and left what was stored as v2.
	for cp, storedAsV1 := range map[string]bool{"before": true, "after": true, "probe": false} {
		got, err := v2.Get(h.Ctx, cp, metav1.GetOptions{})
		if err != nil {
			h.Fatal(err)
		}
		rewritten := got.GetResourceVersion() != rvs[cp]
		h.Logf("custompod/%s: resourceVersion %s → %s", cp, rvs[cp], got.GetResourceVersion())
		if rewritten != storedAsV1 {
			h.Errorf("custompod/%s, stored as v1: %v; rewritten by the migration: %v (resourceVersion %s → %s)",
				cp, storedAsV1, rewritten, rvs[cp], got.GetResourceVersion())
		}
		// Stored as v2 now: the migrator's request changes nothing more.
		before, after, err := rewrite(h.Ctx, v2, cp)
		if err != nil {
			h.Fatal(err)
		}
		if before != after {
			h.Errorf("custompod/%s is not stored as v2 after the migration: rewriting it again gave it resourceVersion %s → %s", cp, before, after)
		}
	}

	// Which is what lets v1 leave the CRD (a dry run: the other tests
	// still use v1).
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := crds.Get(h.Ctx, customPodCRD, metav1.GetOptions{})
		if err != nil {
			return err
		}
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		versions = slices.DeleteFunc(versions, func(v any) bool { return v.(map[string]any)["name"] == "v1" })
		if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
			return err
		}
		_, err = crds.Update(h.Ctx, crd, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	if err != nil {
		h.Errorf("dropping v1 from the CRD after the migration (a dry run): %v", err)
	}
}

// readMigration reads the chapter's StorageVersionMigration.
func readMigration(h *harness.H) *storagemigrationv1.StorageVersionMigration {
	h.Helper()
	b, err := os.ReadFile(h.Path(migrationManifest...))
	if err != nil {
		h.Fatal(err)
	}
	var svm storagemigrationv1.StorageVersionMigration
	if err := yaml.UnmarshalStrict(b, &svm); err != nil {
		h.Fatalf("%s: %v", strings.Join(migrationManifest, "/"), err)
	}
	if r := svm.Spec.Resource; r.Group != impls.CustomPods.Group || r.Resource != impls.CustomPods.Resource {
		h.Fatalf("%s migrates %s, want %s", strings.Join(migrationManifest, "/"), r.String(), customPodCRD)
	}
	return &svm
}

// setStorageVersion makes version the CRD's storage version.
func setStorageVersion(h *harness.H, crds dynamic.NamespaceableResourceInterface, version string) {
	h.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := crds.Get(h.Ctx, customPodCRD, metav1.GetOptions{})
		if err != nil {
			return err
		}
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			v.(map[string]any)["storage"] = v.(map[string]any)["name"] == version
		}
		if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
			return err
		}
		_, err = crds.Update(h.Ctx, crd, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		h.Fatalf("making %s the CRD's storage version: %v", version, err)
	}
	h.Logf("the CRD stores %s; status.storedVersions %v", version, storedVersions(h, crds))
}

func storedVersions(h *harness.H, crds dynamic.NamespaceableResourceInterface) []string {
	h.Helper()
	crd, err := crds.Get(h.Ctx, customPodCRD, metav1.GetOptions{})
	if err != nil {
		h.Fatal(err)
	}
	stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
	return stored
}

// waitForStorage waits until the API server writes CustomPods as version,
// the storage version the CRD was just given: the API server takes it up a
// moment after the CRD's update returns. probe is a CustomPod stored in the
// other version, which it rewrites as the migrator does; the API server
// writes it (a new resourceVersion) once its bytes in etcd differ from what
// it would write, i.e. once it writes version.
func waitForStorage(h *harness.H, v2 dynamic.ResourceInterface, probe, version string) {
	h.Helper()
	h.WaitFor(fmt.Sprintf("the API server to store CustomPods as %s (custompod/%s rewritten)", version, probe), 30*time.Second,
		func(ctx context.Context) (bool, string, error) {
			before, after, err := rewrite(ctx, v2, probe)
			return before != after, "resourceVersion " + before + " → " + after, err
		})
}

// rewrite sends custompod/name the request the storage version migrator
// sends: a patch that changes nothing but that must apply to the
// resourceVersion read. It returns the resourceVersion before and after.
func rewrite(ctx context.Context, v2 dynamic.ResourceInterface, name string) (before, after string, err error) {
	cp, err := v2.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", "", err
	}
	patch, err := json.Marshal(map[string]any{
		"apiVersion": "zhhnzw.mock.com/v2", "kind": "CustomPod",
		"metadata": map[string]any{"resourceVersion": cp.GetResourceVersion()},
	})
	if err != nil {
		return "", "", err
	}
	got, err := v2.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return "", "", fmt.Errorf("rewriting custompod/%s: %w", name, err)
	}
	return cp.GetResourceVersion(), got.GetResourceVersion(), nil
}

// conditionsOf says which conditions are set: "Running=True (message), ...".
func conditionsOf(conds []metav1.Condition) string {
	if len(conds) == 0 {
		return "no conditions yet"
	}
	var s []string
	for _, c := range conds {
		s = append(s, fmt.Sprintf("%s=%s (%s)", c.Type, c.Status, c.Message))
	}
	return strings.Join(s, ", ")
}

// storageMigratingOf is the CRD's StorageMigrating condition, which the
// migration sets while it runs and when it is over.
func storageMigratingOf(crd *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		if c, ok := c.(map[string]any); ok && c["type"] == "StorageMigrating" {
			return fmt.Sprintf("StorageMigrating=%v (%v)", c["status"], c["message"])
		}
	}
	return "no StorageMigrating condition"
}
