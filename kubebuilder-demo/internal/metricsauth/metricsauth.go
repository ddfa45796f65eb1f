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

// Package metricsauth guards the manager's metrics endpoint as
// controller-runtime's filters.WithAuthenticationAndAuthorization does: a
// request needs a bearer token that the API server accepts (a TokenReview),
// for a user that the API server allows to get the request's path (a
// SubjectAccessReview on a non-resource URL, such as the scaffold's
// metrics-reader ClusterRole grants). Anything else is 401 or 403.
//
// It asks the API server with client-go's typed clients, because the
// scaffold's filter links k8s.io/apiserver's delegating authenticator and
// authorizer, and with them CEL, gRPC and OpenTelemetry, whose package
// initialisers run at every start: 17 MB of the manager's memory
// (docs/bench.md, "Memory, and the managers' limits").
package metricsauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// How long an answer of the API server is trusted, as controller-runtime's
// filter trusts it: a token's review a minute, an allowed request five, a
// denied one 30 seconds. Without them every scrape would cost two requests
// to the API server, and a client sending bad tokens as many as it likes.
const (
	tokenTTL      = time.Minute
	allowTTL      = 5 * time.Minute
	denyTTL       = 30 * time.Second
	reviewTimeout = 10 * time.Second
	cacheEntries  = 1024
)

// Filter is a metricsserver.Options FilterProvider: the manager calls it
// with its own rest.Config, so the reviews are made with the manager's
// rights (config/rbac/metrics_auth_role.yaml: create tokenreviews and
// subjectaccessreviews).
func Filter(config *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationclient.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("metrics authentication: %w", err)
	}
	authz, err := authorizationclient.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("metrics authorization: %w", err)
	}
	g := &guard{
		tokens:    authn.TokenReviews(),
		access:    authz.SubjectAccessReviews(),
		users:     cache.NewLRUExpireCache(cacheEntries),
		decisions: cache.NewLRUExpireCache(cacheEntries),
	}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			ctx, cancel := context.WithTimeout(req.Context(), reviewTimeout)
			defer cancel()

			// 1. Who is asking: the bearer token, reviewed by the API server.
			user, err := g.authenticate(ctx, req)
			if err != nil {
				log.Error(err, "Authentication failed")
				http.Error(w, "Authentication failed", http.StatusInternalServerError)
				return
			}
			if user == nil {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}

			// 2. May they: get (the method, lower case) on the path.
			allowed, err := g.authorize(ctx, user, strings.ToLower(req.Method), req.URL.Path)
			if err != nil {
				log.Error(err, "Authorization failed", "user", user.Username)
				http.Error(w, "Authorization for user "+user.Username+" failed", http.StatusInternalServerError)
				return
			}
			if !allowed {
				http.Error(w, "Authorization denied for user "+user.Username, http.StatusForbidden)
				return
			}

			// 3. The metrics, without the token: nothing after this needs it.
			req.Header.Del("Authorization")
			next.ServeHTTP(w, req)
		}), nil
	}, nil
}

type guard struct {
	tokens authenticationclient.TokenReviewInterface
	access authorizationclient.SubjectAccessReviewInterface
	// users maps a token's hash to the *authenticationv1.UserInfo it
	// authenticates, or to nil; decisions maps a review's spec to a bool.
	users, decisions *cache.LRUExpireCache
}

// authenticate returns the user the request's bearer token belongs to, or
// nil when it has none or the API server does not accept it.
func (g *guard) authenticate(ctx context.Context, req *http.Request) (*authenticationv1.UserInfo, error) {
	scheme, token, _ := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
	if !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return nil, nil
	}
	key := sha256.Sum256([]byte(token))
	if u, ok := g.users.Get(key); ok {
		return u.(*authenticationv1.UserInfo), nil
	}
	review, err := g.tokens.Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating a TokenReview: %w", err)
	}
	var user *authenticationv1.UserInfo
	if review.Status.Authenticated {
		user = &review.Status.User
	}
	g.users.Add(key, user, tokenTTL)
	return user, nil
}

// authorize asks whether user may do verb on the non-resource URL path.
func (g *guard) authorize(ctx context.Context, user *authenticationv1.UserInfo, verb, path string) (bool, error) {
	spec := authorizationv1.SubjectAccessReviewSpec{
		User:                  user.Username,
		UID:                   user.UID,
		Groups:                user.Groups,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
	}
	if len(user.Extra) > 0 {
		spec.Extra = make(map[string]authorizationv1.ExtraValue, len(user.Extra))
		for k, v := range user.Extra {
			spec.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	key, err := json.Marshal(spec) // map keys sorted: one key per question
	if err != nil {
		return false, err
	}
	if allowed, ok := g.decisions.Get(string(key)); ok {
		return allowed.(bool), nil
	}
	review, err := g.access.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("creating a SubjectAccessReview: %w", err)
	}
	allowed := review.Status.Allowed && !review.Status.Denied
	ttl := denyTTL
	if allowed {
		ttl = allowTTL
	}
	g.decisions.Add(string(key), allowed, ttl)
	return allowed, nil
}
