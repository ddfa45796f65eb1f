// Command operator-sdk is the kubebuilder CLI under operator-sdk's name, for
// scripts/scaffold-check.sh to replay operator-demo/README.md's commands.
//
// operator-sdk builds its CLI from kubebuilder's library, with
// cli.WithCommandName("operator-sdk") and kubebuilder's go/v4 bundle plus
// its own manifests and scorecard plugins. Those two cannot be had here (the
// operator-sdk CLI is not a Go module one can build offline), so this is the
// go/v4 part only. The name matters: the scaffold writes it into AGENTS.md
// and README.md. kubebuilder's own binary names itself "kubebuilder" in its
// code, whatever its file is called.
package main

import (
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"sigs.k8s.io/kubebuilder/v4/pkg/cli"
	cfgv3 "sigs.k8s.io/kubebuilder/v4/pkg/config/v3"
	"sigs.k8s.io/kubebuilder/v4/pkg/plugin"
	kustomizecommonv2 "sigs.k8s.io/kubebuilder/v4/pkg/plugins/common/kustomize/v2"
	"sigs.k8s.io/kubebuilder/v4/pkg/plugins/golang"
	golangv4 "sigs.k8s.io/kubebuilder/v4/pkg/plugins/golang/v4"
)

func main() {
	// PROJECT's cliVersion: the kubebuilder library's version, as
	// kubebuilder's own binary writes it ("4.16.0").
	version := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "sigs.k8s.io/kubebuilder/v4" {
				version = strings.TrimPrefix(dep.Version, "v")
			}
		}
	}
	// The bundle kubebuilder's CLI (internal/cli/cmd) and operator-sdk's
	// both name go.kubebuilder.io/v4.
	gov4, err := plugin.NewBundleWithOptions(plugin.WithName(golang.DefaultNameQualifier),
		plugin.WithVersion(plugin.Version{Number: 4}),
		plugin.WithPlugins(kustomizecommonv2.Plugin{}, golangv4.Plugin{}),
		plugin.WithDescription("Default scaffold (go/v4 + kustomize/v2)"),
	)
	var c *cli.CLI
	if err == nil {
		c, err = cli.New(
			cli.WithCommandName("operator-sdk"),
			cli.WithVersion(version),
			cli.WithCliVersion(version),
			cli.WithPlugins(golangv4.Plugin{}, gov4, &kustomizecommonv2.Plugin{}),
			cli.WithDefaultPlugins(cfgv3.Version, gov4),
			cli.WithDefaultProjectVersion(cfgv3.Version),
		)
	}
	if err == nil {
		err = c.Run()
	}
	if err != nil {
		slog.Error("operator-sdk (kubebuilder's go/v4 under operator-sdk's name)", "error", err)
		os.Exit(1)
	}
}
