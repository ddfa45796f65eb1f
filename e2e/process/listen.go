package process

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Listening returns the TCP addresses ("ip:port") process pid listens on,
// read from /proc (Linux only): the socket inodes among the process's open
// files, looked up in the tables of listening sockets.
func Listening(pid int) ([]string, error) {
	fds, err := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(fd)
		if err == nil && strings.HasPrefix(target, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	var addrs []string
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] { // 0A: LISTEN
				continue
			}
			addr, err := parseProcAddr(fields[1])
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("/proc/%d/net/%s: %w", pid, table, err)
			}
			addrs = append(addrs, addr)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return addrs, nil
}

// parseProcAddr turns /proc/net/tcp's "0100007F:1F90" (the address as the
// kernel stores it: 32-bit words in host order, x86's little endian) into
// "127.0.0.1:8080".
func parseProcAddr(s string) (string, error) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	if !ok || (len(hexIP) != 8 && len(hexIP) != 32) {
		return "", fmt.Errorf("want HEXIP:HEXPORT, got %q", s)
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return "", fmt.Errorf("port of %q: %w", s, err)
	}
	ip := make(net.IP, len(hexIP)/2)
	for w := 0; w < len(ip); w += 4 {
		word, err := strconv.ParseUint(hexIP[2*w:2*w+8], 16, 32)
		if err != nil {
			return "", fmt.Errorf("address of %q: %w", s, err)
		}
		ip[w], ip[w+1], ip[w+2], ip[w+3] = byte(word), byte(word>>8), byte(word>>16), byte(word>>24)
	}
	return net.JoinHostPort(ip.String(), strconv.FormatUint(port, 10)), nil
}

// Wildcard tells whether addr ("ip:port") listens on every interface.
func Wildcard(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && net.ParseIP(host).IsUnspecified()
}
