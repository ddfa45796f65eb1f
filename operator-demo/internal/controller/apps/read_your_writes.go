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

package apps

import (
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReadYourWritesClient is the fourth answer to the stale cache
// (docs/bench.md, "The stale cache: four answers"): controller-runtime's
// read-your-writes client, experimental in v0.25. Its reads come from mgr's
// cache, as the manager's client's do, but first wait until the cache shows every write this client
// made before them: a List of pods after a create waits for the new pod's
// event. A PodSetReconciler given it (ReadYourWrites) skips expectations.
//
// It is a client of its own, not the manager's: only the PodSet controller's
// reads wait, for its own writes. controller-runtime documents that it is not
// correct for a kind cached in more than one namespace; the manager caches
// one (--namespace) or all.
func ReadYourWritesClient(mgr ctrl.Manager) (client.Client, error) {
	return client.New(mgr.GetConfig(), client.Options{
		Scheme:     mgr.GetScheme(),
		Mapper:     mgr.GetRESTMapper(),
		HTTPClient: mgr.GetHTTPClient(),
		Cache: &client.CacheOptions{
			Reader:                          mgr.GetCache(),
			EnableReadYourWritesConsistency: ptr.To(true),
		},
	})
}
