// Package backend is the network backend that stands in for OpenStack Neutron,
// the "actual state" the article's controller reconciles against.
//
// It has three parts: Client, the interface the Network controller uses; Store,
// an implementation that keeps networks in memory (unit tests use it as is) and
// optionally in a file; and an HTTP server and client, modeled on Neutron's
// networks API, so the backend can run as its own process
// (cmd/network-backend) and survive the controller's restarts, and its own.
package backend

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode"
)

// Network is one network in the backend.
type Network struct {
	// ID is assigned by the backend when the network is created.
	ID string `json:"id,omitempty"`
	// Name is unique in the backend. The Network controller uses
	// "namespace/name" of the Network object.
	Name string `json:"name"`
	// CIDR is the network's address range, such as 192.168.0.0/16.
	CIDR string `json:"cidr"`
	// GatewayIP is an address inside CIDR.
	GatewayIP string `json:"gateway_ip"`
	// Description is free text, as in Neutron, where nothing else marks who
	// made a network. The Network controller writes the UID of its Network
	// here, and never changes or deletes a network that does not carry it.
	Description string `json:"description,omitempty"`
}

// The errors every Client returns, whatever the transport; test with errors.Is.
var (
	ErrNotFound = errors.New("network not found")
	ErrConflict = errors.New("network name already in use")
	ErrInvalid  = errors.New("invalid network")
)

// Client is what the Network controller needs from the backend.
type Client interface {
	// List returns the networks sorted by name. A non-empty name keeps only
	// the network of that name, like Neutron's GET /v2.0/networks?name=.
	List(ctx context.Context, name string) ([]Network, error)
	// Get returns the network with this ID, or ErrNotFound.
	Get(ctx context.Context, id string) (Network, error)
	// Create stores n under a new ID and returns it. It fails with
	// ErrConflict if the name is taken and ErrInvalid if n is not valid.
	Create(ctx context.Context, n Network) (Network, error)
	// Update replaces the network with ID n.ID, or returns ErrNotFound.
	Update(ctx context.Context, n Network) (Network, error)
	// Delete removes the network with this ID, or returns ErrNotFound.
	Delete(ctx context.Context, id string) error
}

// FindByName returns the network called name, or ErrNotFound.
func FindByName(ctx context.Context, c Client, name string) (Network, error) {
	networks, err := c.List(ctx, name)
	if err != nil {
		return Network{}, err
	}
	if len(networks) == 0 {
		return Network{}, fmt.Errorf("%w: no network named %q", ErrNotFound, name)
	}
	return networks[0], nil
}

// The longest name and description the backend keeps: "namespace/name" of
// a Network (63 + 1 + 253), and Neutron's 255 for a description.
const (
	MaxNameLength        = 317
	MaxDescriptionLength = 255
)

// Validate checks n the way the Network CRD's schema checks a Network: the
// backend must not trust its callers to have been admitted by that schema.
func Validate(n Network) error {
	if strings.TrimSpace(n.Name) == "" {
		return fmt.Errorf("%w: name is required", ErrInvalid)
	}
	if len(n.Name) > MaxNameLength || strings.ContainsFunc(n.Name, unicode.IsControl) {
		return fmt.Errorf("%w: name must be at most %d printable characters, got %d", ErrInvalid, MaxNameLength, len(n.Name))
	}
	if len(n.Description) > MaxDescriptionLength {
		return fmt.Errorf("%w: description must be at most %d bytes, got %d", ErrInvalid, MaxDescriptionLength, len(n.Description))
	}
	prefix, err := netip.ParsePrefix(n.CIDR)
	if err != nil || prefix != prefix.Masked() {
		return fmt.Errorf("%w: cidr %q is not a CIDR with no host bits set", ErrInvalid, n.CIDR)
	}
	// CEL's isCIDR, which the CRD uses, refuses IPv4-mapped IPv6 ranges.
	if prefix.Addr().Is4In6() {
		return fmt.Errorf("%w: cidr %q is an IPv4-mapped IPv6 range; write it as IPv4", ErrInvalid, n.CIDR)
	}
	if prefix.Bits() == 0 {
		return fmt.Errorf("%w: cidr %s holds every address", ErrInvalid, n.CIDR)
	}
	for _, r := range unusableRanges {
		if prefix.Overlaps(r.prefix) {
			return fmt.Errorf("%w: cidr %s overlaps the %s range %s", ErrInvalid, n.CIDR, r.name, r.prefix)
		}
	}
	gateway, err := netip.ParseAddr(n.GatewayIP)
	if err != nil {
		return fmt.Errorf("%w: gateway_ip %q is not an IP address", ErrInvalid, n.GatewayIP)
	}
	if !prefix.Contains(gateway) {
		return fmt.Errorf("%w: gateway_ip %s is not inside cidr %s", ErrInvalid, n.GatewayIP, n.CIDR)
	}
	// A network of one or two addresses (/31, /32, /127, /128) has no network
	// or broadcast address: every one is a host's (RFC 3021, RFC 6164).
	if hostBits := gateway.BitLen() - prefix.Bits(); hostBits >= 2 {
		if gateway == prefix.Addr() {
			return fmt.Errorf("%w: gateway_ip %s is the network address of cidr %s", ErrInvalid, n.GatewayIP, n.CIDR)
		}
		// IPv4's broadcast address: the network address with every host bit set.
		if g, a := gateway.As16(), prefix.Addr().As16(); gateway.Is4() &&
			binary.BigEndian.Uint32(g[12:]) == binary.BigEndian.Uint32(a[12:])|(1<<hostBits-1) {
			return fmt.Errorf("%w: gateway_ip %s is the broadcast address of cidr %s", ErrInvalid, n.GatewayIP, n.CIDR)
		}
	}
	return nil
}

// unusableRanges are the addresses no host can have on a network: loopback
// never leaves a host, link-local is never routed, multicast names groups.
// The CRD refuses a cidr that overlaps one, and so does the backend.
var unusableRanges = []struct {
	name   string
	prefix netip.Prefix
}{
	{"loopback", netip.MustParsePrefix("127.0.0.0/8")},
	{"loopback", netip.MustParsePrefix("::1/128")},
	{"link-local", netip.MustParsePrefix("169.254.0.0/16")},
	{"link-local", netip.MustParsePrefix("fe80::/10")},
	{"multicast", netip.MustParsePrefix("224.0.0.0/4")},
	{"multicast", netip.MustParsePrefix("ff00::/8")},
}
