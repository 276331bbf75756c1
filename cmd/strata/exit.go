package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/stratalog/strata"
)

// The exit statuses (the package documentation lists them for users).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitLocked  = 3
	exitDamage  = 4
)

// usageError marks an error as bad usage or input (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usage error (exit status 2) with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitError carries an exit status of its own (verify's damage): the
// command has already said what it found.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// userInputErrors are the store's sentinels for bad input: a command that
// meets one exits with status 2.
var userInputErrors = []error{
	strata.ErrUnknownTopic,
	strata.ErrTopicExists,
	strata.ErrTopicConfigMismatch,
	strata.ErrReservedTopic,
	strata.ErrInvalidTopic,
	strata.ErrInvalidConfig,
	strata.ErrUnknownPartition,
	strata.ErrOffsetOutOfRange,
	strata.ErrNoRecord,
	strata.ErrBatchTooLarge,
	strata.ErrNoKey,
	strata.ErrTimestampTooFarAhead,
	strata.ErrInvalidGroup,
	strata.ErrUnknownGroup,
	strata.ErrMetadataTooLarge,
	strata.ErrNotCompacted,
}

// exitCode is the exit status for err.
func exitCode(err error) int {
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, strata.ErrLocked):
		return exitLocked
	case errors.As(err, &ue):
		return exitUsage
	}
	for _, s := range userInputErrors {
		if errors.Is(err, s) {
			return exitUsage
		}
	}
	return exitFailure
}

// report writes err to w as one line (or a few, for a locked directory's
// advice), prefixed "strata: " once.
func report(w io.Writer, err error) {
	msg := err.Error()
	for strings.HasPrefix(msg, "strata: ") {
		msg = strings.TrimPrefix(msg, "strata: ")
	}
	fmt.Fprintf(w, "strata: %s\n", msg)
	if strings.Contains(msg, "strata.RebuildRegistry(") {
		fmt.Fprintln(w, "strata: from the command line: strata rebuild-registry")
	}
	if errors.Is(err, strata.ErrLocked) {
		fmt.Fprintln(w, "strata: another process has the directory open for writing: stop it first, or, if it is strata serve, write through its Kafka listener (kcat -P, kafka-console-producer); commands that only read work on it as it is")
	}
}
