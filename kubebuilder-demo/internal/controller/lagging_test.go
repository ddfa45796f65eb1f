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

package controller

import (
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
)

// laggingConfig is cfg with every watch held back: the cache that reads
// through it sees each event a quarter of a second after the API server sent
// it, as a cache does behind a busy API server. Test plumbing: a controller
// is never given it.
func laggingConfig(cfg *rest.Config) *rest.Config {
	late := rest.CopyConfig(cfg)
	late.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return lateWatches{rt} }
	return late
}

// lateWatches holds back each read of a watch's stream.
type lateWatches struct{ http.RoundTripper }

func (l lateWatches) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.RoundTripper.RoundTrip(req)
	if err == nil && req.URL.Query().Get("watch") == "true" {
		resp.Body = lateBody{resp.Body}
	}
	return resp, err
}

type lateBody struct{ io.ReadCloser }

// Read sleeps after the read, not before: a read that waited on an idle
// stream would otherwise hand over the next event at once.
func (b lateBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	time.Sleep(250 * time.Millisecond)
	return n, err
}
