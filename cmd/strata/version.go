package main

import (
	"runtime/debug"

	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newVersionCmd) }

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version of strata and of the Go it was built with",
		Example: "  strata version\n  strata version -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := struct {
				Version string `json:"version"`
				Go      string `json:"go"`
			}{Version: "(devel)", Go: "unknown"}
			if bi, ok := debug.ReadBuildInfo(); ok {
				v.Version, v.Go = bi.Main.Version, bi.GoVersion
				if v.Version == "" {
					v.Version = "(devel)"
				}
			}
			if a.json() {
				return a.writeJSON(v)
			}
			_, err := cmd.OutOrStdout().Write([]byte("strata " + v.Version + " " + v.Go + "\n"))
			return err
		},
	}
}
