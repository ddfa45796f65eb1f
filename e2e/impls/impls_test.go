package impls

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"example.com/k8s-demo/e2e/cluster"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

func TestArgs(t *testing.T) {
	all := Settings{Namespace: "ns", Workers: 4, QPS: -1, Burst: 200, LogLevel: Info, LeaderElection: "le"}
	for _, tc := range []struct {
		im   *Impl
		s    Settings
		want []string
	}{
		{&ClientGo, Settings{}, nil},
		{&ClientGo, Settings{Namespace: "ns", LogLevel: Debug}, []string{"--namespace=ns", "-v=2"}},
		{&ClientGo, all, []string{"--namespace=ns", "--workers=4", "--kube-api-qps=-1", "--kube-api-burst=200", "-v=0",
			"--leader-elect", "--leader-election-namespace=le"}},
		{&Kubebuilder, Settings{}, []string{"--health-probe-bind-address=0", "--metrics-bind-address=0"}},
		{&OperatorSDK, all, []string{"--health-probe-bind-address=0", "--metrics-bind-address=0", "--namespace=ns",
			"--max-concurrent-reconciles=4", "--kube-api-qps=-1", "--kube-api-burst=200", "--zap-log-level=info",
			"--leader-elect", "--leader-election-namespace=le"}},
	} {
		if got := tc.im.Args(tc.s); !slices.Equal(got, tc.want) {
			t.Errorf("%s.Args(%+v) = %q, want %q", tc.im.Name, tc.s, got, tc.want)
		}
	}
}

// TestTableMatchesTheModules reads each module's Go source: the main
// package is there, and so are the flags Args passes (but the loggers',
// which klog and controller-runtime define) and the Lease's name. A flag
// renamed in a module fails here, not minutes into an e2e run.
func TestTableMatchesTheModules(t *testing.T) {
	wd, _ := os.Getwd()
	root, err := cluster.FindRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range []*Impl{&ClientGo, &Kubebuilder, &OperatorSDK} {
		dir := filepath.Join(root, im.Dir)
		if _, err := os.Stat(filepath.Join(dir, im.Pkg)); err != nil {
			t.Errorf("%s: %v", im.Name, err)
		}
		var src strings.Builder
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && path != dir && (d.Name() == "bin" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			src.Write(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		args := im.Args(Settings{Namespace: "ns", Workers: 1, QPS: 1, Burst: 1, LeaderElection: "le"})
		for _, a := range args {
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !strings.Contains(src.String(), `"`+name+`"`) {
				t.Errorf("%s: Args passes %s, and no Go file of %s names the flag %q", im.Name, a, im.Dir, name)
			}
		}
		if !strings.Contains(src.String(), `"`+im.Lease+`"`) {
			t.Errorf("%s: no Go file of %s names the Lease %q", im.Name, im.Dir, im.Lease)
		}
	}
}

// TestManagersRunWithTheirDeploymentsGOGC: the scaffolds' managers run here
// (the bench, the e2e suites) with the GOGC their Deployment sets, so that
// what the bench measures is what runs in a cluster.
func TestManagersRunWithTheirDeploymentsGOGC(t *testing.T) {
	wd, _ := os.Getwd()
	root, err := cluster.FindRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range []*Impl{&Kubebuilder, &OperatorSDK} {
		path := filepath.Join(root, im.Dir, "config", "manager", "manager.yaml")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		deployment := ""
		for _, doc := range strings.Split(string(b), "\n---\n") {
			if strings.Contains(doc, "kind: Deployment") {
				deployment = doc
			}
		}
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(deployment), &d); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		want := ""
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, e := range c.Env {
				if c.Name == "manager" && e.Name == "GOGC" {
					want = "GOGC=" + e.Value
				}
			}
		}
		if want == "" {
			t.Errorf("%s: the manager container sets no GOGC", path)
		} else if !slices.Contains(im.Env, want) {
			t.Errorf("%s: the manager runs here with %q, and its Deployment (%s) with %s", im.Name, im.Env, path, want)
		}
	}
}
