// Command preflight fails, in a line a port, when a port the e2e suites'
// programs listen on is taken, naming the process that holds it. `make test`
// and `make e2e` run it before anything long starts:
//
//	cd e2e && go run ./cmd/preflight
package main

import (
	"fmt"
	"os"

	"example.com/k8s-demo/e2e/ports"
)

func main() {
	if err := ports.Check(); err != nil {
		fmt.Fprintf(os.Stderr, "preflight: %v\n", err)
		os.Exit(1)
	}
}
