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

package v1alpha1

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	debugv1alpha1 "example.com/k8s-demo/operator-demo/api/debug/v1alpha1"
)

var podbuggertoollog = logf.Log.WithName("podbuggertool-resource")

// SetupPodBuggerToolWebhookWithManager registers the webhook for
// PodBuggerTool in the manager.
func SetupPodBuggerToolWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &debugv1alpha1.PodBuggerTool{}).
		WithValidator(&PodBuggerToolValidator{Client: mgr.GetClient()}).
		Complete()
}

// Written by hand, in the layout `create webhook --programmatic-validation`
// gives. podbuggertools only, not podbuggertools/status: the controller's
// status writes pass unchecked (its ServiceAccount may update
// pods/ephemeralcontainers, not patch them, so it would be refused). Deletion
// adds no debugger. timeoutSeconds=5, as the Vpc's: the check is one request
// to the API server.
// +kubebuilder:webhook:path=/validate-debug-mock-com-v1alpha1-podbuggertool,mutating=false,failurePolicy=fail,sideEffects=None,groups=debug.mock.com,resources=podbuggertools,verbs=create;update,versions=v1alpha1,name=vpodbuggertool-v1alpha1.kb.io,admissionReviewVersions=v1,timeoutSeconds=5

// The SubjectAccessReview is the manager's request; the metrics endpoint's
// authorization needs the same right (config/rbac/metrics_auth_role.yaml),
// which a project without metrics would drop.
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// PodBuggerToolValidator admits a PodBuggerTool, or a change to its spec,
// only from a user who may do what it does. The controller adds debuggers
// with its own rights; without this check, whoever may create a
// PodBuggerTool could run an image of their choice in the namespace's pods
// (a confused deputy). It is config/policy/podbuggertool_debug_rights.yaml's
// check, for where that ValidatingAdmissionPolicy cannot go: an OLM bundle
// carries webhooks, not policies. Where both are installed (make deploy), the
// API server asks the policy first, and the webhook sees only what it
// admitted.
//
// +kubebuilder:object:generate=false
type PodBuggerToolValidator struct {
	// Client creates the SubjectAccessReviews: the manager's client.
	Client client.Client
}

var _ admission.Validator[*debugv1alpha1.PodBuggerTool] = &PodBuggerToolValidator{}

// ValidateCreate implements admission.Validator so a webhook will be registered for the type PodBuggerTool.
func (v *PodBuggerToolValidator) ValidateCreate(ctx context.Context, obj *debugv1alpha1.PodBuggerTool) (admission.Warnings, error) {
	return nil, v.mayDebug(ctx, obj)
}

// ValidateUpdate implements admission.Validator so a webhook will be registered for the type PodBuggerTool.
// An update that leaves the spec as it is (labels, annotations, a finalizer)
// changes no debugger: anyone who may update it may do that, as the policy's
// matchCondition says.
func (v *PodBuggerToolValidator) ValidateUpdate(ctx context.Context, oldObj, newObj *debugv1alpha1.PodBuggerTool) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(oldObj.Spec, newObj.Spec) {
		return nil, nil
	}
	return nil, v.mayDebug(ctx, newObj)
}

// ValidateDelete implements admission.Validator so a webhook will be registered for the type PodBuggerTool.
// The marker registers create and update only, so this is never called.
func (v *PodBuggerToolValidator) ValidateDelete(_ context.Context, _ *debugv1alpha1.PodBuggerTool) (admission.Warnings, error) {
	return nil, nil
}

// mayDebug asks the API server whether the request's user may patch
// pods/ephemeralcontainers in the PodBuggerTool's namespace, what `kubectl
// debug` needs, and refuses the request if not. It fails closed: no answer
// is a refusal, as failurePolicy Fail makes a webhook that does not answer.
func (v *PodBuggerToolValidator) mayDebug(ctx context.Context, tool *debugv1alpha1.PodBuggerTool) error {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("refused: want the admission request, to check its user's rights: %w", err))
	}
	user := req.UserInfo
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	// +docs:begin podbuggertool-sar
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, Groups: user.Groups, UID: user.UID, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: tool.Namespace, Verb: "patch",
			Group: "", Resource: "pods", Subresource: "ephemeralcontainers",
		},
	}}
	if err := v.Client.Create(ctx, sar); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("refused: could not ask the API server whether user %s may patch "+
			"pods/ephemeralcontainers in namespace %s: SubjectAccessReview: %w", user.Username, tool.Namespace, err))
	}
	if !sar.Status.Allowed {
		logRefusal(tool, user.Username, sar.Status)
		return apierrors.NewForbidden(debugv1alpha1.GroupVersion.WithResource("podbuggertools").GroupResource(), tool.Name,
			fmt.Errorf("user %s may not patch pods/ephemeralcontainers in namespace %s: a PodBuggerTool adds "+
				"ephemeral containers to pods, as kubectl debug does, and needs the same right", user.Username, tool.Namespace))
	}
	// +docs:end podbuggertool-sar
	podbuggertoollog.V(1).Info("Author may debug pods", "namespace", tool.Namespace, "name", tool.Name, "user", user.Username)
	return nil
}

// logRefusal gives the manager's log the authorizer's own words: the
// refusal's message cannot tell "no rule allows it" from an authorizer that
// could not answer (evaluationError).
func logRefusal(tool *debugv1alpha1.PodBuggerTool, user string, status authorizationv1.SubjectAccessReviewStatus) {
	podbuggertoollog.Info("Refused a PodBuggerTool: its author may not patch pods/ephemeralcontainers",
		"namespace", tool.Namespace, "name", tool.Name, "user", user,
		"reason", status.Reason, "evaluationError", status.EvaluationError)
}
