package conversionwebhook_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"example.com/k8s-demo/crd-demo/internal/testenv"
	zhhnzwv1 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v1"
	zhhnzwv2 "example.com/k8s-demo/crd-demo/pkg/apis/zhhnzw/v2"
	clientset "example.com/k8s-demo/crd-demo/pkg/client/clientset/versioned"
	"example.com/k8s-demo/crd-demo/pkg/conversionwebhook"
)

// apiServer runs etcd and kube-apiserver with no CRD installed: the test
// installs CustomPod's itself, first as it was before v2.
var apiServer = testenv.New("")

func TestMain(m *testing.M) {
	code := m.Run()
	apiServer.Stop()
	applyServer.Stop()
	os.Exit(code)
}

// TestUpgradeToV2 follows CustomPod's upgrade on a real API server, the
// conversion webhook served from this process on 127.0.0.1:
//
//  1. the CRD as it was (v1 only, stored as v1), and CustomPods written then;
//  2. the CRD of this release (v1 and v2, stored as v2, conversion by the
//     webhook): every version reads every object, and a v2 template survives
//     a write through v1;
//  3. the webhook stopped: only the version an object is stored in can be
//     read;
//  4. the storage migration: every object rewritten as v2, then v1 removed
//     from the CRD's status.storedVersions, after which v1 could be dropped
//     from the CRD.
func TestUpgradeToV2(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cfg := apiServer.Config(t)
	crds := apiextensionsclient.NewForConfigOrDie(cfg).ApiextensionsV1().CustomResourceDefinitions()
	custom := clientset.NewForConfigOrDie(cfg)
	ns, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "upgrade-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v1s, v2s := custom.ZhhnzwV1().CustomPods(ns.Name), custom.ZhhnzwV2().CustomPods(ns.Name)

	// 1. The CRD before v2: this release's, less v2 and the webhook.
	newCRD := readCRD(t)
	oldCRD := newCRD.DeepCopy()
	oldCRD.Spec.Conversion = nil // strategy None
	oldCRD.Spec.Versions = slices.DeleteFunc(oldCRD.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name != "v1" })
	oldCRD.Spec.Versions[0].Storage = true
	if _, err := crds.Create(ctx, oldCRD, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the v1 CRD to be served", func() error {
		_, err := v1s.List(ctx, metav1.ListOptions{})
		return err
	})
	for _, name := range []string{"old-a", "old-b"} {
		if _, err := v1s.Create(ctx, &zhhnzwv1.CustomPod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: zhhnzwv1.CustomPodSpec{Replicas: ptr.To[int32](2)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expectStoredVersions(t, crds, "v1")

	// 2. This release's CRD, and the webhook.
	crd, err := crds.Get(ctx, conversionwebhook.CRDName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crd.Spec = newCRD.Spec
	if _, err := crds.Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stopWebhook, err := testenv.StartConversionWebhook(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { stopWebhook() }()
	// The API server stores in v2 from now on, and says so.
	expectStoredVersions(t, crds, "v1", "v2")

	// A v1 object, stored as v1 before the upgrade, read as v2: the busybox
	// it always ran.
	oldA, err := v2s.Get(ctx, "old-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if oldA.APIVersion != "" || *oldA.Spec.Replicas != 2 || !equalTemplates(oldA.Spec.Template, zhhnzwv1.DefaultTemplate()) {
		t.Errorf("old-a as v2: %+v, want replicas 2 and the default template", oldA.Spec)
	}
	// A v1 object written now, stored as v2: the same.
	if _, err := v1s.Create(ctx, &zhhnzwv1.CustomPod{ObjectMeta: metav1.ObjectMeta{Name: "new-v1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	newV1, err := v2s.Get(ctx, "new-v1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *newV1.Spec.Replicas != 1 || !equalTemplates(newV1.Spec.Template, zhhnzwv1.DefaultTemplate()) || len(newV1.Annotations) != 0 {
		t.Errorf("new-v1 as v2: %+v %v, want the default replicas and template, no annotations", newV1.Spec, newV1.Annotations)
	}

	// A v2 object with its own template, read as v1: the annotation.
	nginx := zhhnzwv2.CustomPodTemplate{Image: "nginx:1.27", Command: []string{"nginx", "-g", "daemon off;"}}
	if _, err := v2s.Create(ctx, &zhhnzwv2.CustomPod{ObjectMeta: metav1.ObjectMeta{Name: "nginx"},
		Spec: zhhnzwv2.CustomPodSpec{Template: nginx}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	asV1, err := v1s.Get(ctx, "nginx", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const annotation = `{"image":"nginx:1.27","command":["nginx","-g","daemon off;"]}`
	if got := asV1.Annotations[zhhnzwv1.TemplateAnnotation]; got != annotation {
		t.Errorf("nginx as v1: annotation %s = %q, want %q", zhhnzwv1.TemplateAnnotation, got, annotation)
	}
	// Written back through v1 (a client that knows nothing of templates
	// adds a label): the template is still there in v2.
	asV1.Labels = map[string]string{"touched-by": "v1-client"}
	if _, err := v1s.Update(ctx, asV1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	asV2, err := v2s.Get(ctx, "nginx", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !equalTemplates(asV2.Spec.Template, nginx) || asV2.Labels["touched-by"] != "v1-client" || len(asV2.Annotations) != 0 {
		t.Errorf("nginx as v2 after the v1 update: template %+v, labels %v, annotations %v; want the nginx template, the label, no annotation",
			asV2.Spec.Template, asV2.Labels, asV2.Annotations)
	}

	// 3. The webhook stopped: an object reads only in the version it is
	// stored in, and the API server says why.
	stopWebhook()
	var convErr error
	waitFor(t, "reading v1 to fail", func() error {
		_, convErr = v1s.Get(ctx, "nginx", metav1.GetOptions{})
		if convErr == nil {
			return errStillWorks
		}
		return nil
	})
	t.Logf("nginx as v1, no webhook: %v", convErr)
	for _, want := range []string{"conversion webhook for zhhnzw.mock.com/v2, Kind=CustomPod failed", "/convert", "connection refused"} {
		if !strings.Contains(convErr.Error(), want) {
			t.Errorf("error %q does not mention %q", convErr, want)
		}
	}
	if _, err := v2s.Get(ctx, "nginx", metav1.GetOptions{}); err != nil {
		t.Errorf("nginx as v2, stored as v2: %v", err)
	}
	_, err = v2s.Get(ctx, "old-a", metav1.GetOptions{})
	t.Logf("old-a (stored as v1) as v2, no webhook: %v", err)
	if err == nil || !strings.Contains(err.Error(), "conversion webhook for zhhnzw.mock.com/v1, Kind=CustomPod failed") {
		t.Errorf("old-a as v2 with no webhook: %v, want the API server's conversion error", err)
	}

	// 4. The storage migration. v1 cannot leave the CRD while objects may
	// be stored in it: the API server refuses.
	dropV1 := func() error {
		crd, err := crds.Get(ctx, conversionwebhook.CRDName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		crd.Spec.Versions = slices.DeleteFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == "v1" })
		// A dry run: v1 stays served for the rest of the tutorial.
		_, err = crds.Update(ctx, crd, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	err = dropV1()
	t.Logf("dropping v1 before the migration: %v", err)
	if err == nil || !strings.Contains(err.Error(), `status.storedVersions[0]: Invalid value: "v1": missing from spec.versions`) {
		t.Errorf("dropping v1 while it is in storedVersions: %v, want it refused", err)
	}

	// Rewrite every object in the storage version, as
	// kube-storage-version-migrator does: an update that changes nothing.
	// The API server still writes an object stored as v1, since the bytes in
	// etcd (v1) differ from the new ones (v2): it gets a new
	// resourceVersion. An object already stored as v2 is left as it is.
	// Reading the v1 ones needs the webhook again. (The webhook's log shows
	// conversions to v1 during these v2 updates too: managedFields records
	// each manager's fields in the version it wrote, and the API server
	// converts the object to v1 to update the entries of v1 writers.)
	if stopWebhook, err = testenv.StartConversionWebhook(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	list, err := v2s.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range list.Items {
		updated, err := v2s.Update(ctx, &cp, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("migrating %s: %v", cp.Name, err)
		}
		rewritten := updated.ResourceVersion != cp.ResourceVersion
		t.Logf("%s: resourceVersion %s → %s", cp.Name, cp.ResourceVersion, updated.ResourceVersion)
		if storedAsV1 := cp.Name == "old-a" || cp.Name == "old-b"; storedAsV1 != rewritten {
			t.Errorf("%s: stored as v1 %v, rewritten %v", cp.Name, storedAsV1, rewritten)
		}
	}
	// Then no object is stored as v1 any more: say so in the CRD's status,
	// through its status subresource.
	crd, err = crds.Get(ctx, conversionwebhook.CRDName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crd.Status.StoredVersions = []string{"v2"}
	if _, err := crds.UpdateStatus(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectStoredVersions(t, crds, "v2")
	// And now v1 could go.
	if err := dropV1(); err != nil {
		t.Errorf("dropping v1 after the migration: %v", err)
	}
	// Still served until then, and converted.
	if got, err := v1s.Get(ctx, "old-a", metav1.GetOptions{}); err != nil || *got.Spec.Replicas != 2 || len(got.Annotations) != 0 {
		t.Errorf("old-a as v1 after the migration: %v, %v", got, err)
	}
}

var errStillWorks = &stillWorks{}

type stillWorks struct{}

func (*stillWorks) Error() string { return "still works" }

// readCRD reads this release's CustomPod CRD.
func readCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile("../../crd/custompod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatal(err)
	}
	return &crd
}

func expectStoredVersions(t *testing.T, crds interface {
	Get(context.Context, string, metav1.GetOptions) (*apiextensionsv1.CustomResourceDefinition, error)
}, want ...string) {
	t.Helper()
	var got []string
	waitFor(t, "status.storedVersions "+strings.Join(want, ","), func() error {
		crd, err := crds.Get(context.Background(), conversionwebhook.CRDName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got = crd.Status.StoredVersions
		if !slices.Equal(got, want) {
			return errStillWorks
		}
		return nil
	})
	t.Logf("status.storedVersions: %v", got)
}

// waitFor polls f until it returns nil, for up to 30 seconds.
func waitFor(t *testing.T, what string, f func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		last = f()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s: %v", what, last)
	}
}

func equalTemplates(a, b zhhnzwv2.CustomPodTemplate) bool {
	return a.Image == b.Image && slices.Equal(a.Command, b.Command)
}
