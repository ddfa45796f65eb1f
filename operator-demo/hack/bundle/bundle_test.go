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

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// These tests check the committed bundle (run `make bundle` after changing
// the APIs, RBAC markers or config/) against the sources it is made from,
// read here without hack/bundle's code: the CRDs in config/crd/bases, the
// RBAC files of config/rbac, the webhooks of config/webhook and the
// conversion webhooks of config/crd/patches, and the manager
// Deployment that `kustomize build config/default` deploys, less what
// config/manifests takes out for OLM (the manager's own webhook
// certificate: OLM issues one).

const root = "../.."

func readYAML(t *testing.T, path string, out any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// csv is the part of the bundle's ClusterServiceVersion the tests look at.
type csv struct {
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Version                   string `json:"version"`
		CustomResourceDefinitions struct {
			Owned []crdDescription `json:"owned"`
		} `json:"customresourcedefinitions"`
		Install            installStrategy      `json:"install"`
		WebhookDefinitions []webhookDescription `json:"webhookdefinitions"`
	} `json:"spec"`
}

func readCSV(t *testing.T) csv {
	var c csv
	readYAML(t, "bundle/manifests/operator-demo.clusterserviceversion.yaml", &c)
	return c
}

type crd struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind   string `json:"kind"`
			Plural string `json:"plural"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
		} `json:"versions"`
	} `json:"spec"`
}

func TestCSVOwnsEveryCRD(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(root, "config/crd/bases/*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no CRDs in config/crd/bases (%v)", err)
	}
	var want []string
	for _, path := range paths {
		rel, _ := filepath.Rel(root, path)
		var c crd
		readYAML(t, rel, &c)
		for _, v := range c.Spec.Versions {
			if v.Served {
				want = append(want, c.Metadata.Name+" "+v.Name+" "+c.Spec.Names.Kind)
			}
		}

		// The bundle carries the same CRD, under operator-sdk's file name,
		// with the conversion webhook of config/crd/patches if it has one
		// (TestCSVDefinesEveryWebhook checks it).
		var source, bundled map[string]any
		readYAML(t, rel, &source)
		readYAML(t, filepath.Join("bundle/manifests", c.Spec.Group+"_"+c.Spec.Names.Plural+".yaml"), &bundled)
		conversion := bundled["spec"].(map[string]any)["conversion"]
		delete(bundled["spec"].(map[string]any), "conversion")
		if !reflect.DeepEqual(source, bundled) {
			t.Errorf("bundle/manifests/%s_%s.yaml differs from %s: run make bundle", c.Spec.Group, c.Spec.Names.Plural, rel)
		}
		if _, patched := conversionPatches(t)[c.Metadata.Name]; patched != (conversion != nil) {
			t.Errorf("bundle/manifests/%s_%s.yaml: conversion %v, want one exactly when config/crd/patches has one",
				c.Spec.Group, c.Spec.Names.Plural, conversion)
		}
	}

	owned := readCSV(t).Spec.CustomResourceDefinitions.Owned
	got := make([]string, 0, len(owned))
	for _, o := range owned {
		got = append(got, o.Name+" "+o.Version+" "+o.Kind)
	}
	sort.Strings(want)
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CSV owns %q, want %q", got, want)
	}
	if len(want) != 5 {
		t.Errorf("found %d CRD versions, want 5 (CustomPod v1 and v2, PodBuggerTool, PodSet, Vpc)", len(want))
	}
}

// kustomizeBuild runs the kustomize the Makefile uses ($KUSTOMIZE, or the
// monorepo's bin/kustomize).
func kustomizeBuild(t *testing.T, dir string) []map[string]any {
	t.Helper()
	bin := os.Getenv("KUSTOMIZE")
	if bin == "" {
		bin = filepath.Join(root, "..", "bin", "kustomize")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("this test needs kustomize (%v): run it with make test or make bundle, "+
			"or set KUSTOMIZE (../scripts/tools.sh kustomize builds it)", err)
	}
	out, err := exec.Command(bin, "build", filepath.Join(root, dir)).Output()
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	objs, err := readObjects(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestCSVInstallsTheManagerDeployment(t *testing.T) {
	// make deploy's Deployment issues its webhook certificate itself; under
	// OLM, OLM does, and mounts it where --webhook-cert-path says.
	for _, obj := range kustomizeBuild(t, "config/default") {
		if str(obj, "kind") == "Deployment" {
			if args := managerArgs(obj); !containsString(args, "--webhook-cert-rotation") {
				t.Errorf("config/default's manager args %q lack --webhook-cert-rotation", args)
			}
		}
	}
	var want []deploymentSpec
	for _, obj := range kustomizeBuild(t, "config/manifests") {
		if str(obj, "kind") == "Deployment" {
			meta := obj["metadata"].(map[string]any)
			labels := map[string]string{}
			for k, v := range meta["labels"].(map[string]any) {
				labels[k] = v.(string)
			}
			want = append(want, deploymentSpec{Name: str(obj, "metadata", "name"), Label: labels,
				Spec: obj["spec"].(map[string]any)})
		}
	}
	c := readCSV(t)
	if c.Spec.Install.StrategyName != "deployment" {
		t.Errorf("install strategy %q, want deployment", c.Spec.Install.StrategyName)
	}
	got := c.Spec.Install.Spec.Deployments
	if len(got) != 1 || got[0].Name != "operator-demo-controller-manager" {
		t.Fatalf("CSV deployments %v, want the one operator-demo-controller-manager", names(got))
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("CSV deployment differs from config/manifests' (run make bundle):\n%s\nwant\n%s", g, w)
	}
	args := managerArgs(map[string]any{"spec": got[0].Spec})
	const certPath = "--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs"
	if containsString(args, "--webhook-cert-rotation") || !containsString(args, certPath) {
		t.Errorf("CSV manager args %q: want %s (where OLM mounts its certificate) and no --webhook-cert-rotation",
			args, certPath)
	}
	if vols, _ := got[0].Spec["template"].(map[string]any)["spec"].(map[string]any)["volumes"].([]any); len(vols) > 0 {
		t.Errorf("CSV deployment has volumes %v: OLM mounts the webhook certificate itself", vols)
	}
}

// managerArgs returns the args of a Deployment's first container.
func managerArgs(deployment map[string]any) []string {
	spec, _ := deployment["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	podSpec, _ := tmpl["spec"].(map[string]any)
	containers, _ := podSpec["containers"].([]any)
	if len(containers) == 0 {
		return nil
	}
	var args []string
	raw, _ := containers[0].(map[string]any)["args"].([]any)
	for _, a := range raw {
		args = append(args, a.(string))
	}
	return args
}

// TestCSVDefinesEveryWebhook checks spec.webhookdefinitions against
// config/webhook: OLM creates the configurations from it.
func TestCSVDefinesEveryWebhook(t *testing.T) {
	var generated struct {
		Webhooks []struct {
			Name         string `json:"name"`
			ClientConfig struct {
				Service struct {
					Path string `json:"path"`
				} `json:"service"`
			} `json:"clientConfig"`
			Rules                   []any    `json:"rules"`
			FailurePolicy           string   `json:"failurePolicy"`
			SideEffects             string   `json:"sideEffects"`
			TimeoutSeconds          *int32   `json:"timeoutSeconds"`
			AdmissionReviewVersions []string `json:"admissionReviewVersions"`
		} `json:"webhooks"`
	}
	readYAML(t, "config/webhook/manifests.yaml", &generated)
	var svc struct {
		Spec struct {
			Ports []struct {
				Port       int32 `json:"port"`
				TargetPort int32 `json:"targetPort"`
			} `json:"ports"`
		} `json:"spec"`
	}
	readYAML(t, "config/webhook/service.yaml", &svc)
	var want []map[string]any
	for _, w := range generated.Webhooks {
		d := map[string]any{
			"generateName": w.Name, "type": "ValidatingAdmissionWebhook",
			"deploymentName": "operator-demo-controller-manager",
			"containerPort":  svc.Spec.Ports[0].Port, "targetPort": svc.Spec.Ports[0].TargetPort,
			"rules": w.Rules, "failurePolicy": w.FailurePolicy, "sideEffects": w.SideEffects,
			"admissionReviewVersions": w.AdmissionReviewVersions, "webhookPath": w.ClientConfig.Service.Path,
		}
		if w.TimeoutSeconds != nil {
			d["timeoutSeconds"] = *w.TimeoutSeconds
		}
		want = append(want, d)
	}
	// A CRD's conversion webhook: OLM's name for it, c<kind>.kb.io.
	patches := conversionPatches(t)
	conversions := make([]map[string]any, 0, len(patches))
	for name, p := range patches {
		conversions = append(conversions, map[string]any{
			"generateName": "c" + strings.ToLower(crdKinds(t)[name]) + ".kb.io",
			"type":         "ConversionWebhook", "deploymentName": "operator-demo-controller-manager",
			"containerPort": svc.Spec.Ports[0].Port, "targetPort": svc.Spec.Ports[0].TargetPort, "sideEffects": "None",
			"admissionReviewVersions": p.ConversionReviewVersions, "webhookPath": p.Path,
			"conversionCRDs": []string{name},
		})
	}
	want = append(conversions, want...) // ConversionWebhook sorts first
	var c struct {
		Spec struct {
			WebhookDefinitions []map[string]any `json:"webhookdefinitions"`
		} `json:"spec"`
	}
	readYAML(t, "bundle/manifests/operator-demo.clusterserviceversion.yaml", &c)
	g, _ := json.MarshalIndent(c.Spec.WebhookDefinitions, "", "  ")
	w, _ := json.MarshalIndent(want, "", "  ")
	if string(g) != string(w) {
		t.Errorf("CSV webhookdefinitions (run make bundle):\n%s\nwant (from config/webhook and config/crd/patches):\n%s",
			g, w)
	}
}

// crdKinds reads config/crd/bases: CRD name -> kind.
func crdKinds(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "config/crd/bases/*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, path := range paths {
		rel, _ := filepath.Rel(root, path)
		var c crd
		readYAML(t, rel, &c)
		kinds[c.Metadata.Name] = c.Spec.Names.Kind
	}
	return kinds
}

// conversionPatch is what the test reads of a conversion webhook patch.
type conversionPatch struct {
	Path                     string
	ConversionReviewVersions []string
}

// conversionPatches reads config/crd/patches/webhook_in_*.yaml, the patches
// `create webhook --conversion` scaffolds: CRD name -> its webhook.
func conversionPatches(t *testing.T) map[string]conversionPatch {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "config/crd/patches/webhook_in_*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	patches := map[string]conversionPatch{}
	for _, path := range paths {
		rel, _ := filepath.Rel(root, path)
		var patch struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Conversion struct {
					Webhook struct {
						ClientConfig struct {
							Service struct {
								Path string `json:"path"`
							} `json:"service"`
						} `json:"clientConfig"`
						ConversionReviewVersions []string `json:"conversionReviewVersions"`
					} `json:"webhook"`
				} `json:"conversion"`
			} `json:"spec"`
		}
		readYAML(t, rel, &patch)
		w := patch.Spec.Conversion.Webhook
		patches[patch.Metadata.Name] = conversionPatch{
			Path:                     w.ClientConfig.Service.Path,
			ConversionReviewVersions: w.ConversionReviewVersions,
		}
	}
	return patches
}

func names(ds []deploymentSpec) []string {
	n := make([]string, 0, len(ds))
	for _, d := range ds {
		n = append(n, d.Name)
	}
	return n
}

// rbacObject is a Role, ClusterRole, RoleBinding, ClusterRoleBinding or ServiceAccount.
type rbacObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Rules    []rbacv1.PolicyRule `json:"rules"`
	RoleRef  rbacv1.RoleRef      `json:"roleRef"`
	Subjects []rbacv1.Subject    `json:"subjects"`
}

// TestCSVGrantsExactlyTheRBACOfConfigRBAC reads the files config/rbac lists
// and checks that the CSV asks for the rules of every role bound to the
// manager's service account, and for nothing else.
func TestCSVGrantsExactlyTheRBACOfConfigRBAC(t *testing.T) {
	var kust struct {
		Resources []string `json:"resources"`
	}
	readYAML(t, "config/rbac/kustomization.yaml", &kust)
	var def struct {
		NamePrefix string `json:"namePrefix"`
	}
	readYAML(t, "config/default/kustomization.yaml", &def)

	// config/manifests deletes what only the manager's own certificate
	// rotation needs (its Role and RoleBinding): OLM issues the certificate.
	var manifests struct {
		Patches []struct {
			Patch string `json:"patch"`
		} `json:"patches"`
	}
	readYAML(t, "config/manifests/kustomization.yaml", &manifests)
	deleted := map[string]bool{}
	for _, p := range manifests.Patches {
		var o rbacObject
		if strings.Contains(p.Patch, "$patch: delete") && yaml.Unmarshal([]byte(p.Patch), &o) == nil {
			deleted[o.Kind+"/"+o.Metadata.Name] = true
		}
	}

	objs := make([]rbacObject, 0, len(kust.Resources))
	accounts := map[string]bool{}
	for _, file := range kust.Resources {
		data, err := os.ReadFile(filepath.Join(root, "config/rbac", file))
		if err != nil {
			t.Fatal(err)
		}
		docs, err := readObjects(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("config/rbac/%s: %v", file, err)
		}
		for _, doc := range docs {
			var o rbacObject
			if err := convert(doc, &o); err != nil {
				t.Fatalf("config/rbac/%s: %v", file, err)
			}
			if deleted[o.Kind+"/"+o.Metadata.Name] {
				continue
			}
			objs = append(objs, o)
			if o.Kind == "ServiceAccount" {
				accounts[o.Metadata.Name] = true
			}
		}
	}
	if len(deleted) == 0 {
		t.Errorf("config/manifests deletes no Role or RoleBinding: the certificate rotation's RBAC would reach the CSV")
	}
	if !accounts["controller-manager"] {
		t.Fatalf("config/rbac has no controller-manager ServiceAccount")
	}
	roles := map[string][]rbacv1.PolicyRule{}
	for _, o := range objs {
		if o.Kind == "Role" || o.Kind == "ClusterRole" {
			roles[o.Kind+"/"+o.Metadata.Name] = o.Rules
		}
	}
	wantNS, wantCluster := map[string][]rbacv1.PolicyRule{}, map[string][]rbacv1.PolicyRule{}
	for _, o := range objs {
		if o.Kind != "RoleBinding" && o.Kind != "ClusterRoleBinding" {
			continue
		}
		rules, ok := roles[o.RoleRef.Kind+"/"+o.RoleRef.Name]
		if !ok {
			t.Fatalf("%s %s binds %s %s, which config/rbac does not define",
				o.Kind, o.Metadata.Name, o.RoleRef.Kind, o.RoleRef.Name)
		}
		for _, s := range o.Subjects {
			if s.Kind != "ServiceAccount" || !accounts[s.Name] {
				continue
			}
			sa := def.NamePrefix + s.Name
			if o.Kind == "ClusterRoleBinding" {
				wantCluster[sa] = append(wantCluster[sa], rules...)
			} else {
				wantNS[sa] = append(wantNS[sa], rules...)
			}
		}
	}

	c := readCSV(t)
	comparePermissions(t, "clusterPermissions", c.Spec.Install.Spec.ClusterPermissions, wantCluster)
	comparePermissions(t, "permissions", c.Spec.Install.Spec.Permissions, wantNS)

	// The generated manager role (make manifests) must be among them.
	var managerRole rbacObject
	readYAML(t, "config/rbac/role.yaml", &managerRole)
	if len(c.Spec.Install.Spec.ClusterPermissions) == 0 {
		t.Fatal("CSV has no clusterPermissions")
	}
	granted := ruleSet(c.Spec.Install.Spec.ClusterPermissions[0].Rules)
	for _, r := range ruleSet(managerRole.Rules) {
		if !containsString(granted, r) {
			t.Errorf("clusterPermissions lack the rule %s of config/rbac/role.yaml", r)
		}
	}
}

func comparePermissions(t *testing.T, field string, got []permission, want map[string][]rbacv1.PolicyRule) {
	t.Helper()
	gotMap := map[string][]string{}
	for _, p := range got {
		gotMap[p.ServiceAccountName] = ruleSet(p.Rules)
	}
	wantMap := map[string][]string{}
	for sa, rules := range want {
		wantMap[sa] = ruleSet(rules)
	}
	if !reflect.DeepEqual(gotMap, wantMap) {
		t.Errorf("CSV %s:\n%v\nwant (from config/rbac):\n%v", field, gotMap, wantMap)
	}
}

// ruleSet writes each rule as one sorted string, so that rule order does not matter.
func ruleSet(rules []rbacv1.PolicyRule) []string {
	set := make([]string, 0, len(rules))
	for _, r := range rules {
		data, _ := json.Marshal(r)
		set = append(set, string(data))
	}
	sort.Strings(set)
	return set
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestCSVNameAndExamples(t *testing.T) {
	c := readCSV(t)
	if c.Metadata.Name != "operator-demo.v"+c.Spec.Version {
		t.Errorf("CSV name %q, want operator-demo.v%s", c.Metadata.Name, c.Spec.Version)
	}
	var examples []map[string]any
	if err := json.Unmarshal([]byte(c.Metadata.Annotations["alm-examples"]), &examples); err != nil {
		t.Fatalf("alm-examples: %v", err)
	}
	kinds := make([]string, 0, len(examples))
	for _, e := range examples {
		kinds = append(kinds, e["kind"].(string))
	}
	sort.Strings(kinds)
	if want := []string{"CustomPod", "CustomPod", "PodBuggerTool", "PodSet", "Vpc"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("alm-examples has %v, want one sample of each of %v (CustomPod: v1 and v2)", kinds, want)
	}
}

// TestAnnotationsMatchDockerfileLabels: a bundle image carries its metadata
// twice, as labels (bundle.Dockerfile) and in metadata/annotations.yaml, and
// OLM expects them to agree.
func TestAnnotationsMatchDockerfileLabels(t *testing.T) {
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	readYAML(t, "bundle/metadata/annotations.yaml", &meta)

	f, err := os.Open(filepath.Join(root, "bundle.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	labels := map[string]string{}
	var copies []string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := scanner.Text()
		if kv, ok := strings.CutPrefix(line, "LABEL "); ok {
			k, v, _ := strings.Cut(kv, "=")
			labels[k] = v
		}
		if src, ok := strings.CutPrefix(line, "COPY "); ok {
			copies = append(copies, strings.Fields(src)[0])
		}
	}
	if !reflect.DeepEqual(meta.Annotations, labels) {
		t.Errorf("annotations.yaml %v\ndiffers from bundle.Dockerfile's labels %v", meta.Annotations, labels)
	}
	if got := meta.Annotations["operators.operatorframework.io.bundle.package.v1"]; got != "operator-demo" {
		t.Errorf("package %q, want operator-demo", got)
	}
	for _, src := range copies {
		if _, err := os.Stat(filepath.Join(root, src)); err != nil {
			t.Errorf("bundle.Dockerfile copies %s: %v", src, err)
		}
	}
	// The test annotations point at the scorecard configuration.
	scorecardDir := meta.Annotations["operators.operatorframework.io.test.config.v1"]
	if _, err := os.Stat(filepath.Join(root, "bundle", scorecardDir, "config.yaml")); err != nil {
		t.Errorf("scorecard configuration: %v", err)
	}
}
