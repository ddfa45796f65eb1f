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

package v2

import (
	ctrl "sigs.k8s.io/controller-runtime"

	zhhnzwv2 "example.com/k8s-demo/operator-demo/api/zhhnzw/v2"
)

// SetupCustomPodWebhookWithManager registers the conversion webhook for
// CustomPod in the manager: the builder sees that v2 is a conversion.Hub
// and v1 a conversion.Convertible (api/*/custompod_conversion.go), and
// serves /convert, where the API server sends the CustomPods it must
// convert between v1 and v2.
func SetupCustomPodWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &zhhnzwv2.CustomPod{}).
		Complete()
}
