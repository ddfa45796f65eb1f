package backend

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/klog/v2/ktesting"
)

// newServer serves store over HTTP for the test and returns a client for it.
func newServer(t *testing.T, store Client) *HTTPClient {
	t.Helper()
	logger, _ := ktesting.NewTestContext(t)
	srv := httptest.NewServer(NewHandler(store, logger))
	t.Cleanup(srv.Close)
	c, err := NewHTTPClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHTTPRoundTrip drives every endpoint through the HTTP client and checks
// that the errors come back as the Client errors.
func TestHTTPRoundTrip(t *testing.T) {
	ctx := context.Background()
	c := newServer(t, NewMemoryStore())

	created, err := c.Create(ctx, Network{Name: "default/example-network", CIDR: "192.168.0.0/16", GatewayIP: "192.168.0.1", Description: "owner-uid"})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if created.ID == "" || created.Description != "owner-uid" {
		t.Fatalf("Create returned %+v; want a new ID and the description sent", created)
	}
	if _, err := c.Create(ctx, Network{Name: "default/other", CIDR: "10.0.0.0/8", GatewayIP: "10.0.0.1"}); err != nil {
		t.Fatalf("Create: %v", err)
	}

	got, err := c.Get(ctx, created.ID)
	if err != nil || got != created {
		t.Fatalf("Get = %+v, %v; want %+v", got, err, created)
	}
	found, err := FindByName(ctx, c, "default/example-network")
	if err != nil || found != created {
		t.Fatalf("FindByName = %+v, %v; want %+v", found, err, created)
	}
	all, err := c.List(ctx, "")
	if err != nil || len(all) != 2 || all[0].Name != "default/example-network" || all[1].Name != "default/other" {
		t.Fatalf("List = %+v, %v; want both networks sorted by name", all, err)
	}

	want := created
	want.GatewayIP = "192.168.0.254"
	updated, err := c.Update(ctx, want)
	if err != nil || updated != want {
		t.Fatalf("Update = %+v, %v; want %+v", updated, err, want)
	}
	if got, _ := c.Get(ctx, created.ID); got != want {
		t.Fatalf("after Update, Get = %+v; want %+v", got, want)
	}

	if err := c.Delete(ctx, created.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := c.Get(ctx, created.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: err = %v; want ErrNotFound", err)
	}
	if _, err := FindByName(ctx, c, "default/example-network"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("FindByName after Delete: err = %v; want ErrNotFound", err)
	}
	if err := c.Delete(ctx, created.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Delete: err = %v; want ErrNotFound", err)
	}
	if _, err := c.Update(ctx, want); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Update after Delete: err = %v; want ErrNotFound", err)
	}
}

func TestHTTPErrors(t *testing.T) {
	ctx := context.Background()
	c := newServer(t, NewMemoryStore())
	if _, err := c.Create(ctx, Network{Name: "ns/a", CIDR: "10.0.0.0/8", GatewayIP: "10.0.0.1"}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name    string
		network Network
		want    error
		message string
	}{
		{"duplicate name", Network{Name: "ns/a", CIDR: "10.0.0.0/8", GatewayIP: "10.0.0.1"}, ErrConflict, `"ns/a"`},
		{"no name", Network{CIDR: "10.0.0.0/8", GatewayIP: "10.0.0.1"}, ErrInvalid, "name is required"},
		{"bad cidr", Network{Name: "ns/b", CIDR: "10.0.0.0/33", GatewayIP: "10.0.0.1"}, ErrInvalid, "cidr"},
		{"host bits", Network{Name: "ns/b", CIDR: "10.0.0.1/8", GatewayIP: "10.0.0.1"}, ErrInvalid, "cidr"},
		{"bad gateway", Network{Name: "ns/b", CIDR: "10.0.0.0/8", GatewayIP: "10.0.0"}, ErrInvalid, "gateway_ip"},
		{"gateway outside", Network{Name: "ns/b", CIDR: "10.0.0.0/8", GatewayIP: "192.168.0.1"}, ErrInvalid, "not inside"},
		{"blank name", Network{Name: "   ", CIDR: "10.0.0.0/8", GatewayIP: "10.0.0.1"}, ErrInvalid, "name is required"},
		{"NUL in name", Network{Name: "ns/b\x00", CIDR: "10.0.0.0/8", GatewayIP: "10.0.0.1"}, ErrInvalid, "printable"},
		{"long name", Network{Name: "ns/" + strings.Repeat("b", MaxNameLength), CIDR: "10.0.0.0/8", GatewayIP: "10.0.0.1"}, ErrInvalid, "at most 317"},
		{"long description", Network{Name: "ns/b", CIDR: "10.0.0.0/8", GatewayIP: "10.0.0.1", Description: strings.Repeat("d", MaxDescriptionLength+1)}, ErrInvalid, "description"},
		{"IPv4-mapped cidr", Network{Name: "ns/b", CIDR: "::ffff:10.0.0.0/120", GatewayIP: "::ffff:10.0.0.1"}, ErrInvalid, "IPv4-mapped"},
		// What the CRD refuses too (crd/network.yaml; crd/validation_test.go checks that the two agree).
		{"gateway is the network address", Network{Name: "ns/b", CIDR: "10.0.0.0/24", GatewayIP: "10.0.0.0"}, ErrInvalid, "network address"},
		{"gateway is the IPv6 network address", Network{Name: "ns/b", CIDR: "fd00::/64", GatewayIP: "fd00::"}, ErrInvalid, "network address"},
		{"gateway is the broadcast address", Network{Name: "ns/b", CIDR: "10.0.0.0/24", GatewayIP: "10.0.0.255"}, ErrInvalid, "broadcast address"},
		{"gateway is the broadcast address of a /20", Network{Name: "ns/b", CIDR: "192.168.0.0/20", GatewayIP: "192.168.15.255"}, ErrInvalid, "broadcast address"},
		{"every IPv4 address", Network{Name: "ns/b", CIDR: "0.0.0.0/0", GatewayIP: "10.0.0.1"}, ErrInvalid, "every address"},
		{"every IPv6 address", Network{Name: "ns/b", CIDR: "::/0", GatewayIP: "fd00::1"}, ErrInvalid, "every address"},
		{"loopback", Network{Name: "ns/b", CIDR: "127.0.0.0/8", GatewayIP: "127.0.0.1"}, ErrInvalid, "loopback"},
		{"overlaps loopback", Network{Name: "ns/b", CIDR: "120.0.0.0/5", GatewayIP: "120.0.0.1"}, ErrInvalid, "loopback"},
		{"link-local", Network{Name: "ns/b", CIDR: "169.254.0.0/16", GatewayIP: "169.254.0.1"}, ErrInvalid, "link-local"},
		{"multicast", Network{Name: "ns/b", CIDR: "224.0.0.0/4", GatewayIP: "224.0.0.1"}, ErrInvalid, "multicast"},
		{"IPv6 multicast", Network{Name: "ns/b", CIDR: "ff05::/16", GatewayIP: "ff05::1"}, ErrInvalid, "multicast"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Create(ctx, tc.network)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("Create: err = %v; want %v mentioning %s", err, tc.want, tc.message)
			}
		})
	}
}

// TestHTTPWireFormat checks the raw API, as curl would see it: Neutron's
// envelopes, the partial PUT and the refusal of unknown fields.
func TestHTTPWireFormat(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	srv := httptest.NewServer(NewHandler(NewMemoryStore(), logger))
	defer srv.Close()

	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(data)
	}

	if code, body := do("GET", "/v2.0/networks", ""); code != 200 || strings.TrimSpace(body) != `{"networks":[]}` {
		t.Fatalf("empty list: %d %s", code, body)
	}
	code, body := do("POST", "/v2.0/networks", `{"network": {"name": "ns/a", "cidr": "10.0.0.0/8", "gateway_ip": "10.0.0.1", "description": "owner-uid"}}`)
	if code != 201 || !strings.Contains(body, `"gateway_ip":"10.0.0.1"`) || !strings.Contains(body, `"description":"owner-uid"`) {
		t.Fatalf("create: %d %s", code, body)
	}
	id := body[strings.Index(body, `"id":"`)+6:]
	id = id[:strings.Index(id, `"`)]

	// PUT changes only the fields it is given.
	if code, body := do("PUT", "/v2.0/networks/"+id, `{"network": {"gateway_ip": "10.0.0.254"}}`); code != 200 ||
		!strings.Contains(body, `"gateway_ip":"10.0.0.254"`) || !strings.Contains(body, `"cidr":"10.0.0.0/8"`) ||
		!strings.Contains(body, `"description":"owner-uid"`) {
		t.Fatalf("partial update: %d %s", code, body)
	}
	if code, body := do("POST", "/v2.0/networks", `{"network": {"name": "ns/b", "cidr": "10.0.0.0/8", "gateway_ip": "10.0.0.1", "mtu": 1500}}`); code != 400 ||
		!strings.Contains(body, `"NeutronError"`) || !strings.Contains(body, "mtu") {
		t.Fatalf("unknown field: %d %s", code, body)
	}
	if code, body := do("POST", "/v2.0/networks", `{"network": {"name": "ns/c", "cidr": "10.0.0.0/8", "gateway_ip": "10.0.0.1"}} GARBAGE`); code != 400 ||
		!strings.Contains(body, "after the JSON value") {
		t.Fatalf("trailing data: %d %s", code, body)
	}
	big := `{"network": {"name": "ns/d", "cidr": "10.0.0.0/8", "gateway_ip": "10.0.0.1", "description": "` + strings.Repeat("x", MaxBodyBytes) + `"}}`
	if code, body := do("POST", "/v2.0/networks", big); code != 413 || !strings.Contains(body, `"type":"RequestEntityTooLarge"`) {
		t.Fatalf("body over %d bytes: %d %.200s", MaxBodyBytes, code, body)
	}
	if code, body := do("GET", "/v2.0/networks/nope", ""); code != 404 || !strings.Contains(body, `"type":"NetworkNotFound"`) {
		t.Fatalf("not found: %d %s", code, body)
	}
	if code, _ := do("DELETE", "/v2.0/networks/"+id, ""); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code, body := do("GET", "/healthz", ""); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Fatalf("healthz: %d %s", code, body)
	}
}

// TestPersistenceAcrossRestart runs a server on a state file, stops it, and
// checks that a new server on the same file serves the same networks.
func TestPersistenceAcrossRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.json")

	store1, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	logger, _ := ktesting.NewTestContext(t)
	srv1 := httptest.NewServer(NewHandler(store1, logger))
	c1, _ := NewHTTPClient(srv1.URL)
	kept, err := c1.Create(ctx, Network{Name: "ns/kept", CIDR: "10.1.0.0/16", GatewayIP: "10.1.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := c1.Create(ctx, Network{Name: "ns/gone", CIDR: "10.2.0.0/16", GatewayIP: "10.2.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	kept.GatewayIP = "10.1.255.254"
	if _, err := c1.Update(ctx, kept); err != nil {
		t.Fatal(err)
	}
	if err := c1.Delete(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	srv1.Close()

	store2, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	c2 := newServer(t, store2)
	all, err := c2.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0] != kept {
		t.Fatalf("after restart, List = %+v; want only %+v", all, kept)
	}

	// The temporary files of write-then-rename are all gone.
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("state directory holds %d files, want only the state file: %v", len(entries), entries)
	}
}

func TestOpenStoreRefusesACorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, []byte(`{"networks": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("OpenStore on a truncated file: err = %v; want an error naming the file", err)
	}
}

// TestFailedWriteChangesNothing checks that a change the store could not save
// is not applied in memory either.
func TestFailedWriteChangesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := OpenStore(filepath.Join(dir, "missing-dir", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Create(ctx, Network{Name: "ns/a", CIDR: "10.0.0.0/8", GatewayIP: "10.0.0.1"}); err == nil {
		t.Fatal("Create succeeded although the state file's directory does not exist")
	}
	if all, _ := store.List(ctx, ""); len(all) != 0 {
		t.Fatalf("after a failed save, List = %+v; want nothing", all)
	}
}
