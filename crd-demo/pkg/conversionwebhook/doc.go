// Package conversionwebhook is CustomPod's conversion webhook, written by
// hand: what controller-runtime's conversion webhook (pkg/webhook/conversion)
// does for the kubebuilder and operator-sdk demos, step by step.
//
// # Why a webhook
//
// The API server stores every CustomPod in one version, v2, and serves both
// v1 and v2. A client that asks for the other version gets an object the API
// server converted for it; so does a write in v1, converted to v2 before it
// is stored. For a CRD the API server cannot convert on its own (it knows
// the schemas, not what the fields mean): with `conversion.strategy: None`
// it only rewrites apiVersion, which would lose v2's template. With
// `strategy: Webhook` it POSTs a ConversionReview (apiextensions.k8s.io/v1)
// holding the objects and the version wanted to the URL the CRD names, over
// HTTPS, and uses the objects that come back.
//
// # What is in this package
//
//   - handler.go: the http.Handler. It decodes the ConversionReview, decodes
//     each object into the Go type of its version, converts it with the
//     functions in pkg/apis/zhhnzw/v1/conversion.go, encodes it, and answers
//     with the request's UID. What it cannot convert it answers with a
//     Failure naming the object; the API server turns that into the error
//     the client sees.
//   - server.go: the HTTPS server (/convert and /healthz), with its serving
//     certificate from files, re-read when they change (as cert-manager
//     rotates them), or from memory.
//   - selfsigned.go: a CA and a serving certificate made at start (by
//     client-go's util/cert), for when nothing else provides one.
//   - crd.go: the patch that writes the CRD's
//     spec.conversion.webhook.clientConfig: where the webhook is (a URL, or
//     a Service in the cluster) and the CA that signed its certificate.
//
// # Choices
//
// The API server only calls HTTPS, and checks the certificate against the
// caBundle in the CRD (or, without one, its own trust store). Someone must
// therefore make a certificate and write its CA into the CRD. A cluster
// usually has cert-manager do both (a Certificate, and its CA injector
// annotating the CRD): that is the --tls-cert-file/--tls-private-key-file
// mode, in which this process only serves. With no cert-manager (this
// tutorial's clusters, a process on your machine, envtest), the
// self-signed mode makes a CA and a certificate for the names it is reached
// by, in memory, at every start, and patches the CRD itself: its
// ServiceAccount then needs get and patch on that one
// CustomResourceDefinition. It is meant for one replica: two would each
// make a CA and overwrite each other's caBundle. For the same reason its
// Deployment (config/manager/manager.yaml) is rolled out with the Recreate
// strategy: under RollingUpdate the new pod replaces the caBundle while the
// old one is still behind the Service, and conversions sent to the old pod
// fail TLS until it is gone. A rollout is a short outage instead.
//
// The webhook and the controller are separable: cmd/custompod-controller
// starts the webhook first, on every replica, before leader election and
// before the controller's caches sync (the caches list CustomPods, and
// listing objects stored in v1 asks this very webhook for v2). The webhook
// needs no cache and no client: the API server sends it everything.
//
// The handler decodes objects into the typed structs rather than editing
// them as maps: the conversion functions are then plain Go, testable and
// fuzzable without an API server, and shared with the controller-runtime
// demos. Decoding is strict: an unknown field means the CRD's schema has a
// field these types do not, and converting would silently drop it, so the
// webhook refuses instead.
package conversionwebhook
