package harness

import (
	"os"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// KubeconfigAs returns a kubeconfig that authenticates as a new ServiceAccount
// of the test's namespace, bound to the given ClusterRoles, and nothing else.
// A controller run with it out of the cluster has exactly the permissions its
// generated RBAC grants a deployed one, so a missing permission fails the test
// instead of passing on the admin's credentials.
func (h *H) KubeconfigAs(serviceAccount string, clusterRoles ...string) string {
	h.Helper()
	ctx, c := h.Ctx, h.Env.Client
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: serviceAccount, Namespace: h.Namespace}}
	if _, err := c.CoreV1().ServiceAccounts(h.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		h.Fatalf("creating ServiceAccount %s: %v", serviceAccount, err)
	}
	for _, role := range clusterRoles {
		if _, err := c.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{}); err != nil {
			h.Fatalf("ClusterRole %s (to bind to %s): %v", role, serviceAccount, err)
		}
		// Cluster-scoped, so named after the namespace and removed by hand.
		crb := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: h.Namespace + "-" + serviceAccount + "-" + role},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: h.Namespace}},
		}
		if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
			h.Fatalf("binding ClusterRole %s to %s: %v", role, serviceAccount, err)
		}
		h.Cleanup(func() {
			_ = h.Env.Client.RbacV1().ClusterRoleBindings().Delete(h.Ctx, crb.Name, metav1.DeleteOptions{})
		})
	}
	expiry := int64(3600)
	tr, err := c.CoreV1().ServiceAccounts(h.Namespace).CreateToken(ctx, serviceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		h.Fatalf("requesting a token for %s: %v", serviceAccount, err)
	}

	admin, err := clientcmd.LoadFromFile(h.Env.Kubeconfig)
	if err != nil {
		h.Fatal(err)
	}
	cluster := admin.Clusters[admin.Contexts[admin.CurrentContext].Cluster]
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = cluster
	cfg.AuthInfos[serviceAccount] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts[serviceAccount] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: serviceAccount, Namespace: h.Namespace}
	cfg.CurrentContext = serviceAccount
	path := filepath.Join(h.Dir, "kubeconfig-"+serviceAccount)
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		h.Fatal(err)
	}
	_ = os.Chmod(path, 0o600)
	return path
}

// Can reports whether the kubeconfig's user may do verb on resource in the
// test's namespace, as `kubectl auth can-i` would.
func (h *H) Can(kubeconfig, verb, resource string) bool {
	h.Helper()
	out, err := h.Command("", filepath.Join(h.Env.BinDir, "kubectl"), "--kubeconfig", kubeconfig, "auth", "can-i", verb, resource)
	_ = err // can-i exits 1 for "no"
	return len(out) >= 3 && out[:3] == "yes"
}

// ApplyClusterRoleAs applies the ClusterRole in a module's manifest under
// another name, and returns that name. kubebuilder-demo's and operator-demo's
// config/rbac/role.yaml both name theirs manager-role, with different rules:
// under names of their own, tests of the two can run side by side.
func (h *H) ApplyClusterRoleAs(path, name string) string {
	h.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		h.Fatal(err)
	}
	// The file may hold other roles too (operator-demo's does: those of its
	// webhook certificate's rotation, which runs only in the cluster): the
	// manager's is the ClusterRole manager-role.
	var role rbacv1.ClusterRole
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var r rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict([]byte(doc), &r); err != nil {
			h.Fatalf("%s: %v", path, err)
		}
		if r.Kind == "ClusterRole" && r.Name == "manager-role" {
			role = r
		}
	}
	if role.Kind != "ClusterRole" {
		h.Fatalf("%s holds no ClusterRole manager-role", path)
	}
	role.Name = name
	roles := h.Env.Client.RbacV1().ClusterRoles()
	if old, err := roles.Get(h.Ctx, name, metav1.GetOptions{}); err == nil {
		role.ResourceVersion = old.ResourceVersion
		_, err = roles.Update(h.Ctx, &role, metav1.UpdateOptions{})
		if err != nil {
			h.Fatalf("updating ClusterRole %s from %s: %v", name, path, err)
		}
	} else if _, err := roles.Create(h.Ctx, &role, metav1.CreateOptions{}); err != nil {
		h.Fatalf("creating ClusterRole %s from %s: %v", name, path, err)
	}
	return name
}
