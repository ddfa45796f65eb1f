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

package network

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkv1 "example.com/k8s-demo/operator-demo/api/network/v1"
)

// The API server checks every Vpc against the schema (and the CEL rules)
// controller-gen wrote from the markers in api/network/v1/vpc_types.go,
// including whether cidrblock can be carved into subnetnum equal subnets.
// The controller checks that again (vpc_controller_test.go), for a Vpc stored
// before those rules.
var _ = Describe("Vpc validation", func() {
	var namespace string

	BeforeEach(func() {
		namespace = newNamespace(ctx)
	})

	// create sends spec as-is, with strict field validation as kubectl does,
	// as a dry run: validated, not stored.
	createNamed := func(metadata, spec map[string]any) error {
		metadata["namespace"] = namespace
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": networkv1.GroupVersion.String(),
			"kind":       "Vpc",
			"metadata":   metadata,
			"spec":       spec,
		}}
		return k8sClient.Create(ctx, u, client.FieldValidation(metav1.FieldValidationStrict), client.DryRunAll)
	}
	create := func(spec map[string]any) error {
		return createNamed(map[string]any{"generateName": "validation-"}, spec)
	}

	// spec is a valid spec with the given fields replaced (a nil value removes one).
	spec := func(kv ...any) map[string]any {
		s := map[string]any{"vpcname": "demo", "cidrblock": "10.0.0.0/16", "subnetnum": int64(4)}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(s, kv[i].(string))
			} else {
				s[kv[i].(string)] = kv[i+1]
			}
		}
		return s
	}

	DescribeTable("should refuse a bad spec with a message naming the field",
		func(s map[string]any, message string) {
			err := create(s)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("no vpcname", spec("vpcname", nil), "spec.vpcname: Required value"),
		Entry("an empty vpcname", spec("vpcname", ""),
			`spec.vpcname: Invalid value: "": spec.vpcname in body should be at least 1 chars long`),
		Entry("no cidrblock", spec("cidrblock", nil), "spec.cidrblock: Required value"),
		Entry("a cidrblock that is not a CIDR", spec("cidrblock", "not-a-cidr"),
			`spec.cidrblock: Invalid value: "not-a-cidr": must be a CIDR such as 10.0.0.0/16`),
		Entry("an address without a prefix length", spec("cidrblock", "10.0.0.0"),
			`spec.cidrblock: Invalid value: "10.0.0.0": must be a CIDR`),
		Entry("a prefix length above 32", spec("cidrblock", "10.0.0.0/33"),
			`spec.cidrblock: Invalid value: "10.0.0.0/33": must be a CIDR`),
		Entry("host bits set", spec("cidrblock", "10.0.0.1/16"),
			`spec.cidrblock: Invalid value: "10.0.0.1/16": must have no bits set after the prefix length`),
		Entry("a cidrblock given as a number", spec("cidrblock", int64(10)),
			`spec.cidrblock: Invalid value: "integer": spec.cidrblock in body must be of type string`),
		Entry("no subnetnum", spec("subnetnum", nil), "spec.subnetnum: Required value"),
		Entry("subnetnum 0", spec("subnetnum", int64(0)),
			"spec.subnetnum: Invalid value: 0: spec.subnetnum in body should be greater than or equal to 1"),
		Entry("subnetnum 257", spec("subnetnum", int64(257)),
			"spec.subnetnum: Invalid value: 257: spec.subnetnum in body should be less than or equal to 256"),
		Entry("subnetnum given as a string", spec("subnetnum", "four"),
			`spec.subnetnum: Invalid value: "string": spec.subnetnum in body must be of type integer: "string"`),
		Entry("an unknown field", spec("gateway", "10.0.0.1"), `unknown field "spec.gateway"`),
		Entry("subnetnum not a power of two", spec("subnetnum", int64(3)),
			"spec.subnetnum: Invalid value: 3: must be a power of two (1, 2, 4, ..., 256)"),
		Entry("IPv6 into 6", spec("cidrblock", "fd00::/48", "subnetnum", int64(6)),
			"spec.subnetnum: Invalid value: 6: must be a power of two"),
		Entry("a /30 into 8: each a /33", spec("cidrblock", "10.0.0.0/30", "subnetnum", int64(8)),
			"spec.subnetnum: Invalid value: is too many subnets for cidrblock: each would have a prefix longer than the address"),
		Entry("an IPv6 /127 into 4: each a /129", spec("cidrblock", "fd00::/127", "subnetnum", int64(4)),
			"spec.subnetnum: Invalid value: is too many subnets for cidrblock"),
	)

	It("should refuse a name longer than 63 characters, the longest label value", func() {
		err := createNamed(map[string]any{"name": strings.Repeat("v", 64)}, spec())
		Expect(err).To(MatchError(ContainSubstring("metadata.name must be at most 63 characters")))
		Expect(createNamed(map[string]any{"name": strings.Repeat("v", 63)}, spec())).To(Succeed())
		// A generated name is cut to fit: 58 characters and a suffix of 5.
		Expect(createNamed(map[string]any{"generateName": strings.Repeat("v", 63)}, spec())).To(Succeed())
	})

	DescribeTable("should accept a good spec",
		func(s map[string]any) { Expect(create(s)).To(Succeed()) },
		Entry("IPv4", spec()),
		Entry("IPv6", spec("cidrblock", "fd00::/48")),
		Entry("a single address", spec("cidrblock", "10.0.0.1/32", "subnetnum", int64(1))),
		Entry("256 subnets", spec("subnetnum", int64(256))),
		Entry("a /24 into 256 single addresses", spec("cidrblock", "10.0.0.0/24", "subnetnum", int64(256))),
		Entry("an IPv6 /126 into 4", spec("cidrblock", "fd00::/126", "subnetnum", int64(4))),
	)
})
