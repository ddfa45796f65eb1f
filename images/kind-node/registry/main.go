// The registry (CNCF distribution) each offline kind node runs as its
// docker.io mirror, with the filesystem storage driver only
// (files/etc/kind-offline/registry.yml). distribution's own main also links
// the S3, Azure and GCS drivers, whose SDKs take minutes to compile.
// scripts/tools.sh builds this file against the pinned DISTRIBUTION_VERSION.
package main

import (
	"os"

	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() {
	if err := registry.RootCmd.Execute(); err != nil {
		os.Exit(1)
	}
}
