// Package rbac checks that each demo's controllers may do what their chapter
// says, and nothing more. For each module it renders the RBAC exactly as
// `make deploy` applies it (crd-demo: config/rbac/ and
// config/manager/manager.yaml; the two scaffolds: `kustomize build
// config/default`, with its namePrefix and namespace), applies only the
// objects that grant rights (no Deployment: nothing has to run), and asks the
// API server, with `kubectl auth can-i --list`, what each ServiceAccount may
// do in another namespace and in its own. Less what a ServiceAccount bound to
// nothing may do too (discovery, reviews of its own rights), the answer must
// be testdata/MODULE/SERVICEACCOUNT.txt row for row, the list the chapters
// quote: a right beyond it fails, and so does a missing one.
//
//	cd e2e && GOWORK=off go test -count=1 ./rbac -v
//
// After an intended change to a module's RBAC, -update writes the lists from
// what the API server answers; review their diff before committing it.
package rbac

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"example.com/k8s-demo/e2e/harness"
)

var update = flag.Bool("update", false, "write testdata/MODULE/SERVICEACCOUNT.txt from what the API server answers, instead of comparing")

func TestMain(m *testing.M) { harness.Main(m) }

// otherNamespace is where a right granted cluster-wide shows and one granted
// in the manager's namespace does not: any namespace but the manager's.
const otherNamespace = "default"

// A question the security review asked (finding 2: the certificate rotator
// may write its own CRD and webhook configuration, not every one), as
// `kubectl auth can-i VERB RESOURCE --as=system:serviceaccount:SA`, with SA
// as "namespace:name".
type question struct {
	sa, verb, resource, want string
}

var modules = []struct {
	name string
	// render returns what `make deploy` applies, every kind.
	render    func(h *harness.H) ([]byte, error)
	questions []question
}{
	{"crd-demo", renderCrdDemo, []question{
		{"crd-demo-system:custompod-controller", "patch", "customresourcedefinitions.apiextensions.k8s.io/custompods.zhhnzw.mock.com", "yes"},
		{"crd-demo-system:custompod-controller", "patch", "customresourcedefinitions.apiextensions.k8s.io/networks.samplecrd.k8s.io", "no"},
		{"crd-demo-system:network-controller", "patch", "customresourcedefinitions.apiextensions.k8s.io/custompods.zhhnzw.mock.com", "no"},
	}},
	{"kubebuilder-demo", kustomizeBuild("kubebuilder-demo"), []question{
		{"kubebuilder-demo-system:kubebuilder-demo-controller-manager", "update", "customresourcedefinitions.apiextensions.k8s.io/custompods.zhhnzw.mock.com", "yes"},
		{"kubebuilder-demo-system:kubebuilder-demo-controller-manager", "update", "customresourcedefinitions.apiextensions.k8s.io/networks.samplecrd.k8s.io", "no"},
		{"kubebuilder-demo-system:kubebuilder-demo-controller-manager", "patch", "customresourcedefinitions.apiextensions.k8s.io/custompods.zhhnzw.mock.com", "no"},
		{"kubebuilder-demo-system:kubebuilder-demo-controller-manager", "update", "validatingwebhookconfigurations.admissionregistration.k8s.io/any-other-webhook", "no"},
	}},
	{"operator-demo", kustomizeBuild("operator-demo"), []question{
		{"operator-demo-system:operator-demo-controller-manager", "update", "customresourcedefinitions.apiextensions.k8s.io/custompods.zhhnzw.mock.com", "yes"},
		{"operator-demo-system:operator-demo-controller-manager", "update", "customresourcedefinitions.apiextensions.k8s.io/networks.samplecrd.k8s.io", "no"},
		{"operator-demo-system:operator-demo-controller-manager", "patch", "customresourcedefinitions.apiextensions.k8s.io/custompods.zhhnzw.mock.com", "no"},
		{"operator-demo-system:operator-demo-controller-manager", "update", "validatingwebhookconfigurations.admissionregistration.k8s.io/operator-demo-validating-webhook-configuration", "yes"},
		{"operator-demo-system:operator-demo-controller-manager", "update", "validatingwebhookconfigurations.admissionregistration.k8s.io/any-other-webhook", "no"},
	}},
}

// renderCrdDemo is what crd-demo's `make deploy` applies: config/rbac/, then
// config/manager/manager.yaml (the image and backend URL it sets there touch
// no RBAC).
func renderCrdDemo(h *harness.H) ([]byte, error) {
	files, err := filepath.Glob(h.Path("crd-demo", "config", "rbac", "*.yaml"))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, f := range append(files, h.Path("crd-demo", "config", "manager", "manager.yaml")) {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		b.Write(data)
		b.WriteString("\n---\n")
	}
	return b.Bytes(), nil
}

// kustomizeBuild is what a scaffold's `make deploy` (and `make
// build-installer`, which writes dist/install.yaml) applies. Its output is not
// logged: the CRDs make it thousands of lines.
func kustomizeBuild(module string) func(h *harness.H) ([]byte, error) {
	return func(h *harness.H) ([]byte, error) {
		cmd := exec.CommandContext(h.Ctx, filepath.Join(h.Env.BinDir, "kustomize"), "build", "config/default")
		cmd.Dir = h.Path(module)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("kustomize build config/default in %s: %w\n%s", module, err, stderr.String())
		}
		return out, nil
	}
}

// grants are the kinds that grant rights, and those they need (the
// namespace, the ServiceAccount itself).
var grants = map[string]bool{"Namespace": true, "ServiceAccount": true, "Role": true, "ClusterRole": true, "RoleBinding": true, "ClusterRoleBinding": true}

// rbacOnly keeps the objects of grants, and returns them with the
// ServiceAccounts ("namespace:name") and Namespaces among them.
func rbacOnly(manifests []byte) (kept []byte, sas, namespaces []string, err error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifests)))
	var b bytes.Buffer
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, nil, err
		}
		var obj struct {
			Kind     string
			Metadata struct{ Name, Namespace string }
		}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, nil, nil, fmt.Errorf("%w in:\n%s", err, doc)
		}
		if !grants[obj.Kind] {
			continue
		}
		switch obj.Kind {
		case "ServiceAccount":
			sas = append(sas, obj.Metadata.Namespace+":"+obj.Metadata.Name)
		case "Namespace":
			namespaces = append(namespaces, obj.Metadata.Name)
		}
		b.WriteString("---\n")
		b.Write(doc)
	}
	return b.Bytes(), sas, namespaces, nil
}

func TestLeastPrivilege(t *testing.T) {
	h := harness.New(t)
	// The reference: a ServiceAccount bound to nothing. What it may do
	// (discovery, the self reviews every authenticated user may create) is
	// the cluster's, not the module's.
	h.Kubectl("create", "serviceaccount", "nobody")
	nobody := "system:serviceaccount:" + h.Namespace + ":nobody"
	baseline := map[string]map[string]row{} // by namespace

	for _, m := range modules {
		t.Run(m.name, func(t *testing.T) {
			// Commands go through the test's harness (h), which only
			// logs; a failure fails this subtest (t).
			manifests, err := m.render(h)
			if err != nil {
				t.Fatal(err)
			}
			kept, sas, namespaces, err := rbacOnly(manifests)
			if err != nil {
				t.Fatalf("%s: reading the rendered manifests: %v", m.name, err)
			}
			if len(sas) == 0 {
				t.Fatalf("%s: the rendered manifests hold no ServiceAccount", m.name)
			}
			file := filepath.Join(h.Dir, m.name+"-rbac.yaml")
			if err := os.WriteFile(file, kept, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, ns := range namespaces {
				waitNotTerminating(t, h, ns)
			}
			if _, err := h.KubectlErr("apply", "-f", file); err != nil {
				t.Fatal(err)
			}
			// Not waited for: the namespace controller takes seconds to
			// empty a namespace, and nothing after this test needs it
			// gone (the next run of this test waits, above).
			t.Cleanup(func() { _, _ = h.KubectlErr("delete", "--ignore-not-found", "--wait=false", "-f", file) })

			dir := filepath.Join("testdata", m.name)
			for _, sa := range sas {
				ns, name, _ := strings.Cut(sa, ":")
				user := "system:serviceaccount:" + sa
				path := filepath.Join(dir, name+".txt")
				var want [2]map[string]row
				if !*update {
					if want, err = readList(path, ns); err != nil {
						t.Errorf("%s: %v (go test ./rbac -update writes it from the API server's answers: check what it says)", user, err)
						continue
					}
				}
				// The API server's authorizer sees new bindings through
				// its informers, a moment after they are stored: ask
				// until the answer is the list, or until it has stayed
				// the same three times in a row (-update: twice).
				var seen [2]map[string]row
				var d string
				same := 0
				waitErr := harness.Wait(h.Ctx, "the rights of "+user+" to settle", 10*time.Second, 300*time.Millisecond, func(context.Context) (bool, string, error) {
					now, err := rights(h, user, ns, nobody, baseline)
					if err != nil {
						return false, "", err
					}
					if seen[0] != nil && diff([]string{"", ""}, seen[:], now[:]) == "" {
						same++
					} else {
						same = 0
					}
					seen = now
					if *update {
						return same >= 1, "", nil
					}
					d = diff(titles(ns), want[:], seen[:])
					return d == "" || same >= 2, "", nil
				})
				switch {
				case waitErr != nil && (seen[0] == nil || *update):
					t.Errorf("%s: %v", user, waitErr)
				case *update:
					if err := writeList(path, sa, seen[0], seen[1]); err != nil {
						t.Fatal(err)
					}
				case d != "":
					t.Errorf("%s may do other than %s says\n(-: the list has it, the API server does not grant it; +: granted, not in the list):\n%s"+
						"The rights come from %s's RBAC as make deploy applies it (%s). If the change is meant, "+
						"write the list again with go test ./rbac -run TestLeastPrivilege -update, and check its diff.",
						user, path, d, m.name, file)
				}
			}
			// A list with no ServiceAccount to check is a list the chapter
			// quotes for nothing.
			files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
			for _, f := range files {
				name := strings.TrimSuffix(filepath.Base(f), ".txt")
				if !slices.ContainsFunc(sas, func(sa string) bool { return strings.HasSuffix(sa, ":"+name) }) {
					t.Errorf("%s: %s's manifests hold no ServiceAccount %s (they hold %v)", f, m.name, name, sas)
				}
			}

			for _, q := range m.questions {
				user := "system:serviceaccount:" + q.sa
				got, err := canI(h, user, q.verb, q.resource)
				if err != nil {
					t.Error(err)
				} else if got != q.want {
					t.Errorf("kubectl auth can-i %s %s --as=%s: want %s, got %s", q.verb, q.resource, user, q.want, got)
				}
			}
		})
	}
}

// rights returns what user may do cluster-wide (what shows in
// otherNamespace) and only in ns, less what nobody may do.
func rights(h *harness.H, user, ns, nobody string, baseline map[string]map[string]row) ([2]map[string]row, error) {
	list := func(user, ns string) (map[string]row, error) {
		if user == nobody && baseline[ns] != nil {
			return baseline[ns], nil
		}
		rows, err := canIList(h, user, ns)
		if err == nil && user == nobody {
			baseline[ns] = rows
		}
		return rows, err
	}
	var out [2]map[string]row
	for i, n := range []string{otherNamespace, ns} {
		rows, err := list(user, n)
		if err != nil {
			return out, err
		}
		base, err := list(nobody, n)
		if err != nil {
			return out, err
		}
		out[i] = minus(rows, base)
	}
	out[1] = minus(out[1], out[0])
	return out, nil
}

// waitNotTerminating waits until ns is absent or active: an earlier run's
// namespace may still be going.
func waitNotTerminating(t *testing.T, h *harness.H, ns string) {
	t.Helper()
	err := harness.Wait(h.Ctx, "namespace "+ns+" to finish terminating", 2*time.Minute, 250*time.Millisecond, func(ctx context.Context) (bool, string, error) {
		n, err := h.Env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return false, "", err
		}
		return n.DeletionTimestamp == nil, "deleting since " + fmt.Sprint(n.DeletionTimestamp), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// row is a row of `kubectl auth can-i --list`: resource, non-resource URLs,
// resource names, verbs, as kubectl prints them.
type row [4]string

// key is the row with its resource names and verbs sorted: the order kubectl
// prints verbs in follows the manifests', which grants nothing.
func (r row) key() string {
	sorted := func(s string) string {
		f := strings.Fields(strings.Trim(s, "[]"))
		slices.Sort(f)
		return "[" + strings.Join(f, " ") + "]"
	}
	return strings.Join([]string{r[0], r[1], sorted(r[2]), sorted(r[3])}, " ")
}

var (
	rowRe    = regexp.MustCompile(`^\s*(\S*)\s+(\[[^\]]*\])\s+(\[[^\]]*\])\s+(\[[^\]]*\])\s*$`)
	headerRe = regexp.MustCompile(`^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs\s*$`)
)

func parseRow(line string) (row, bool) {
	m := rowRe.FindStringSubmatch(line)
	if m == nil {
		return row{}, false
	}
	return row{m[1], m[2], m[3], m[4]}, true
}

// canIList runs `kubectl auth can-i --list` as user in ns. Anything but its
// table (a warning that the list may be incomplete) is an error.
func canIList(h *harness.H, user, ns string) (map[string]row, error) {
	out, err := h.KubectlErr("auth", "can-i", "--list", "-n", ns, "--as="+user)
	if err != nil {
		return nil, err
	}
	rows := map[string]row{}
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\n")
		if strings.TrimSpace(line) == "" || headerRe.MatchString(line) {
			continue
		}
		r, ok := parseRow(line)
		if !ok {
			return nil, fmt.Errorf("kubectl auth can-i --list -n %s --as=%s: a line that is no row of its table: %q", ns, user, line)
		}
		rows[r.key()] = r
	}
	return rows, nil
}

// canI asks one question; kubectl prints yes or no, and warns on stderr that
// a cluster-scoped resource has no namespace.
func canI(h *harness.H, user, verb, resource string) (string, error) {
	out, _ := h.KubectlErr("auth", "can-i", verb, resource, "--as="+user) // exits 1 for no
	for line := range strings.Lines(out) {
		if a := strings.TrimSpace(line); a == "yes" || a == "no" {
			return a, nil
		}
	}
	return "", fmt.Errorf("kubectl auth can-i %s %s --as=%s: want yes or no, got:\n%s", verb, resource, user, out)
}

func minus(a, b map[string]row) map[string]row {
	out := map[string]row{}
	for k, r := range a {
		if _, ok := b[k]; !ok {
			out[k] = r
		}
	}
	return out
}

// titles head a list's two parts: the rights granted cluster-wide (which
// show in any namespace), and those granted only in the ServiceAccount's
// namespace.
func titles(ns string) []string { return []string{"Cluster-wide:", "Only in " + ns + ":"} }

// readList reads a list written by writeList (or by hand): the rows under
// each of titles.
func readList(path, ns string) ([2]map[string]row, error) {
	lists := [2]map[string]row{{}, {}}
	b, err := os.ReadFile(path)
	if err != nil {
		return lists, err
	}
	section := -1
	for i, line := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || strings.HasPrefix(t, "#") || t == "(nothing)" || headerRe.MatchString(t):
		case t == titles(ns)[0]:
			section = 0
		case t == titles(ns)[1]:
			section = 1
		default:
			r, ok := parseRow(line)
			if !ok || section < 0 {
				return lists, fmt.Errorf("%s:%d: want a row of kubectl auth can-i --list under %q or %q, got %q", path, i+1, titles(ns)[0], titles(ns)[1], line)
			}
			lists[section][r.key()] = r
		}
	}
	return lists, nil
}

// writeList writes what sa may do, as kubectl prints it, sorted.
func writeList(path, sa string, everywhere, own map[string]row) error {
	ns, _, _ := strings.Cut(sa, ":")
	var b bytes.Buffer
	fmt.Fprintf(&b, "# What system:serviceaccount:%s may do: kubectl auth can-i --list\n", sa)
	fmt.Fprintf(&b, "# -n %s (cluster-wide) and -n %s, less what a ServiceAccount bound to\n", otherNamespace, ns)
	fmt.Fprintf(&b, "# nothing may do too. e2e/rbac checks it against the RBAC make deploy applies.\n")
	for i, rows := range []map[string]row{everywhere, own} {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(titles(ns)[i] + "\n")
		if len(rows) == 0 {
			b.WriteString("(nothing)\n")
			continue
		}
		// kubectl's own layout (its printers.GetNewTabWriter).
		w := tabwriter.NewWriter(&b, 6, 4, 3, ' ', 0)
		fmt.Fprintln(w, "Resources\tNon-Resource URLs\tResource Names\tVerbs")
		for _, k := range sortedKeys(rows) {
			r := rows[k]
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r[0], r[1], r[2], r[3])
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func sortedKeys(m map[string]row) []string { return slices.Sorted(maps.Keys(m)) }

// diff shows, per section, the rows of want and seen, marked - where only
// want has them and + where only seen does; "" when they agree.
func diff(heads []string, want, seen []map[string]row) string {
	var b strings.Builder
	differ := false
	for i, head := range heads {
		union := map[string]row{}
		maps.Copy(union, want[i])
		maps.Copy(union, seen[i])
		b.WriteString(head + "\n")
		for _, k := range sortedKeys(union) {
			_, w := want[i][k]
			_, s := seen[i][k]
			mark := " "
			switch {
			case w && !s:
				mark, differ = "-", true
			case s && !w:
				mark, differ = "+", true
			}
			fmt.Fprintf(&b, "%s %s\n", mark, k)
		}
	}
	if !differ {
		return ""
	}
	return b.String()
}
