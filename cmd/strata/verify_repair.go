package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/stratalog/strata"
	stratatopic "github.com/stratalog/strata/topic"
)

// repairEntry is one report of what recovery did, as the store logged it.
type repairEntry struct {
	// Pass is 1 for what the first Open did (what any Open would), 2 for
	// the recovery of every segment.
	Pass    int               `json:"pass"`
	Level   string            `json:"level"`
	Message string            `json:"message"`
	Attrs   map[string]string `json:"attrs"`
	order   []string
}

// captureHandler keeps the records the store logs at Info and above.
type captureHandler struct {
	dir     string
	pass    *int
	mu      *sync.Mutex
	entries *[]repairEntry
}

func (h captureHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h captureHandler) Handle(_ context.Context, r slog.Record) error {
	e := repairEntry{Pass: *h.pass, Level: strings.ToLower(r.Level.String()), Message: r.Message, Attrs: map[string]string{}}
	r.Attrs(func(at slog.Attr) bool {
		v := at.Value.Resolve().String()
		if at.Key == "dir" {
			v = relPath(h.dir, v)
		}
		e.Attrs[at.Key] = v
		e.order = append(e.order, at.Key)
		return true
	})
	h.mu.Lock()
	*h.entries = append(*h.entries, e)
	h.mu.Unlock()
	return nil
}

func (h captureHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h captureHandler) WithGroup(string) slog.Handler      { return h }

// repair opens the directory as a store, which takes its lock (refusing a
// directory another process holds) and recovers what a crash left; then,
// with the clean-shutdown marker and the partitions' recovery points
// removed (which only makes recovery start earlier), opens it again, so
// that every segment is recovered: torn and damaged tails cut, indexes
// rebuilt. It returns what the store logged it did.
func (a *app) repair(dir, topic string) ([]repairEntry, error) {
	if _, err := os.Stat(filepath.Join(dir, "topics.json")); errors.Is(err, os.ErrNotExist) {
		// Open would leave the partitions alone (they are no topic of
		// its), and write its own files beside them.
		return nil, usagef("%s has no topics.json: not a Strata store (a Kafka log directory?), which --repair does not touch; strata rebuild-registry makes it one", dir)
	}
	var entries []repairEntry
	pass := 1
	opts := a.storeOptions(false)
	opts.Logger = slog.New(captureHandler{dir: dir, pass: &pass, mu: new(sync.Mutex), entries: &entries})
	for ; pass <= 2; pass++ {
		if pass == 2 {
			if err := forgetRecoveryPoints(dir, topic); err != nil {
				return entries, err
			}
		}
		s, err := strata.Open(dir, opts)
		if err != nil {
			return entries, err
		}
		if err := s.Close(); err != nil {
			return entries, err
		}
	}
	return entries, nil
}

// forgetRecoveryPoints removes the clean-shutdown marker and the recovery
// point of each partition (of topic, if given), so that the next Open
// recovers every segment.
func forgetRecoveryPoints(dir, topic string) error {
	names, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	remove := func(path string) error {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("repair: %w", err)
		}
		return nil
	}
	if err := remove(filepath.Join(dir, ".clean-shutdown")); err != nil {
		return err
	}
	for _, e := range names {
		t, _, ok := stratatopic.ParsePartitionDir(e.Name())
		if !e.IsDir() || !ok || (topic != "" && t != topic) {
			continue
		}
		if err := remove(filepath.Join(dir, e.Name(), "recovery-point")); err != nil {
			return err
		}
	}
	return nil
}
