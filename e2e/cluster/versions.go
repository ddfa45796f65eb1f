package cluster

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Versions reads root/versions.env, the file that pins every version of the
// project, into a map.
func Versions(root string) (map[string]string, error) {
	f, err := os.Open(filepath.Join(root, "versions.env"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v := map[string]string{}
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("versions.env:%d: expected KEY=value, got %q", n, line)
		}
		v[key] = val
	}
	return v, s.Err()
}
