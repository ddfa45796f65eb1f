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

// Command bundle writes an OLM bundle (bundle/, bundle.Dockerfile) from the
// manifests that `kustomize build config/manifests` prints. It stands in for
// `operator-sdk generate bundle`, whose CLI cannot be downloaded where this
// project is built, and does the same job for this project:
//
//   - the ClusterServiceVersion base (config/manifests/bases) gets its version,
//     the samples as alm-examples, one spec.customresourcedefinitions.owned
//     entry per CRD version, and spec.install: the manager Deployment, and as
//     permissions / clusterPermissions the rules of every Role / ClusterRole
//     bound to one of the ServiceAccounts (which OLM creates itself);
//   - the webhook configurations become spec.webhookdefinitions (OLM creates
//     the configurations, with its own certificate, for the Deployment the
//     webhooks' Service selects), and so does the conversion webhook of each
//     CRD whose spec.conversion names one (OLM points the CRD at the
//     Deployment's webhook server, with its own certificate);
//   - the CRDs, and every other object (Services, ClusterRoles that are not
//     bound to the manager), become files of bundle/manifests;
//   - the scorecard configuration becomes bundle/tests/scorecard/config.yaml;
//   - bundle/metadata/annotations.yaml and bundle.Dockerfile carry the same
//     package, channels and layout.
//
// It reads the CSV as plain maps and defines Go types only for the parts it
// writes, so it needs nothing from github.com/operator-framework.
//
// Usage (see the Makefile's bundle target):
//
//	kustomize build config/manifests | go run ./hack/bundle -q --overwrite --version 0.0.1
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// The parts of a ClusterServiceVersion (operators.coreos.com/v1alpha1) this
// command writes, with the JSON names of operator-framework/api.
type (
	installStrategy struct {
		StrategyName string       `json:"strategy"`
		Spec         strategySpec `json:"spec"`
	}
	strategySpec struct {
		Permissions        []permission     `json:"permissions,omitempty"`
		ClusterPermissions []permission     `json:"clusterPermissions,omitempty"`
		Deployments        []deploymentSpec `json:"deployments"`
	}
	permission struct {
		ServiceAccountName string              `json:"serviceAccountName"`
		Rules              []rbacv1.PolicyRule `json:"rules"`
	}
	deploymentSpec struct {
		Name  string            `json:"name"`
		Label map[string]string `json:"label,omitempty"`
		// Spec is the Deployment's spec as kustomize printed it.
		Spec map[string]any `json:"spec"`
	}
	// webhookDescription is a spec.webhookdefinitions entry, made from one
	// webhook of a Validating- or MutatingWebhookConfiguration, or from a
	// CRD's conversion webhook, as operator-sdk makes it.
	webhookDescription struct {
		GenerateName            string                                          `json:"generateName"`
		Type                    string                                          `json:"type"`
		DeploymentName          string                                          `json:"deploymentName,omitempty"`
		ContainerPort           int32                                           `json:"containerPort,omitempty"`
		TargetPort              *intstr.IntOrString                             `json:"targetPort,omitempty"`
		Rules                   []admissionregistrationv1.RuleWithOperations    `json:"rules,omitempty"`
		FailurePolicy           *admissionregistrationv1.FailurePolicyType      `json:"failurePolicy,omitempty"`
		MatchPolicy             *admissionregistrationv1.MatchPolicyType        `json:"matchPolicy,omitempty"`
		ObjectSelector          *metav1.LabelSelector                           `json:"objectSelector,omitempty"`
		SideEffects             *admissionregistrationv1.SideEffectClass        `json:"sideEffects"`
		TimeoutSeconds          *int32                                          `json:"timeoutSeconds,omitempty"`
		AdmissionReviewVersions []string                                        `json:"admissionReviewVersions"`
		ReinvocationPolicy      *admissionregistrationv1.ReinvocationPolicyType `json:"reinvocationPolicy,omitempty"`
		WebhookPath             *string                                         `json:"webhookPath,omitempty"`
		ConversionCRDs          []string                                        `json:"conversionCRDs,omitempty"`
	}
	crdDescription struct {
		Name        string `json:"name"`
		Version     string `json:"version"`
		Kind        string `json:"kind"`
		DisplayName string `json:"displayName,omitempty"`
		Description string `json:"description,omitempty"`
		// Descriptors written by hand in the CSV base are kept as they are.
		Resources         []any `json:"resources,omitempty"`
		SpecDescriptors   []any `json:"specDescriptors,omitempty"`
		StatusDescriptors []any `json:"statusDescriptors,omitempty"`
	}
)

// options are the flags of `operator-sdk generate bundle` that the Makefile uses.
type options struct {
	version        string
	channels       string
	defaultChannel string
	packageName    string
	layout         string
	outputDir      string
	dockerfile     string
	overwrite      bool
	quiet          bool
}

func main() {
	var o options
	var digests bool
	flag.StringVar(&o.version, "version", "", "semantic version of the bundle (required)")
	flag.StringVar(&o.channels, "channels", "alpha", "comma-separated channels the bundle belongs to")
	flag.StringVar(&o.defaultChannel, "default-channel", "", "the package's default channel")
	flag.StringVar(&o.packageName, "package", "operator-demo", "the bundle's package name")
	flag.StringVar(&o.layout, "project-layout", "go.kubebuilder.io/v4", "the project layout, from PROJECT")
	flag.StringVar(&o.outputDir, "output-dir", "bundle", "directory to write the bundle to")
	flag.StringVar(&o.dockerfile, "dockerfile", "bundle.Dockerfile", "where to write the bundle's Dockerfile")
	flag.BoolVar(&o.overwrite, "overwrite", false, "replace an existing bundle")
	flag.BoolVar(&o.quiet, "q", false, "print nothing on success")
	flag.BoolVar(&digests, "use-image-digests", false, "not supported: resolving digests needs a registry")
	flag.Parse()
	if digests {
		fail(errors.New("--use-image-digests is not supported by this stand-in for operator-sdk generate bundle"))
	}
	if o.version == "" {
		fail(errors.New("--version is required"))
	}

	objs, err := readObjects(os.Stdin)
	if err != nil {
		fail(fmt.Errorf("reading the manifests on stdin: %w", err))
	}
	b, err := build(objs, o)
	if err != nil {
		fail(err)
	}
	if err := b.write(o); err != nil {
		fail(err)
	}
	if !o.quiet {
		fmt.Printf("Bundle written to %s/ and %s\n", o.outputDir, o.dockerfile)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bundle:", err)
	os.Exit(1)
}

type object = map[string]any

// readObjects splits a multi-document YAML stream into objects.
func readObjects(r io.Reader) ([]object, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var objs []object
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		var obj object
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, err
		}
		if len(obj) > 0 {
			objs = append(objs, obj)
		}
	}
}

// bundleContents is what the bundle directory gets.
type bundleContents struct {
	csv       object
	manifests map[string]object // file name -> object
	scorecard object
}

func str(obj object, fields ...string) string {
	s, _, _ := unstructured.NestedString(obj, fields...)
	return s
}

func groupOf(apiVersion string) string {
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

// build sorts the objects kustomize printed into the CSV and the other
// bundle files.
func build(objs []object, o options) (*bundleContents, error) {
	b := &bundleContents{manifests: map[string]object{}}
	var crds, deployments, roles, bindings, webhookConfigs, rest []object
	serviceAccounts := map[string]bool{}
	for _, obj := range objs {
		switch kind := str(obj, "kind"); {
		case kind == "ClusterServiceVersion":
			b.csv = obj
		case kind == "CustomResourceDefinition":
			crds = append(crds, obj)
		case kind == "Deployment":
			deployments = append(deployments, obj)
		case kind == "ServiceAccount":
			// OLM creates the service accounts named in the install strategy.
			serviceAccounts[str(obj, "metadata", "name")] = true
		case kind == "Role" || kind == "ClusterRole":
			roles = append(roles, obj)
		case kind == "RoleBinding" || kind == "ClusterRoleBinding":
			bindings = append(bindings, obj)
		case kind == "Configuration" && groupOf(str(obj, "apiVersion")) == "scorecard.operatorframework.io":
			b.scorecard = obj
		case kind == "ValidatingWebhookConfiguration" || kind == "MutatingWebhookConfiguration":
			webhookConfigs = append(webhookConfigs, obj)
		case kind == "Namespace":
			// OLM installs into the namespace the user picks.
		default:
			rest = append(rest, obj)
		}
	}
	if b.csv == nil {
		return nil, errors.New("no ClusterServiceVersion in the input (is config/manifests/bases in the kustomization?)")
	}
	if len(deployments) == 0 {
		return nil, errors.New("no Deployment in the input")
	}

	// Custom resources of the bundle's own CRDs are samples: alm-examples.
	owned := map[string]bool{} // group/kind
	for _, crd := range crds {
		owned[str(crd, "spec", "group")+"/"+str(crd, "spec", "names", "kind")] = true
		b.manifests[str(crd, "spec", "group")+"_"+str(crd, "spec", "names", "plural")+".yaml"] = crd
	}
	var samples []object
	for _, obj := range rest {
		if owned[groupOf(str(obj, "apiVersion"))+"/"+str(obj, "kind")] {
			samples = append(samples, obj)
			continue
		}
		addManifest(b.manifests, obj)
	}

	strategy := installStrategy{StrategyName: "deployment"}
	for _, d := range deployments {
		spec, _, _ := unstructured.NestedMap(d, "spec")
		podLabels, _, _ := unstructured.NestedStringMap(d, "metadata", "labels")
		strategy.Spec.Deployments = append(strategy.Spec.Deployments,
			deploymentSpec{Name: str(d, "metadata", "name"), Label: podLabels, Spec: spec})
	}
	perms, clusterPerms, err := permissions(roles, bindings, serviceAccounts, b.manifests)
	if err != nil {
		return nil, err
	}
	strategy.Spec.Permissions, strategy.Spec.ClusterPermissions = perms, clusterPerms

	if err := b.fillCSV(o, crds, samples, strategy); err != nil {
		return nil, err
	}
	webhooks, err := webhookDefinitions(webhookConfigs, crds, rest, deployments)
	if err != nil {
		return nil, err
	}
	if len(webhooks) > 0 {
		defs, err := toUnstructured(webhooks)
		if err != nil {
			return nil, err
		}
		if err := unstructured.SetNestedField(b.csv, defs, "spec", "webhookdefinitions"); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// webhookDefinitions turns every webhook of the configurations, and every
// CRD's conversion webhook, into a webhookdefinitions entry, as operator-sdk
// does: its Service (kept as a bundle file) gives the ports, and the
// Deployment whose pods the Service selects is the one OLM configures. The
// namespace selector and the CA are OLM's to set. (OLM runs a CSV with a
// conversion webhook only in the AllNamespaces install mode: a CRD has one
// conversion webhook for the whole cluster.)
func webhookDefinitions(configs, crds, rest, deployments []object) ([]webhookDescription, error) {
	services := map[string]corev1.Service{}
	for _, obj := range rest {
		if str(obj, "kind") == "Service" {
			var svc corev1.Service
			if err := convert(obj, &svc); err != nil {
				return nil, fmt.Errorf("service %s: %w", str(obj, "metadata", "name"), err)
			}
			services[svc.Name] = svc
		}
	}
	var defs []webhookDescription
	for _, cfg := range configs {
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		var mwc admissionregistrationv1.MutatingWebhookConfiguration
		var webhooks []webhookDescription
		switch str(cfg, "kind") {
		case "ValidatingWebhookConfiguration":
			if err := convert(cfg, &vwc); err != nil {
				return nil, err
			}
			for _, w := range vwc.Webhooks {
				webhooks = append(webhooks, webhookDescription{Type: "ValidatingAdmissionWebhook", GenerateName: w.Name,
					Rules: w.Rules, FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy, ObjectSelector: w.ObjectSelector,
					SideEffects: w.SideEffects, TimeoutSeconds: w.TimeoutSeconds, AdmissionReviewVersions: w.AdmissionReviewVersions})
				if err := setService(&webhooks[len(webhooks)-1], w.ClientConfig, services, deployments); err != nil {
					return nil, err
				}
			}
		case "MutatingWebhookConfiguration":
			if err := convert(cfg, &mwc); err != nil {
				return nil, err
			}
			for _, w := range mwc.Webhooks {
				webhooks = append(webhooks, webhookDescription{Type: "MutatingAdmissionWebhook", GenerateName: w.Name,
					Rules: w.Rules, FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy, ObjectSelector: w.ObjectSelector,
					SideEffects: w.SideEffects, TimeoutSeconds: w.TimeoutSeconds, AdmissionReviewVersions: w.AdmissionReviewVersions,
					ReinvocationPolicy: w.ReinvocationPolicy})
				if err := setService(&webhooks[len(webhooks)-1], w.ClientConfig, services, deployments); err != nil {
					return nil, err
				}
			}
		}
		defs = append(defs, webhooks...)
	}
	for _, crd := range crds {
		var conv apiextensionsv1.CustomResourceConversion
		if c, ok, _ := unstructured.NestedMap(crd, "spec", "conversion"); !ok {
			continue
		} else if err := convert(c, &conv); err != nil {
			return nil, fmt.Errorf("CRD %s: %w", str(crd, "metadata", "name"), err)
		}
		if conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
			continue
		}
		// The name OLM's documentation gives a conversion webhook: c<kind>.kb.io,
		// as kubebuilder names the others v<kind>-<version>.kb.io.
		name := "c" + strings.ToLower(str(crd, "spec", "names", "kind")) + ".kb.io"
		d := webhookDescription{Type: "ConversionWebhook", GenerateName: name,
			SideEffects:             ptrTo(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: conv.Webhook.ConversionReviewVersions,
			ConversionCRDs:          []string{str(crd, "metadata", "name")}}
		var cc admissionregistrationv1.WebhookClientConfig
		if svc := conv.Webhook.ClientConfig.Service; svc != nil {
			cc.Service = &admissionregistrationv1.ServiceReference{
				Namespace: svc.Namespace, Name: svc.Name, Path: svc.Path, Port: svc.Port,
			}
		}
		if err := setService(&d, cc, services, deployments); err != nil {
			return nil, err
		}
		defs = append(defs, d)
	}
	sort.SliceStable(defs, func(i, j int) bool {
		if defs[i].Type != defs[j].Type {
			return defs[i].Type < defs[j].Type
		}
		return defs[i].GenerateName < defs[j].GenerateName
	})
	return defs, nil
}

// setService fills in the deployment, ports and path of a webhook served
// through a Service.
func setService(d *webhookDescription, cc admissionregistrationv1.WebhookClientConfig,
	services map[string]corev1.Service, deployments []object) error {
	if cc.Service == nil {
		return fmt.Errorf("webhook %s: no service in its clientConfig: OLM serves webhooks through a Service", d.GenerateName)
	}
	d.WebhookPath = cc.Service.Path
	svc, ok := services[cc.Service.Name]
	if !ok {
		return fmt.Errorf("webhook %s: its Service %s is not among the manifests", d.GenerateName, cc.Service.Name)
	}
	port := int32(443)
	if cc.Service.Port != nil {
		port = *cc.Service.Port
	}
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			d.ContainerPort, d.TargetPort = p.Port, &p.TargetPort
		}
	}
	selector := labels.SelectorFromSet(svc.Spec.Selector)
	for _, dep := range deployments {
		podLabels, _, _ := unstructured.NestedStringMap(dep, "spec", "template", "metadata", "labels")
		if len(svc.Spec.Selector) > 0 && selector.Matches(labels.Set(podLabels)) {
			d.DeploymentName = str(dep, "metadata", "name")
		}
	}
	if d.DeploymentName == "" {
		return fmt.Errorf("webhook %s: no Deployment's pods match the selector of its Service %s", d.GenerateName, svc.Name)
	}
	return nil
}

// permissions turns the roles bound to the service accounts into the install
// strategy's permissions (Roles, and ClusterRoles bound by a RoleBinding) and
// clusterPermissions (ClusterRoles bound by a ClusterRoleBinding). Those roles
// and bindings are not written as files: OLM creates them. Roles bound to
// nobody (the admin/editor/viewer helpers) are written as files.
func permissions(roles, bindings []object, serviceAccounts map[string]bool,
	manifests map[string]object) (perms, clusterPerms []permission, err error) {
	byRef := map[string]object{}
	for _, role := range roles {
		byRef[str(role, "kind")+"/"+str(role, "metadata", "name")] = role
	}
	usedRoles := map[string]bool{}
	nsRules, clusterRules := map[string][]rbacv1.PolicyRule{}, map[string][]rbacv1.PolicyRule{}
	for _, binding := range bindings {
		ref := str(binding, "roleRef", "kind") + "/" + str(binding, "roleRef", "name")
		role, found := byRef[ref]
		subjects, _, _ := unstructured.NestedSlice(binding, "subjects")
		var accounts []string
		for _, s := range subjects {
			subject, _ := s.(map[string]any)
			if str(subject, "kind") == "ServiceAccount" && serviceAccounts[str(subject, "name")] {
				accounts = append(accounts, str(subject, "name"))
			}
		}
		if !found || len(accounts) == 0 {
			addManifest(manifests, binding)
			continue
		}
		usedRoles[ref] = true
		var rules []rbacv1.PolicyRule
		if err := convert(role["rules"], &rules); err != nil {
			return nil, nil, fmt.Errorf("rules of %s: %w", ref, err)
		}
		target := nsRules
		if str(binding, "kind") == "ClusterRoleBinding" {
			target = clusterRules
		}
		for _, sa := range accounts {
			target[sa] = append(target[sa], rules...)
		}
	}
	for _, role := range roles {
		if !usedRoles[str(role, "kind")+"/"+str(role, "metadata", "name")] {
			addManifest(manifests, role)
		}
	}
	return sortedPermissions(nsRules), sortedPermissions(clusterRules), nil
}

func sortedPermissions(rules map[string][]rbacv1.PolicyRule) []permission {
	perms := make([]permission, 0, len(rules))
	for sa, r := range rules {
		perms = append(perms, permission{ServiceAccountName: sa, Rules: r})
	}
	sort.Slice(perms, func(i, j int) bool { return perms[i].ServiceAccountName < perms[j].ServiceAccountName })
	return perms
}

// addManifest names a file the way operator-sdk does:
// <name>_<group>_<version>_<kind>.yaml, without the group for the core group.
// The namespace is dropped: OLM installs into the one the user picks.
func addManifest(manifests map[string]object, obj object) {
	unstructured.RemoveNestedField(obj, "metadata", "namespace")
	gv := strings.ReplaceAll(str(obj, "apiVersion"), "/", "_")
	manifests[fmt.Sprintf("%s_%s_%s.yaml", str(obj, "metadata", "name"), gv, strings.ToLower(str(obj, "kind")))] = obj
}

// convert copies in (plain maps and slices) into the typed out.
func convert(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// toUnstructured turns a typed value into maps and slices.
func toUnstructured(in any) (any, error) {
	var out any
	err := convert(in, &out)
	return out, err
}

// fillCSV completes the CSV base.
func (b *bundleContents) fillCSV(o options, crds, samples []object, strategy installStrategy) error {
	csv := b.csv
	if err := unstructured.SetNestedField(csv, o.packageName+".v"+o.version, "metadata", "name"); err != nil {
		return err
	}
	if err := unstructured.SetNestedField(csv, o.version, "spec", "version"); err != nil {
		return err
	}

	sort.Slice(samples, func(i, j int) bool {
		ki := str(samples[i], "apiVersion") + "/" + str(samples[i], "kind") + "/" + str(samples[i], "metadata", "name")
		kj := str(samples[j], "apiVersion") + "/" + str(samples[j], "kind") + "/" + str(samples[j], "metadata", "name")
		return ki < kj
	})
	for _, s := range samples {
		unstructured.RemoveNestedField(s, "metadata", "namespace")
	}
	if samples == nil {
		samples = []object{}
	}
	examples, err := json.MarshalIndent(samples, "", "  ")
	if err != nil {
		return err
	}
	annotations, _, _ := unstructured.NestedStringMap(csv, "metadata", "annotations")
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations["alm-examples"] = string(examples)
	annotations["operators.operatorframework.io/project_layout"] = o.layout
	if err := unstructured.SetNestedStringMap(csv, annotations, "metadata", "annotations"); err != nil {
		return err
	}

	owned, err := ownedCRDs(csv, crds)
	if err != nil {
		return err
	}
	if err := unstructured.SetNestedField(csv, owned, "spec", "customresourcedefinitions", "owned"); err != nil {
		return err
	}
	install, err := toUnstructured(strategy)
	if err != nil {
		return err
	}
	return unstructured.SetNestedField(csv, install, "spec", "install")
}

// ownedCRDs lists every served version of every CRD, keeping what the CSV
// base already says about it (display name, descriptors).
func ownedCRDs(csv object, crds []object) ([]any, error) {
	var base []crdDescription
	if old, found, _ := unstructured.NestedSlice(csv, "spec", "customresourcedefinitions", "owned"); found {
		if err := convert(old, &base); err != nil {
			return nil, fmt.Errorf("spec.customresourcedefinitions.owned of the CSV base: %w", err)
		}
	}
	var owned []crdDescription
	for _, crd := range crds {
		versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
		for _, v := range versions {
			version, _ := v.(map[string]any)
			if served, _, _ := unstructured.NestedBool(version, "served"); !served {
				continue
			}
			d := crdDescription{
				Name:        str(crd, "metadata", "name"),
				Version:     str(version, "name"),
				Kind:        str(crd, "spec", "names", "kind"),
				DisplayName: str(crd, "spec", "names", "kind"),
				Description: str(version, "schema", "openAPIV3Schema", "description"),
			}
			for _, old := range base {
				if old.Name == d.Name && old.Version == d.Version {
					old.Kind = d.Kind
					d = old
				}
			}
			owned = append(owned, d)
		}
	}
	sort.Slice(owned, func(i, j int) bool {
		if owned[i].Name != owned[j].Name {
			return owned[i].Name < owned[j].Name
		}
		return owned[i].Version < owned[j].Version
	})
	out, err := toUnstructured(owned)
	if err != nil {
		return nil, err
	}
	list, _ := out.([]any)
	return list, nil
}

// label is one bundle annotation, which bundle.Dockerfile repeats as a label.
type label struct{ key, value string }

// annotations returns the bundle's core and test annotations, in the order
// operator-sdk writes them.
func annotations(o options) (core, test []label) {
	core = []label{
		{"operators.operatorframework.io.bundle.mediatype.v1", "registry+v1"},
		{"operators.operatorframework.io.bundle.manifests.v1", "manifests/"},
		{"operators.operatorframework.io.bundle.metadata.v1", "metadata/"},
		{"operators.operatorframework.io.bundle.package.v1", o.packageName},
		{"operators.operatorframework.io.bundle.channels.v1", o.channels},
	}
	if o.defaultChannel != "" {
		core = append(core, label{"operators.operatorframework.io.bundle.channel.default.v1", o.defaultChannel})
	}
	core = append(core, label{"operators.operatorframework.io.metrics.project_layout", o.layout})
	test = []label{
		{"operators.operatorframework.io.test.mediatype.v1", "scorecard+v1"},
		{"operators.operatorframework.io.test.config.v1", "tests/scorecard/"},
	}
	return core, test
}

func (b *bundleContents) write(o options) error {
	manifestsDir := filepath.Join(o.outputDir, "manifests")
	if _, err := os.Stat(manifestsDir); err == nil && !o.overwrite {
		return fmt.Errorf("%s exists: pass --overwrite to replace it", manifestsDir)
	}
	// Start afresh, so that a file of an object that is gone does not linger.
	for _, dir := range []string{"manifests", "metadata", "tests"} {
		if err := os.RemoveAll(filepath.Join(o.outputDir, dir)); err != nil {
			return err
		}
	}

	files := map[string]object{
		filepath.Join(manifestsDir, o.packageName+".clusterserviceversion.yaml"): b.csv,
	}
	for name, obj := range b.manifests {
		files[filepath.Join(manifestsDir, name)] = obj
	}
	if b.scorecard != nil {
		files[filepath.Join(o.outputDir, "tests", "scorecard", "config.yaml")] = b.scorecard
	}
	for path, obj := range files {
		data, err := yaml.Marshal(obj)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := writeFile(path, data); err != nil {
			return err
		}
	}

	core, test := annotations(o)
	var meta, docker bytes.Buffer
	meta.WriteString("annotations:\n  # Core bundle annotations.\n")
	docker.WriteString("FROM scratch\n\n# Core bundle labels.\n")
	for _, l := range core {
		fmt.Fprintf(&meta, "  %s: %s\n", l.key, l.value)
		fmt.Fprintf(&docker, "LABEL %s=%s\n", l.key, l.value)
	}
	meta.WriteString("\n  # Annotations for testing.\n")
	docker.WriteString("\n# Labels for testing.\n")
	for _, l := range test {
		fmt.Fprintf(&meta, "  %s: %s\n", l.key, l.value)
		fmt.Fprintf(&docker, "LABEL %s=%s\n", l.key, l.value)
	}
	docker.WriteString("\n# Copy files to locations specified by labels.\n")
	fmt.Fprintf(&docker, "COPY %s/manifests /manifests/\n", filepath.ToSlash(o.outputDir))
	fmt.Fprintf(&docker, "COPY %s/metadata /metadata/\n", filepath.ToSlash(o.outputDir))
	fmt.Fprintf(&docker, "COPY %s/tests/scorecard /tests/scorecard/\n", filepath.ToSlash(o.outputDir))

	if err := writeFile(filepath.Join(o.outputDir, "metadata", "annotations.yaml"), meta.Bytes()); err != nil {
		return err
	}
	return writeFile(o.dockerfile, docker.Bytes())
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func ptrTo[T any](v T) *T { return &v }
