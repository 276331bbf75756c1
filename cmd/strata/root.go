package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// app is what every command shares: the global flags, the standard
// streams, and whether stderr is a terminal (for progress bars).
type app struct {
	dir    string // --dir, or $STRATA_DIR
	output string // -o: "table" or "json"

	stdin          io.Reader
	stdout, stderr io.Writer
	// stderrTTY says whether stderr is a terminal: progress bars are drawn
	// only then.
	stderrTTY bool
	// ctx is cancelled by SIGINT and SIGTERM.
	ctx context.Context
}

// commands are the constructors of the top-level commands; each command's
// file adds its own in an init function.
var commands []func(*app) *cobra.Command

// run runs the command line args with the process's standard streams and
// returns the exit status.
func run(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a := &app{
		stdin:     os.Stdin,
		stdout:    os.Stdout,
		stderr:    os.Stderr,
		stderrTTY: isTerminal(os.Stderr),
		ctx:       ctx,
	}
	return a.run(args)
}

// run runs args and returns the exit status, having reported any error on
// a.stderr.
func (a *app) run(args []string) int {
	root := a.rootCmd()
	root.SetArgs(args)
	err := root.ExecuteContext(a.ctx)
	if err == nil {
		return exitOK
	}
	if !errors.As(err, new(exitError)) || err.Error() != "" {
		report(a.stderr, err)
	}
	return exitCode(err)
}

// rootCmd builds the command tree.
func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "strata",
		Short: "Kafka's everyday tools for a Strata directory",
		Long: `strata works on a Strata directory (--dir, or $STRATA_DIR): its topics,
records, consumer groups and files, with Kafka's vocabulary and config names.

Commands that only read open the directory read-only and work on a directory
that a running process holds; commands that write refuse a directory another
process holds, and say which.

Exit status: 0 success; 1 the operation failed; 2 bad usage or input (an
unknown flag, topic or group, a malformed value, an offset out of range);
3 the directory is locked by another process; 4 verify or dump found
damage.`,
		Example: `  strata --dir /var/lib/orders topics list
  export STRATA_DIR=/var/lib/orders
  strata topics describe orders -o json
  strata consume orders --from-beginning -n 10`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVarP(&a.dir, "dir", "d", os.Getenv("STRATA_DIR"), "the Strata directory (default $STRATA_DIR)")
	pf.Lookup("dir").DefValue = "" // the help says $STRATA_DIR, not its value
	pf.StringVarP(&a.output, "output", "o", "table", "output format: table or json")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if a.output != "table" && a.output != "json" {
			return usagef("-o %q: the output formats are table and json", a.output)
		}
		return nil
	}
	for _, c := range commands {
		root.AddCommand(c(a))
	}
	return root
}

// needDir returns the directory the command works on, or a usage error
// when none was given.
func (a *app) needDir() (string, error) {
	if a.dir == "" {
		return "", usagef("no directory: give --dir or set STRATA_DIR")
	}
	return a.dir, nil
}

// noArgs and exactArgs are cobra's argument checks, with their errors
// marked as usage errors.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return usageError{fmt.Errorf("%w (usage: %s)", err, cmd.UseLine())}
		}
		return nil
	}
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q (usage: %s)", cmd.CommandPath(), args[0], cmd.UseLine())
	}
	return nil
}
