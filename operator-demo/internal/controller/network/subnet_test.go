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
	"net/netip"
	"strings"
	"testing"
)

// Plain Go tests: the carving needs no API server.
func TestSplitPrefix(t *testing.T) {
	tests := []struct {
		prefix string
		n      int
		want   []string
	}{
		{"10.0.0.0/16", 1, []string{"10.0.0.0/16"}},
		{"10.0.0.0/16", 2, []string{"10.0.0.0/17", "10.0.128.0/17"}},
		{"10.0.0.0/16", 4, []string{"10.0.0.0/18", "10.0.64.0/18", "10.0.128.0/18", "10.0.192.0/18"}},
		{"192.168.1.0/24", 8, []string{
			"192.168.1.0/27", "192.168.1.32/27", "192.168.1.64/27", "192.168.1.96/27",
			"192.168.1.128/27", "192.168.1.160/27", "192.168.1.192/27", "192.168.1.224/27",
		}},
		{"10.0.0.0/30", 4, []string{"10.0.0.0/32", "10.0.0.1/32", "10.0.0.2/32", "10.0.0.3/32"}},
		{"0.0.0.0/0", 2, []string{"0.0.0.0/1", "128.0.0.0/1"}},
		{"fd00::/48", 4, []string{"fd00::/50", "fd00:0:0:4000::/50", "fd00:0:0:8000::/50", "fd00:0:0:c000::/50"}},
		{"2001:db8::/126", 4, []string{"2001:db8::/128", "2001:db8::1/128", "2001:db8::2/128", "2001:db8::3/128"}},
	}
	for _, tt := range tests {
		got, err := SplitPrefix(netip.MustParsePrefix(tt.prefix), tt.n)
		if err != nil {
			t.Errorf("SplitPrefix(%s, %d): %v", tt.prefix, tt.n, err)
			continue
		}
		if len(got) != len(tt.want) {
			t.Errorf("SplitPrefix(%s, %d) = %v, want %v", tt.prefix, tt.n, got, tt.want)
			continue
		}
		for i := range got {
			if got[i].String() != tt.want[i] {
				t.Errorf("SplitPrefix(%s, %d) = %v, want %v", tt.prefix, tt.n, got, tt.want)
				break
			}
		}
	}
}

func TestSplitPrefixLarge(t *testing.T) {
	got, err := SplitPrefix(netip.MustParsePrefix("10.0.0.0/8"), 256)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 256 || got[0].String() != "10.0.0.0/16" || got[255].String() != "10.255.0.0/16" {
		t.Errorf("SplitPrefix(10.0.0.0/8, 256) = %v ... %v", got[0], got[len(got)-1])
	}
	// The subnets tile the block: each starts right after the previous one ends.
	for i := 1; i < len(got); i++ {
		if got[i].Overlaps(got[i-1]) || !netip.MustParsePrefix("10.0.0.0/8").Contains(got[i].Addr()) {
			t.Fatalf("subnet %v overlaps %v or is outside the block", got[i], got[i-1])
		}
	}
}

func TestSplitPrefixImpossible(t *testing.T) {
	tests := []struct {
		name   string
		prefix netip.Prefix
		n      int
		want   string
	}{
		{"3 subnets", netip.MustParsePrefix("10.0.0.0/16"), 3, "power of two"},
		{"6 subnets", netip.MustParsePrefix("10.0.0.0/16"), 6, "power of two"},
		{"0 subnets", netip.MustParsePrefix("10.0.0.0/16"), 0, "power of two"},
		{"/30 into 8", netip.MustParsePrefix("10.0.0.0/30"), 8, "would each be a /33, longer than the 32 bits"},
		{"/32 into 2", netip.MustParsePrefix("10.0.0.1/32"), 2, "would each be a /33"},
		{"IPv6 /127 into 4", netip.MustParsePrefix("fd00::/127"), 4, "would each be a /129, longer than the 128 bits"},
		{"IPv6 3 subnets", netip.MustParsePrefix("fd00::/48"), 3, "power of two"},
		{"host bits set", netip.MustParsePrefix("10.0.0.1/16"), 2, "bits set after the prefix length"},
		{"invalid prefix", netip.Prefix{}, 2, "invalid prefix"},
	}
	for _, tt := range tests {
		got, err := SplitPrefix(tt.prefix, tt.n)
		if err == nil {
			t.Errorf("%s: SplitPrefix(%v, %d) = %v, want an error", tt.name, tt.prefix, tt.n, got)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %q does not say %q", tt.name, err, tt.want)
		}
	}
}
