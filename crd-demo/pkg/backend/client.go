package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// HTTPClient is a Client that talks to the backend's HTTP API (NewHandler).
type HTTPClient struct {
	baseURL string
	http    *http.Client
}

var _ Client = &HTTPClient{}

// NewHTTPClient returns a client for the backend at baseURL, such as
// http://127.0.0.1:8090. Each request times out after 10 seconds: a hung
// backend must not hang the controller's workers.
func NewHTTPClient(baseURL string) (*HTTPClient, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("backend URL %q: want http(s)://host:port", baseURL)
	}
	return &HTTPClient{
		baseURL: strings.TrimSuffix(baseURL, "/"),
		http:    &http.Client{Timeout: 10 * time.Second},
	}, nil
}

func (c *HTTPClient) List(ctx context.Context, name string) ([]Network, error) {
	path := "/v2.0/networks"
	if name != "" {
		path += "?" + url.Values{"name": {name}}.Encode()
	}
	var out networksBody
	err := c.do(ctx, http.MethodGet, path, nil, http.StatusOK, &out)
	return out.Networks, err
}

func (c *HTTPClient) Get(ctx context.Context, id string) (Network, error) {
	var out networkBody
	err := c.do(ctx, http.MethodGet, "/v2.0/networks/"+url.PathEscape(id), nil, http.StatusOK, &out)
	return out.Network, err
}

func (c *HTTPClient) Create(ctx context.Context, n Network) (Network, error) {
	var out networkBody
	err := c.do(ctx, http.MethodPost, "/v2.0/networks", networkBody{Network: n}, http.StatusCreated, &out)
	return out.Network, err
}

func (c *HTTPClient) Update(ctx context.Context, n Network) (Network, error) {
	var out networkBody
	err := c.do(ctx, http.MethodPut, "/v2.0/networks/"+url.PathEscape(n.ID), networkBody{Network: n}, http.StatusOK, &out)
	return out.Network, err
}

func (c *HTTPClient) Delete(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v2.0/networks/"+url.PathEscape(id), nil, http.StatusNoContent, nil)
}

// do sends in (if not nil) as JSON, expects status want and decodes the
// response into out (if not nil). An error response becomes the matching
// ErrNotFound, ErrConflict or ErrInvalid, carrying the server's message.
func (c *HTTPClient) do(ctx context.Context, method, path string, in any, want int, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("network backend: %w", err)
	}
	defer resp.Body.Close()

	if resp.StatusCode != want {
		var e errorBody
		_ = json.NewDecoder(resp.Body).Decode(&e)
		msg := e.NeutronError.Message
		if msg == "" {
			msg = resp.Status
		}
		switch resp.StatusCode {
		case http.StatusNotFound:
			return &responseError{msg: msg, kind: ErrNotFound}
		case http.StatusConflict:
			return &responseError{msg: msg, kind: ErrConflict}
		case http.StatusBadRequest:
			return &responseError{msg: msg, kind: ErrInvalid}
		}
		return fmt.Errorf("network backend: %s %s: %s", method, path, msg)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("network backend: %s %s: decoding response: %w", method, path, err)
	}
	return nil
}

// responseError is an error response: the server's message, which already
// names the problem, and the Client error it stands for, for errors.Is.
type responseError struct {
	msg  string
	kind error
}

func (e *responseError) Error() string { return e.msg }
func (e *responseError) Unwrap() error { return e.kind }

// The wire format, after Neutron's: a single network travels as
// {"network": {...}}, a list as {"networks": [...]}, an error as
// {"NeutronError": {"type": ..., "message": ..., "detail": ""}}.
type networkBody struct {
	Network Network `json:"network"`
}

type networksBody struct {
	Networks []Network `json:"networks"`
}

type errorBody struct {
	NeutronError struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Detail  string `json:"detail"`
	} `json:"NeutronError"`
}
