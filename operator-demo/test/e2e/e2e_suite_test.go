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
	"fmt"
	"os"
	"os/exec"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/k8s-demo/operator-demo/test/utils"
)

var (
	// Optional Environment Variables:
	// - IMG=<image>: the manager image to deploy (default below).
	// - E2E_SKIP_IMAGE_BUILD=true: do not run `make docker-build`; the image must
	//   then already be available to the cluster's nodes.
	// - KIND_CLUSTER=<name>: load the image into this Kind cluster before deploying.
	// The project has no webhooks, so unlike the default scaffold the suite does not
	// install CertManager.
	skipImageBuild = os.Getenv("E2E_SKIP_IMAGE_BUILD") == "true"

	// projectImage is the name of the image which will be build and loaded
	// with the code source changes to be tested.
	projectImage = "example.com/operator-demo:v0.0.1"
)

// TestE2E runs the end-to-end (e2e) test suite for the project. It runs against
// the cluster of the current KUBECONFIG, which the caller creates and deletes
// (the monorepo's e2e harness, or `kind create cluster`).
func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	if img := os.Getenv("IMG"); img != "" {
		projectImage = img
	}
	_, _ = fmt.Fprintf(GinkgoWriter, "Starting operator-demo integration test suite\n")
	RunSpecs(t, "e2e suite")
}

var _ = BeforeSuite(func() {
	if !skipImageBuild {
		By("building the manager(Operator) image")
		cmd := exec.Command("make", "docker-build", fmt.Sprintf("IMG=%s", projectImage))
		_, err := utils.Run(cmd)
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), "Failed to build the manager(Operator) image")
	}

	if os.Getenv("KIND_CLUSTER") != "" {
		By("loading the manager(Operator) image on Kind")
		err := utils.LoadImageToKindClusterWithName(projectImage)
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), "Failed to load the manager(Operator) image into Kind")
	}
})
