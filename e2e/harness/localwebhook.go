package harness

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
)

// LocalWebhook is where a kubebuilder-demo or operator-demo manager run
// beside the cluster serves its webhooks, as its `make run` sets them up
// (tools/localwebhook): a port of the test's own, so that managers of parallel
// tests do not collide, and a certificate directory in the test's artifacts.
// Both modules' `make run` point the CustomPod CRD's conversion webhook at
// that port; operator-demo's also applies a webhook configuration for the
// Vpc webhook.
type LocalWebhook struct {
	Port int
	Dir  string
	// Module is the module whose `make run` serves it.
	Module string
}

// MakeRunEnv is the environment for operator-demo's `make run` on the
// test's namespace: the webhook configuration it applies (with the test's
// admin kubeconfig, as the manager's ServiceAccount may not) matches that
// namespace only.
func (w LocalWebhook) MakeRunEnv(h *H) []string {
	return []string{"WATCH_NAMESPACE=" + h.Namespace, "WEBHOOK_PORT=" + strconv.Itoa(w.Port),
		"LOCAL_WEBHOOK_DIR=" + w.Dir, "LOCAL_WEBHOOK_KUBECONFIG=" + h.Kubeconfig}
}

// ManagerArgs are the manager binary's flags to serve there.
func (w LocalWebhook) ManagerArgs() []string {
	return []string{"--webhook-port=" + strconv.Itoa(w.Port), "--webhook-cert-path=" + w.Dir}
}

// NewLocalWebhook is NewLocalWebhookFor("operator-demo").
func (h *H) NewLocalWebhook() LocalWebhook {
	h.Helper()
	return h.NewLocalWebhookFor("operator-demo")
}

// NewLocalWebhookFor picks the port and directory for module's `make run`.
// For operator-demo it deletes, when the test ends, the webhook configuration
// `make run` (or Apply) makes for the test's namespace, with `make
// uninstall-local-webhook`: left behind, it would refuse every write it
// matches. Call it before starting the manager, so that the manager is
// stopped first (clean-ups run last-in first-out). (kubebuilder-demo's `make
// run` makes no webhook configuration; the CRD it points at the manager is
// the test's to re-point or remove.)
func (h *H) NewLocalWebhookFor(module string) LocalWebhook {
	h.Helper()
	w := LocalWebhook{Port: h.FreePort(), Dir: filepath.Join(h.Dir, "localwebhook"), Module: module}
	if module != "operator-demo" {
		return w
	}
	h.Cleanup(func() {
		if _, err := h.UninstallLocalWebhook(); err != nil {
			h.Error(err)
		}
	})
	return w
}

// UninstallLocalWebhook runs operator-demo's `make uninstall-local-webhook`
// for the test's namespace, with the test's admin kubeconfig.
func (h *H) UninstallLocalWebhook() (string, error) {
	// Not through h.Command: it runs in clean-ups, when the test's context
	// is cancelled.
	cmd := exec.Command("make", "uninstall-local-webhook")
	cmd.Dir = h.Path("operator-demo")
	cmd.Env = append(h.environ(), "WATCH_NAMESPACE="+h.Namespace, "LOCAL_WEBHOOK_KUBECONFIG="+h.Kubeconfig)
	out, err := cmd.CombinedOutput()
	h.Logf("$ make uninstall-local-webhook   (operator-demo, WATCH_NAMESPACE=%s)\n%s", h.Namespace, out)
	if err != nil {
		return string(out), fmt.Errorf("make uninstall-local-webhook: %w\n%s", err, out)
	}
	return string(out), nil
}

// Apply does what the module's `make run` does before it starts the
// manager, for a manager binary the test runs itself: tools/localwebhook,
// built once, with the test's admin kubeconfig.
func (w LocalWebhook) Apply(h *H) {
	h.Helper()
	bin := h.Build("tools", "./localwebhook", "localwebhook")
	if _, err := h.Command(h.Path(w.Module), bin, "-name-prefix", w.Module+"-", "-port", strconv.Itoa(w.Port), "-dir", w.Dir,
		"-namespace", h.Namespace, "-kubeconfig", h.Kubeconfig); err != nil {
		h.Fatal(err)
	}
}
