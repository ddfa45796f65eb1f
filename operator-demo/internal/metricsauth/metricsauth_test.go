/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package metricsauth

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const (
	metricsPath = "/metrics"
	readerRole  = "metrics-reader"
)

// TestOnlyAnAllowedTokenGetsTheMetrics puts the filter in front of a handler,
// with a real API server (envtest, RBAC on) reviewing the tokens: no token and
// a bad one are 401, a ServiceAccount without the right 403, and one bound to
// a ClusterRole like the scaffold's metrics-reader gets /metrics, and only
// /metrics, without its token being passed on.
func TestOnlyAnAllowedTokenGetsTheMetrics(t *testing.T) {
	dir := os.Getenv("KUBEBUILDER_ASSETS") // `make test` sets it
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "bin") // the monorepo's pinned binaries
	}
	env := &envtest.Environment{BinaryAssetsDirectory: dir}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest (kube-apiserver and etcd from %s): %v", dir, err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	// Two ServiceAccounts: "reader", bound to a ClusterRole that may get
	// /metrics, as config/rbac/metrics_reader_role.yaml; "other", bound to
	// nothing.
	ns := "metrics"
	must(t, create(ctx, cs.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	for _, sa := range []string{"reader", "other"} {
		must(t, create(ctx, cs.CoreV1().ServiceAccounts(ns), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}))
	}
	must(t, create(ctx, cs.RbacV1().ClusterRoles(), &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: readerRole},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{metricsPath}, Verbs: []string{"get"}}},
	}))
	must(t, create(ctx, cs.RbacV1().ClusterRoleBindings(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: readerRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: readerRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "reader"}},
	}))
	token := func(sa string) string {
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("a token for %s: %v", sa, err)
		}
		return tr.Status.Token
	}
	reader, other := token("reader"), token("other")

	// The filter as the manager builds it: with the manager's own config
	// (here envtest's admin, which may create the reviews).
	httpClient, err := rest.HTTPClientFor(cfg)
	must(t, err)
	reviews := &counter{next: httpClient.Transport}
	httpClient.Transport = reviews
	filter, err := Filter(cfg, httpClient)
	must(t, err)
	var passedOn []string
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		passedOn = append(passedOn, r.Header.Get("Authorization"))
		_, _ = io.WriteString(w, "controller_runtime_reconcile_total 1\n")
	})
	h, err := filter(ctrl.Log, metrics)
	must(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	// reviews is how many TokenReviews and SubjectAccessReviews the API
	// server has been sent after each request: none without a bearer token,
	// and none for a question answered within its TTL.
	for _, tc := range []struct {
		name, path, authorization string
		want, reviews             int
	}{
		{"no token", metricsPath, "", http.StatusUnauthorized, 0},
		{"not a bearer token", metricsPath, "Basic " + reader, http.StatusUnauthorized, 0},
		{"a token the API server does not know", metricsPath, "Bearer not-a-token", http.StatusUnauthorized, 1},
		{"the same unknown token again", metricsPath, "Bearer not-a-token", http.StatusUnauthorized, 1},
		{"a ServiceAccount without the right", metricsPath, "Bearer " + other, http.StatusForbidden, 3},
		{"the metrics reader", metricsPath, "Bearer " + reader, http.StatusOK, 5},
		{"the metrics reader again", metricsPath, "Bearer " + reader, http.StatusOK, 5},
		{"the metrics reader, another path", "/debug/pprof/", "Bearer " + reader, http.StatusForbidden, 6},
	} {
		req, err := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
		must(t, err)
		if tc.authorization != "" {
			req.Header.Set("Authorization", tc.authorization)
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: GET %s: status %d, want %d (%s)", tc.name, tc.path, resp.StatusCode, tc.want, strings.TrimSpace(string(body)))
		}
		if tc.want == http.StatusOK && !strings.Contains(string(body), "controller_runtime_reconcile_total") {
			t.Errorf("%s: the body is not the metrics: %q", tc.name, body)
		}
		if n := reviews.n.Load(); n != int64(tc.reviews) {
			t.Errorf("%s: %d reviews sent to the API server so far, want %d", tc.name, n, tc.reviews)
		}
	}
	if len(passedOn) != 2 || passedOn[0] != "" || passedOn[1] != "" {
		t.Errorf("the metrics handler was called with these Authorization headers: %q; want two calls, without the token", passedOn)
	}
}

// counter counts the requests that create a TokenReview or a
// SubjectAccessReview.
type counter struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (c *counter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && (strings.HasSuffix(req.URL.Path, "/tokenreviews") || strings.HasSuffix(req.URL.Path, "/subjectaccessreviews")) {
		c.n.Add(1)
	}
	return c.next.RoundTrip(req)
}

type creator[T any] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
}

func create[T any](ctx context.Context, c creator[T], obj T) error {
	_, err := c.Create(ctx, obj, metav1.CreateOptions{})
	return err
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
