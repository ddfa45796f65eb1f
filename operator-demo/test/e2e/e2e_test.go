//go:build e2e
// +build e2e

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

package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/k8s-demo/operator-demo/test/utils"
)

// namespace where the project is deployed in
const namespace = "operator-demo-system"

// serviceAccountName created for the project
const serviceAccountName = "operator-demo-controller-manager"

// metricsServiceName is the name of the metrics service of the project
const metricsServiceName = "operator-demo-controller-manager-metrics-service"

// metricsRoleBindingName is the name of the RBAC that will be created to allow get the metrics data
const metricsRoleBindingName = "operator-demo-metrics-binding"

// webhookServiceName is the name of the webhook service of the project
const webhookServiceName = "operator-demo-webhook-service"

// samplesNamespace is where the CustomPod samples are applied.
const samplesNamespace = "operator-demo-samples"

// probeNamespace lacks the label config/network-policy asks of the
// namespaces it lets read the metrics: a pod there tries the manager's ports.
const probeNamespace = "operator-demo-np-probe"

// customPodLabel is the label the controller puts on the pods of a CustomPod.
const customPodLabel = "zhhnzw.mock.com/custompod"

var _ = Describe("Manager", Ordered, func() {
	var controllerPodName string

	// Before running the tests, set up the environment by creating the namespace,
	// enforce the restricted security policy to the namespace, installing CRDs,
	// and deploying the controller.
	BeforeAll(func() {
		By("creating manager namespace")
		cmd := exec.Command("kubectl", "create", "ns", namespace)
		_, err := utils.Run(cmd)
		Expect(err).NotTo(HaveOccurred(), "Failed to create namespace")

		By("labeling the namespace to enforce the restricted security policy")
		cmd = exec.Command("kubectl", "label", "--overwrite", "ns", namespace,
			"pod-security.kubernetes.io/enforce=restricted")
		_, err = utils.Run(cmd)
		Expect(err).NotTo(HaveOccurred(), "Failed to label namespace with restricted policy")

		// config/network-policy (on in config/default) lets only pods of
		// namespaces labelled metrics=enabled read the metrics: curl-metrics
		// below runs in this one.
		By("labeling the namespace to let its pods read the metrics")
		cmd = exec.Command("kubectl", "label", "--overwrite", "ns", namespace, "metrics=enabled")
		_, err = utils.Run(cmd)
		Expect(err).NotTo(HaveOccurred(), "Failed to label namespace with metrics=enabled")

		By("installing CRDs")
		cmd = exec.Command("make", "install")
		_, err = utils.Run(cmd)
		Expect(err).NotTo(HaveOccurred(), "Failed to install CRDs")

		By("deploying the controller-manager")
		cmd = exec.Command("make", "deploy", fmt.Sprintf("IMG=%s", managerImage))
		_, err = utils.Run(cmd)
		Expect(err).NotTo(HaveOccurred(), "Failed to deploy the controller-manager")
	})

	// After all tests have been executed, clean up by undeploying the controller, uninstalling CRDs,
	// and deleting the namespace.
	AfterAll(func() {
		By("cleaning up the curl pod for metrics")
		cmd := exec.Command("kubectl", "delete", "pod", "curl-metrics", "-n", namespace)
		_, _ = utils.Run(cmd)

		By("cleaning up the metrics ClusterRoleBinding")
		cmd = exec.Command("kubectl", "delete", "clusterrolebinding", metricsRoleBindingName, "--ignore-not-found")
		_, _ = utils.Run(cmd)

		// Not awaited: their pods (sleepers: the Vpc's gateways, curl-probe)
		// take their 30s grace period to stop, and nothing below needs them gone.
		By("removing the samples and probe namespaces")
		cmd = exec.Command("kubectl", "delete", "ns", samplesNamespace, probeNamespace, "--ignore-not-found", "--wait=false")
		_, _ = utils.Run(cmd)

		By("undeploying the controller-manager")
		cmd = exec.Command("make", "undeploy")
		_, _ = utils.Run(cmd)

		By("uninstalling CRDs")
		cmd = exec.Command("make", "uninstall")
		_, _ = utils.Run(cmd)

		By("removing manager namespace")
		cmd = exec.Command("kubectl", "delete", "ns", namespace)
		_, _ = utils.Run(cmd)
	})

	// After each test, check for failures and collect logs, events,
	// and pod descriptions for debugging.
	AfterEach(func() {
		specReport := CurrentSpecReport()
		if specReport.Failed() {
			By("Fetching controller manager pod logs")
			cmd := exec.Command("kubectl", "logs", controllerPodName, "-n", namespace)
			controllerLogs, err := utils.Run(cmd)
			if err == nil {
				_, _ = fmt.Fprintf(GinkgoWriter, "Controller logs:\n %s", controllerLogs)
			} else {
				_, _ = fmt.Fprintf(GinkgoWriter, "Failed to get Controller logs: %s", err)
			}

			By("Fetching Kubernetes events")
			cmd = exec.Command("kubectl", "get", "events", "-n", namespace, "--sort-by=.lastTimestamp")
			eventsOutput, err := utils.Run(cmd)
			if err == nil {
				_, _ = fmt.Fprintf(GinkgoWriter, "Kubernetes events:\n%s", eventsOutput)
			} else {
				_, _ = fmt.Fprintf(GinkgoWriter, "Failed to get Kubernetes events: %s", err)
			}

			By("Fetching curl-metrics logs")
			cmd = exec.Command("kubectl", "logs", "curl-metrics", "-n", namespace)
			metricsOutput, err := utils.Run(cmd)
			if err == nil {
				_, _ = fmt.Fprintf(GinkgoWriter, "Metrics logs:\n %s", metricsOutput)
			} else {
				_, _ = fmt.Fprintf(GinkgoWriter, "Failed to get curl-metrics logs: %s", err)
			}

			By("Fetching controller manager pod description")
			cmd = exec.Command("kubectl", "describe", "pod", controllerPodName, "-n", namespace)
			podDescription, err := utils.Run(cmd)
			if err == nil {
				fmt.Println("Pod description:\n", podDescription)
			} else {
				fmt.Println("Failed to describe controller pod")
			}
		}
	})

	SetDefaultEventuallyTimeout(2 * time.Minute)
	SetDefaultEventuallyPollingInterval(time.Second)

	Context("Manager", func() {
		It("should run successfully", func() {
			By("validating that the controller-manager pod is running as expected")
			verifyControllerUp := func(g Gomega) {
				By("getting the name of the controller-manager pod")
				cmd := exec.Command("kubectl", "get",
					"pods", "-l", "control-plane=controller-manager",
					"-o", "go-template={{ range .items }}"+
						"{{ if not .metadata.deletionTimestamp }}"+
						"{{ .metadata.name }}"+
						"{{ \"\\n\" }}{{ end }}{{ end }}",
					"-n", namespace,
				)

				podOutput, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred(), "Failed to retrieve controller-manager pod information")
				podNames := utils.GetNonEmptyLines(podOutput)
				g.Expect(podNames).To(HaveLen(1), "expected 1 controller pod running")
				controllerPodName = podNames[0]
				g.Expect(controllerPodName).To(ContainSubstring("controller-manager"))

				By("validating the pod's status")
				cmd = exec.Command("kubectl", "get",
					"pods", controllerPodName, "-o", "jsonpath={.status.phase}",
					"-n", namespace,
				)
				output, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(output).To(Equal("Running"), "Incorrect controller-manager pod status")
			}
			Eventually(verifyControllerUp).Should(Succeed())
		})

		It("should ensure the metrics endpoint is serving metrics", func() {
			By("creating a ClusterRoleBinding for the service account to allow access to metrics")
			cmd := exec.Command("kubectl", "create", "clusterrolebinding", metricsRoleBindingName,
				"--clusterrole=operator-demo-metrics-reader",
				fmt.Sprintf("--serviceaccount=%s:%s", namespace, serviceAccountName),
			)
			_, err := utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred(), "Failed to create ClusterRoleBinding")

			By("validating that the metrics service is available")
			cmd = exec.Command("kubectl", "get", "service", metricsServiceName, "-n", namespace)
			_, err = utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred(), "Metrics service should exist")

			By("getting the service account token")
			token, err := serviceAccountToken()
			Expect(err).NotTo(HaveOccurred())
			Expect(token).NotTo(BeEmpty())

			By("ensuring the controller pod is ready")
			verifyControllerPodReady := func(g Gomega) {
				cmd := exec.Command("kubectl", "get", "pod", controllerPodName, "-n", namespace,
					"-o", "jsonpath={.status.conditions[?(@.type=='Ready')].status}")
				output, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(output).To(Equal("True"), "Controller pod not ready")
			}
			Eventually(verifyControllerPodReady, 3*time.Minute, time.Second).Should(Succeed())

			By("verifying that the controller manager is serving the metrics server")
			verifyMetricsServerStarted := func(g Gomega) {
				cmd := exec.Command("kubectl", "logs", controllerPodName, "-n", namespace)
				output, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(output).To(ContainSubstring("Serving metrics server"),
					"Metrics server not yet started")
			}
			Eventually(verifyMetricsServerStarted, 3*time.Minute, time.Second).Should(Succeed())

			// +kubebuilder:scaffold:e2e-metrics-webhooks-readiness

			By("creating the curl-metrics pod to access the metrics endpoint")
			cmd = exec.Command("kubectl", "run", "curl-metrics", "--restart=Never",
				"--namespace", namespace,
				"--image=curlimages/curl:latest",
				"--overrides",
				fmt.Sprintf(`{
					"spec": {
						"containers": [{
							"name": "curl",
							"image": "curlimages/curl:latest",
							"command": ["/bin/sh", "-c"],
							"args": [
								"for i in $(seq 1 30); do curl -v -k -H 'Authorization: Bearer %s' https://%s.%s.svc.cluster.local:8443/metrics && exit 0 || sleep 2; done; exit 1"
							],
							"securityContext": {
								"readOnlyRootFilesystem": true,
								"allowPrivilegeEscalation": false,
								"capabilities": {
									"drop": ["ALL"]
								},
								"runAsNonRoot": true,
								"runAsUser": 1000,
								"seccompProfile": {
									"type": "RuntimeDefault"
								}
							}
						}],
						"serviceAccountName": "%s"
					}
				}`, token, metricsServiceName, namespace, serviceAccountName))
			_, err = utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred(), "Failed to create curl-metrics pod")

			By("waiting for the curl-metrics pod to complete.")
			verifyCurlUp := func(g Gomega) {
				cmd := exec.Command("kubectl", "get", "pods", "curl-metrics",
					"-o", "jsonpath={.status.phase}",
					"-n", namespace)
				output, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(output).To(Equal("Succeeded"), "curl pod in wrong status")
			}
			Eventually(verifyCurlUp, 5*time.Minute).Should(Succeed())

			By("getting the metrics by checking curl-metrics logs")
			verifyMetricsAvailable := func(g Gomega) {
				metricsOutput, err := getMetricsOutput()
				g.Expect(err).NotTo(HaveOccurred(), "Failed to retrieve logs from curl pod")
				g.Expect(metricsOutput).NotTo(BeEmpty())
				g.Expect(metricsOutput).To(ContainSubstring("< HTTP/1.1 200 OK"))
			}
			Eventually(verifyMetricsAvailable, 2*time.Minute).Should(Succeed())
		})

		// +kubebuilder:scaffold:e2e-webhooks-checks

		It("should scale the sample CustomPod 1 -> 3 -> 1 and replace a deleted pod", func() {
			By("applying the sample CustomPod")
			cmd := exec.Command("kubectl", "create", "ns", samplesNamespace)
			_, err := utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred())
			// The v1 sample: the API server stores it as v2 through the
			// manager's conversion webhook, which serves once the manager's
			// certificate rotation has written its CA into the CRD: until
			// then the apply fails.
			Eventually(func(g Gomega) {
				cmd := exec.Command("kubectl", "apply", "-n", samplesNamespace,
					"-f", filepath.Join("config", "samples", "zhhnzw_v1_custompod.yaml"))
				_, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred(), "Failed to apply the sample")
			}, 2*time.Minute, time.Second).Should(Succeed())

			expectPods(1)

			By("reading it as v1: the API server converts the stored v2 through the webhook")
			cmd = exec.Command("kubectl", "get", "-n", samplesNamespace, "custompods.v1.zhhnzw.mock.com/custompod-sample",
				"-o", "jsonpath={.apiVersion} {.spec.replicas}")
			output, err := utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred())
			Expect(output).To(Equal("zhhnzw.mock.com/v1 1"))

			By("scaling to 3 with kubectl scale")
			cmd = exec.Command("kubectl", "scale", "-n", samplesNamespace, "custompod/custompod-sample", "--replicas=3")
			_, err = utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred())
			pods := expectPods(3)

			By("deleting a pod and waiting for its replacement")
			// Pod i of a CustomPod is <name>-<i>: the replacement has the
			// deleted pod's name, and a UID of its own.
			podUID := func(g Gomega) string {
				cmd := exec.Command("kubectl", "get", "pod", "-n", samplesNamespace, pods[0],
					"-o", "go-template={{ if not .metadata.deletionTimestamp }}{{ .metadata.uid }}{{ end }}")
				uid, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred())
				return uid
			}
			oldUID := podUID(Default)
			Expect(oldUID).NotTo(BeEmpty())
			cmd = exec.Command("kubectl", "delete", "pod", "-n", samplesNamespace, pods[0], "--wait=false")
			_, err = utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred())
			Eventually(func(g Gomega) {
				g.Expect(listPods(g)).To(HaveLen(3))
				g.Expect(podUID(g)).To(And(Not(BeEmpty()), Not(Equal(oldUID))))
			}).Should(Succeed())

			By("scaling back to 1")
			cmd = exec.Command("kubectl", "scale", "-n", samplesNamespace, "custompod/custompod-sample", "--replicas=1")
			_, err = utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred())
			expectPods(1)

			By("deleting the CustomPod: the garbage collector deletes its pods")
			cmd = exec.Command("kubectl", "delete", "-n", samplesNamespace, "custompod/custompod-sample")
			_, err = utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred())
			expectPods(0)
		})

		It("should admit a Vpc and refuse one that overlaps it, through the validating webhook", func() {
			// failurePolicy=Fail: were the webhook out of the API server's
			// reach, both would fail ("failed calling webhook"). The refusal
			// is the webhook's own (VpcValidator): the schema cannot see
			// other Vpcs.
			vpc := func(name, cidr string) *exec.Cmd {
				cmd := exec.Command("kubectl", "apply", "-n", samplesNamespace, "-f", "-")
				cmd.Stdin = strings.NewReader(fmt.Sprintf(`apiVersion: network.mock.com/v1
kind: Vpc
metadata:
  name: %s
spec:
  vpcname: %s
  cidrblock: %s
  subnetnum: 2
`, name, name, cidr))
				return cmd
			}
			By("creating a Vpc")
			_, err := utils.Run(vpc("vpc-a", "10.0.0.0/16"))
			Expect(err).NotTo(HaveOccurred())
			By("creating a Vpc that overlaps it")
			output, err := utils.Run(vpc("vpc-b", "10.0.128.0/17"))
			Expect(err).To(HaveOccurred())
			Expect(output).To(ContainSubstring(`overlaps 10.0.0.0/16, the cidrblock of Vpc "vpc-a"`))

			cmd := exec.Command("kubectl", "delete", "-n", samplesNamespace, "vpc/vpc-a")
			_, err = utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred())
		})

		// What makes the network policies' test able to fail: with no
		// enforcer in the cluster (a CNI that ignores NetworkPolicies), every
		// port below connects.
		It("should refuse, by its network policies, pods the policies do not let in", func() {
			By("starting a curl pod in a namespace without the metrics=enabled label")
			cmd := exec.Command("kubectl", "create", "ns", probeNamespace)
			_, err := utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred())
			cmd = exec.Command("kubectl", "run", "curl-probe", "--restart=Never",
				"--namespace", probeNamespace,
				"--image=curlimages/curl:latest",
				"--overrides", `{
					"spec": {
						"containers": [{
							"name": "curl",
							"image": "curlimages/curl:latest",
							"command": ["sleep", "600"],
							"securityContext": {
								"readOnlyRootFilesystem": true,
								"allowPrivilegeEscalation": false,
								"capabilities": {
									"drop": ["ALL"]
								},
								"runAsNonRoot": true,
								"runAsUser": 1000,
								"seccompProfile": {
									"type": "RuntimeDefault"
								}
							}
						}]
					}
				}`)
			_, err = utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred())
			cmd = exec.Command("kubectl", "wait", "-n", probeNamespace, "pod/curl-probe",
				"--for=condition=Ready", "--timeout=2m")
			_, err = utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred())

			cmd = exec.Command("kubectl", "get", "pod", controllerPodName, "-n", namespace,
				"-o", "jsonpath={.status.podIP}")
			podIP, err := utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred())
			Expect(podIP).NotTo(BeEmpty())
			webhookURL := fmt.Sprintf("https://%s.%s.svc:443/", webhookServiceName, namespace)
			metricsURL := fmt.Sprintf("https://%s.%s.svc:8443/metrics", metricsServiceName, namespace)
			healthURL := fmt.Sprintf("http://%s/healthz", net.JoinHostPort(podIP, "8081"))

			reached := func(url string) func(Gomega) {
				return func(g Gomega) { g.Expect(connects(g, url)).To(BeTrue(), "curl-probe could not connect to %s", url) }
			}
			refused := func(url string) func(Gomega) {
				return func(g Gomega) {
					g.Expect(connects(g, url)).To(BeFalse(),
						"curl-probe connected to %s, which the network policies refuse it: is no NetworkPolicy enforcer running?", url)
				}
			}
			// Open to every source (allow-webhook-traffic): so the pod's own
			// network works, and what follows is the policies' doing.
			By("reaching the webhook port, which every source may")
			Eventually(reached(webhookURL)).Should(Succeed())
			By("being refused on the metrics port")
			Eventually(refused(metricsURL), time.Minute).Should(Succeed())
			By("being refused on the health probe port, which no policy opens")
			Eventually(refused(healthURL), time.Minute).Should(Succeed())

			By("reaching the metrics port once its namespace has the label")
			cmd = exec.Command("kubectl", "label", "ns", probeNamespace, "metrics=enabled")
			_, err = utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred())
			Eventually(reached(metricsURL), time.Minute).Should(Succeed())
		})
	})
})

// connects tells whether the curl-probe pod connects to url: true once it
// has an answer (any HTTP status), false when the connection is refused
// (curl's exit 7: a policy that rejects) or times out (28 before connecting:
// one that drops). Anything else (no DNS, say) fails g.
func connects(g Gomega, url string) bool {
	cmd := exec.Command("kubectl", "exec", "-n", probeNamespace, "curl-probe", "--",
		"sh", "-c", `curl -sk -o /dev/null --connect-timeout 5 --max-time 20 -w '%{time_connect}' "$0"; echo " exit=$?"`, url)
	output, err := utils.Run(cmd)
	g.Expect(err).NotTo(HaveOccurred())
	var connect float64
	var code int
	_, err = fmt.Sscanf(strings.TrimSpace(output), "%g exit=%d", &connect, &code)
	g.Expect(err).NotTo(HaveOccurred(), "curl printed %q", output)
	switch {
	case code == 0:
		return true
	case code == 7, code == 28 && connect == 0:
		return false
	}
	g.Expect(code).To(BeZero(), "curl %s: %s", url, output)
	return false
}

// listPods returns the names of the sample's pods that are not being deleted.
func listPods(g Gomega) []string {
	cmd := exec.Command("kubectl", "get", "pods", "-n", samplesNamespace,
		"-l", customPodLabel+"=custompod-sample",
		"-o", "go-template={{ range .items }}{{ if not .metadata.deletionTimestamp }}"+
			"{{ .metadata.name }}{{ \"\\n\" }}{{ end }}{{ end }}")
	output, err := utils.Run(cmd)
	g.Expect(err).NotTo(HaveOccurred())
	return utils.GetNonEmptyLines(output)
}

// expectPods waits until the sample has n pods and reports n in its status,
// and returns the pod names.
func expectPods(n int) []string {
	var pods []string
	EventuallyWithOffset(1, func(g Gomega) {
		pods = listPods(g)
		g.Expect(pods).To(HaveLen(n))
		if n == 0 {
			return
		}
		cmd := exec.Command("kubectl", "get", "-n", samplesNamespace, "custompod/custompod-sample",
			"-o", "jsonpath={.status.replicas}")
		output, err := utils.Run(cmd)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(output).To(Equal(fmt.Sprint(n)))
	}).Should(Succeed())
	return pods
}

// serviceAccountToken returns a token for the specified service account in the given namespace.
// It uses the Kubernetes TokenRequest API to generate a token by directly sending a request
// and parsing the resulting token from the API response.
func serviceAccountToken() (string, error) {
	const tokenRequestRawString = `{
		"apiVersion": "authentication.k8s.io/v1",
		"kind": "TokenRequest"
	}`

	By("creating temporary file to store the token request")
	secretName := fmt.Sprintf("%s-token-request", serviceAccountName)
	tokenRequestFile := filepath.Join("/tmp", secretName)
	err := os.WriteFile(tokenRequestFile, []byte(tokenRequestRawString), os.FileMode(0o644))
	if err != nil {
		return "", err
	}

	var out string
	verifyTokenCreation := func(g Gomega) {
		By("executing kubectl command to create the token")
		cmd := exec.Command("kubectl", "create", "--raw", fmt.Sprintf(
			"/api/v1/namespaces/%s/serviceaccounts/%s/token",
			namespace,
			serviceAccountName,
		), "-f", tokenRequestFile)

		output, err := cmd.CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred())

		By("parsing the JSON output to extract the token")
		var token tokenRequest
		err = json.Unmarshal(output, &token)
		g.Expect(err).NotTo(HaveOccurred())

		out = token.Status.Token
	}
	Eventually(verifyTokenCreation).Should(Succeed())

	return out, err
}

// getMetricsOutput retrieves and returns the logs from the curl pod used to access the metrics endpoint.
func getMetricsOutput() (string, error) {
	By("getting the curl-metrics logs")
	cmd := exec.Command("kubectl", "logs", "curl-metrics", "-n", namespace)
	return utils.Run(cmd)
}

// tokenRequest is a simplified representation of the Kubernetes TokenRequest API response,
// containing only the token field that we need to extract.
type tokenRequest struct {
	Status struct {
		Token string `json:"token"`
	} `json:"status"`
}
