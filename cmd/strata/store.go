package main

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"

	"github.com/stratalog/strata"
)

// openRead opens the directory for a command that only reads: read-only,
// so that it works on a directory a running process holds.
func (a *app) openRead() (*strata.Store, error) {
	dir, err := a.needDir()
	if err != nil {
		return nil, err
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	return strata.Open(dir, a.storeOptions(true))
}

// checkDir fails with a usage error (exit status 2) when dir, which a
// command only reads, is not there or is not a directory.
func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usagef("%s: no such directory", dir)
	case err == nil && !fi.IsDir():
		return usagef("%s is a file, not a directory", dir)
	}
	return nil
}

// openWrite opens the directory for a command that writes: it fails with
// strata.ErrLocked (exit status 3) when another process holds it.
func (a *app) openWrite() (*strata.Store, error) {
	dir, err := a.needDir()
	if err != nil {
		return nil, err
	}
	return strata.Open(dir, a.storeOptions(false))
}

// storeOptions are the options of the command's Store: the store's
// recovery reports and background errors go to stderr, warnings and
// above only. Background retention and cleaning are off: a command does
// only the work it was asked for. readOnly opens it with
// strata.Options.ReadOnly: no lock, nothing written, and it follows a
// directory that a running process owns.
func (a *app) storeOptions(readOnly bool) *strata.Options {
	return &strata.Options{
		ReadOnly:               readOnly,
		Logger:                 slog.New(newWarnHandler(a.stderr)),
		RetentionCheckInterval: -1,
		CleanerInterval:        -1,
	}
}
