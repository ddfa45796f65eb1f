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
	"fmt"
	"math/bits"
	"net/netip"
)

// SplitPrefix carves prefix into n equal subnets, in address order: 10.0.0.0/16
// into 4 gives 10.0.0.0/18, 10.0.64.0/18, 10.0.128.0/18 and 10.0.192.0/18.
//
// Equal subnets that cover the whole block only exist when n is a power of
// two (each subnet takes log2(n) more prefix bits), and only while the new
// prefix length fits the address (32 bits for IPv4, 128 for IPv6). Anything
// else is an error that says why. prefix must be masked (no host bits set).
func SplitPrefix(prefix netip.Prefix, n int) ([]netip.Prefix, error) {
	if !prefix.IsValid() {
		return nil, fmt.Errorf("invalid prefix %v", prefix)
	}
	if prefix != prefix.Masked() {
		return nil, fmt.Errorf("%v has bits set after the prefix length (%v)", prefix, prefix.Masked())
	}
	if n < 1 || n&(n-1) != 0 {
		return nil, fmt.Errorf("%d is not a power of two (1, 2, 4, 8, ...): only those split a block into equal subnets", n)
	}
	extra := bits.TrailingZeros(uint(n)) // log2(n)
	newBits := prefix.Bits() + extra
	if maxBits := prefix.Addr().BitLen(); newBits > maxBits {
		return nil, fmt.Errorf("%d subnets of %v would each be a /%d, longer than the %d bits of the address",
			n, prefix, newBits, maxBits)
	}

	// Subnet i is the block's address with i written into the extra bits that
	// follow the block's own prefix.
	base := prefix.Addr().AsSlice()
	subnets := make([]netip.Prefix, 0, n)
	for i := range n {
		addr := make([]byte, len(base))
		copy(addr, base)
		for b := range extra {
			if i>>(extra-1-b)&1 == 1 {
				pos := prefix.Bits() + b
				addr[pos/8] |= 0x80 >> (pos % 8)
			}
		}
		a, _ := netip.AddrFromSlice(addr) // same length as base: cannot fail
		subnets = append(subnets, netip.PrefixFrom(a, newBits))
	}
	return subnets, nil
}
