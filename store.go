package strata

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/vfs"
)

// File names in the store's directory.
const (
	lockFile     = ".lock"
	cleanFile    = ".clean-shutdown"
	topicsFile   = "topics.json"
	deleteSuffix = "-delete"
)

// Store is a directory of topics. It is safe for concurrent use; open one
// Store per directory (a second Open fails with ErrLocked) and Close it when
// done.
type Store struct {
	dir string
	// fsys holds the store's own files (topics.json, the clean-shutdown
	// marker, the directory): Options.FS, without fsyncs under SyncNever.
	// topicFS is Options.FS, for the topics, whose partitions follow
	// their own flush policies.
	fsys    vfs.FS
	topicFS vfs.FS
	opts    Options
	lock    *dirLock // nil off the OS

	// topics is the immutable name → topic map appends and reads load;
	// changes copy it under mu.
	topics atomic.Pointer[map[string]*topic.Topic]
	mu     sync.Mutex // serialises topic creation, deletion and Close
	closed atomic.Bool

	groups *group.Coordinator // consumer groups and their committed offsets
	txns   *txnCoordinator    // transactions (BeginTxn)

	// groupsTail is where the replay of __consumer_offsets stopped: a
	// read-only store replays what the owner appended since (followGroups).
	groupsTail struct {
		sync.Mutex
		next int64
		err  error // the damage the last replay stopped at, if any
	}

	// clean says whether Open found the clean-shutdown marker. Set by
	// Open only.
	clean bool

	pids producerIDs // the producer ids handed out (newProducerID)

	// orphans are the topics whose partition directories a store without
	// topics.json found at Open (see noteOrphans): CreateTopic refuses
	// them. Set by Open only.
	orphans map[string]bool

	// stray says whether the store's directory may hold partition
	// directories that no partition of the registry owns (see
	// strayPartitionDirs), which CreateTopic and CreatePartitions must
	// remove before they make their own: Open sets it from its listing,
	// and a removal of partition directories that fails, or a
	// CreatePartitions whose partitions fail to open, sets it. Without it
	// those calls need not list the directory. Guarded by mu.
	stray bool

	// readOnly is set on a store opened with Options.ReadOnly.
	readOnly *readOnlyState

	bg *background // retention and cleaning, stopped by Close
}

// Open opens the store in dir, creating the directory if needed.
//
// It takes an advisory lock on dir, so a second Open of the same directory,
// from this process or another, fails with ErrLocked until Close. If the
// last Store on dir did not Close (a crash), Open recovers every partition:
// torn tails are cut at the last valid batch, untrusted indexes rebuilt,
// and every record kept at its offset. Open starts the background work (periodic fsync,
// retention every RetentionCheckInterval, the cleaner of compacted topics
// every CleanerInterval); Close stops it.
//
// The files are on Options.FS: the operating system's file system by
// default, or an in-memory one (vfs.NewMem()) for tests.
func Open(dir string, opts *Options) (_ *Store, err error) {
	growStack()
	defer wrapErr(&err)
	return openStore(dir, opts)
}

func openStore(dir string, opts *Options) (*Store, error) {
	o := opts.withDefaults()
	fsys := o.FS
	if err := o.Sync.Validate(); err != nil {
		return nil, err
	}
	if err := checkIsolation(o.Isolation); err != nil {
		return nil, fmt.Errorf("strata: Options.Isolation: %w", err)
	}
	if dir == "" {
		return nil, fmt.Errorf("strata: no directory given: %w", ErrInvalidConfig)
	}
	if o.ReadOnly {
		return openReadOnly(dir, o)
	}
	mkdir := func() error {
		if err := fsys.MkdirAll(dir, 0o755); err != nil {
			// Looked at only on failure: MkdirAll of a directory that is
			// there is a stat of it.
			if fi, serr := fsys.Stat(dir); serr == nil && !fi.IsDir {
				return fmt.Errorf("strata: %s is a file, not a directory: %w", dir, ErrInvalidConfig)
			}
			return fmt.Errorf("strata: creating %s: %w", dir, err)
		}
		return nil
	}
	var lock *dirLock
	var names []string
	listed := false
	switch {
	case fsys == vfs.OS:
		// The lock's open of the directory comes first, and mkdir only if
		// it fails; the listing load reads is the lock's.
		var err error
		if lock, names, listed, err = lockListDir(dir, mkdir); err != nil {
			return nil, err
		}
	case vfs.IsOS(fsys):
		// A file system wrapping the OS's: its MkdirAll and ReadDir are
		// called as on any.
		if err := mkdir(); err != nil {
			return nil, err
		}
		var err error
		if lock, err = lockDir(dir); err != nil {
			return nil, err
		}
	default:
		if err := mkdir(); err != nil {
			return nil, err
		}
	}
	s := &Store{dir: dir, fsys: fsys, topicFS: fsys, opts: o, lock: lock}
	if o.Sync.Mode == partition.SyncModeNever {
		s.fsys = vfs.NoSync(fsys)
	}
	if err := s.load(names, listed); err != nil {
		_ = unlockDir(lock)
		return nil, err
	}
	if err := s.initGroups(); err != nil {
		for _, t := range *s.topics.Load() {
			_ = t.Close()
		}
		_ = unlockDir(lock)
		return nil, err
	}
	if err := s.initTxns(s.clean); err != nil {
		for _, t := range *s.topics.Load() {
			_ = t.Close()
		}
		_ = unlockDir(lock)
		return nil, err
	}
	s.startBackground()
	return s, nil
}

// load reads the clean-shutdown marker (removing it, so that a crash from
// now on is seen as one), the topic registry, and opens every topic. One
// listing of the directory says which of the store's files are there: no
// other process writes it while the store holds its lock. It is names when
// lockListed says the lock took it, else load lists the directory.
func (s *Store) load(names []string, lockListed bool) error {
	var err error
	if !lockListed {
		if names, err = s.fsys.ReadDir(s.dir); err != nil {
			return fmt.Errorf("strata: listing %s: %w", s.dir, err)
		}
	}
	var clean, temp, registry bool // which of the store's files are listed
	for _, name := range names {
		switch name {
		case cleanFile:
			clean = true
		case topicsFile + vfs.TempSuffix:
			temp = true
		case topicsFile:
			registry = true
		}
	}
	s.clean = clean
	if clean {
		marker := filepath.Join(s.dir, cleanFile)
		if err := s.fsys.Remove(marker); err != nil {
			return fmt.Errorf("strata: removing %s: %w", marker, err)
		}
		if err := s.fsys.SyncDir(s.dir); err != nil {
			return fmt.Errorf("strata: syncing %s: %w", s.dir, err)
		}
	}
	if err := s.removeDeleted(names); err != nil {
		return err
	}
	if temp {
		// What a failed or interrupted registry write left.
		_ = s.fsys.Remove(filepath.Join(s.dir, topicsFile+vfs.TempSuffix))
	}
	reg := map[string]registryEntry{}
	if registry {
		if reg, err = readRegistry(s.fsys, s.dir); err != nil {
			return err
		}
	} else if err := s.noteOrphans(names); err != nil {
		return err
	}
	s.stray = strayPartitionDirs(names, reg)
	// Topics from a registry without ids (version 1) take the id their
	// partition directory records (written by an Open that crashed before
	// it rewrote the registry, or by Kafka), or a new one.
	assigned := false
	for name, e := range reg {
		if e.ID.IsZero() {
			if e.ID = topic.DirID(s.fsys, filepath.Join(s.dir, topic.PartitionDir(name, 0))); e.ID.IsZero() {
				e.ID = topic.NewID()
			}
			reg[name] = e
			assigned = true
		}
	}
	topics := make(map[string]*topic.Topic, len(reg))
	closeAll := func() {
		for _, t := range topics {
			_ = t.Close()
		}
	}
	for name, e := range reg {
		cfg := e.Config
		if name == TransactionStateTopic {
			// Its flush policy follows the store's (see txnLogSync).
			cfg.Sync = s.txnLogSync()
		}
		t, err := topic.Open(s.topicFS, s.dir, name, e.ID, cfg, s.partitionBase(), clean)
		if err != nil {
			closeAll()
			return fmt.Errorf("strata: opening topic %s: %w", name, err)
		}
		topics[name] = t
	}
	if assigned {
		if err := writeRegistry(s.fsys, s.dir, entries(topics)); err != nil {
			closeAll()
			return err
		}
	}
	s.topics.Store(&topics)
	return nil
}

// noteOrphans looks, in a store without topics.json, for partition
// directories: topics.json was lost (a restore that missed it, a removal by
// hand), since a store writes it before it creates any. Their topics are
// not opened, and CreateTopic refuses their names instead of removing their
// data as stale; the log says how to keep them. names is the directory's
// listing.
func (s *Store) noteOrphans(names []string) error {
	counts := listedPartitionDirs(s.fsys, s.dir, names)
	if len(counts) == 0 {
		return nil
	}
	s.orphans = map[string]bool{}
	for name := range counts {
		s.orphans[name] = true
	}
	s.opts.Logger.Warn("strata: "+topicsFile+" is missing, but partition directories are there; their topics are not opened: "+
		"rebuild the registry with strata.RebuildRegistry(dir) to keep them, or remove the directories",
		"dir", s.dir, "topics", slices.Sorted(maps.Keys(s.orphans)))
	return nil
}

// strayPartitionDirs reports whether names, a listing of the store's
// directory, hold a partition directory that no partition of reg owns: of
// a topic reg does not hold, or numbered past its partition count (what a
// DeleteTopic or CreatePartitions that a crash stopped leaves).
func strayPartitionDirs(names []string, reg map[string]registryEntry) bool {
	for _, name := range names {
		t, i, ok := topic.ParsePartitionDir(name)
		if !ok {
			continue
		}
		if e, ok := reg[t]; !ok || i >= max(e.Config.Partitions, topic.DefaultPartitions) {
			return true
		}
	}
	return false
}

// partitionBase is what every partition gets from the store.
func (s *Store) partitionBase() partition.Config {
	return partition.Config{Sync: s.opts.Sync, Now: s.opts.Now, Logger: s.opts.Logger,
		ReadOnly: s.readOnly != nil, RefreshInterval: s.opts.RefreshInterval}
}

// removeDeleted finishes deletions a crash interrupted: partition
// directories renamed "...-delete" by DeleteTopic, among names, the
// directory's listing.
func (s *Store) removeDeleted(names []string) error {
	for _, name := range names {
		if strings.HasSuffix(name, deleteSuffix) {
			if err := s.fsys.RemoveAll(filepath.Join(s.dir, name)); err != nil {
				return fmt.Errorf("strata: removing %s: %w", name, err)
			}
		}
	}
	return nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Close aborts the transactions still open (their calls return ErrClosed),
// ends the group membership of the store's consumers (recorded in
// __consumer_offsets; a Consumer's Close after it writes nothing),
// flushes and closes every partition (fsyncing what is unsynced), writes
// the clean-shutdown marker so the next Open trusts the files, stops the
// background work and releases the directory lock. Calls after Close
// fail with ErrClosed; closing twice returns nil.
func (s *Store) Close() (err error) {
	defer wrapErr(&err)
	if s.readOnly != nil {
		return s.closeReadOnly()
	}
	var txnErr error
	if s.txns != nil && !s.closed.Load() {
		// First, while the store is open: the transactions' markers and
		// state records are written to its topics. Not under mu, which a
		// Commit under way may take (to create an internal topic).
		txnErr = s.txns.shutdown()
	}
	s.mu.Lock()
	if s.closed.Swap(true) {
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	// Then, with no call starting any more but the topics open: the
	// membership of the store's consumers ends with it, recorded in
	// __consumer_offsets, not by a Consumer's Close after the topic is
	// closed. Not under mu either: a rebalance under way holds its group's
	// lock and may take mu (to create __consumer_offsets).
	s.groups.LeaveAll()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bg != nil {
		s.bg.stop()
	}
	var errs []error
	for _, t := range *s.topics.Load() {
		errs = append(errs, t.Close())
	}
	err = errors.Join(errs...)
	if err == nil && txnErr != nil {
		// Not clean: the next Open finishes the transactions.
		err = txnErr
	} else if err == nil {
		// Only a store whose every partition closed cleanly may say so.
		err = s.writeMarker()
	}
	return errors.Join(err, unlockDir(s.lock))
}

// writeMarker writes the clean-shutdown marker. Its contents mean nothing:
// only its name is read. On the OS it is made a second name (a hard link,
// which allocates no inode: on ext4 the inodes a store creates are most of
// what a short-lived one costs) of the .lock file when the store holds
// one, else of topics.json; where there is neither, or the file system
// refuses the link, it is an empty file of its own. Either way it is
// durable (file and directory fsynced) unless the policy is SyncNever.
func (s *Store) writeMarker() error {
	path := filepath.Join(s.dir, cleanFile)
	err := s.linkMarker(path)
	if err != nil {
		var f vfs.File
		// Without O_TRUNC: a marker already there may be a second name of
		// topics.json.
		f, err = s.fsys.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err == nil {
			err = f.Sync()
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err == nil {
		err = s.fsys.SyncDir(s.dir)
	}
	if err != nil {
		return fmt.Errorf("strata: writing %s: %w", path, err)
	}
	return nil
}

// errNoLock is linkMarker's answer for a store off the OS.
var errNoLock = errors.New("strata: no lock")

// linkMarker makes path a hard link to the store's .lock file or, if it
// holds none, to topics.json, fsyncing the file (its link count) unless the
// policy is SyncNever.
func (s *Store) linkMarker(path string) error {
	if s.lock == nil {
		return errNoLock
	}
	target := s.lock.lockFilePath()
	if target == "" {
		target = filepath.Join(s.dir, topicsFile)
	}
	if err := os.Link(target, path); err != nil {
		return err
	}
	if s.opts.Sync.Mode == partition.SyncModeNever {
		return nil
	}
	if target == s.lock.lockFilePath() {
		return s.lock.syncLockFile()
	}
	return syncFile(target)
}

// syncFile fsyncs the file at path.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}

// topic returns the named topic, or ErrClosed, ErrReservedTopic (the
// internal topics are the store's own: only DescribeTopic and Compact,
// which look after them, take their names) or ErrUnknownTopic, in that
// order.
func (s *Store) topic(name string) (*topic.Topic, error) {
	return s.userTopic("", name)
}

// internalTopic is topic that finds the internal topics too: for the
// store's own use, DescribeTopic and Compact.
func (s *Store) internalTopic(name string) (*topic.Topic, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	return s.lookupTopic(name)
}

// userTopic is topic for a user's call (what verb says, as "append"),
// whose ErrReservedTopic names the verb.
func (s *Store) userTopic(verb, name string) (*topic.Topic, error) {
	if err := s.checkUserTopic(verb, name); err != nil {
		return nil, err
	}
	return s.lookupTopic(name)
}

// checkUserTopic returns ErrClosed after Close, then ErrReservedTopic for
// the name of an internal topic (naming verb, as "append", when it is not
// empty): the checks every call that takes a user's topic name makes first.
func (s *Store) checkUserTopic(verb, name string) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if !topic.IsInternal(name) {
		return nil
	}
	if verb == "" {
		return fmt.Errorf("strata: topic %q: %w", name, ErrReservedTopic)
	}
	return fmt.Errorf("strata: %s to %q: %w", verb, name, ErrReservedTopic)
}

// lookupTopic returns the open topic of the name, or ErrInvalidTopic for a
// name Kafka refuses, or ErrUnknownTopic.
func (s *Store) lookupTopic(name string) (*topic.Topic, error) {
	s.maybeRefreshTopics()
	t, ok := (*s.topics.Load())[name]
	if !ok {
		if err := topic.ValidateName(name); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("strata: topic %q: %w", name, ErrUnknownTopic)
	}
	return t, nil
}

// Topics returns the names of the topics, sorted, without the internal
// ones (such as __consumer_offsets), as Kafka lists them by default.
func (s *Store) Topics() []string {
	s.maybeRefreshTopics()
	m := *s.topics.Load()
	names := make([]string, 0, len(m))
	for name := range m {
		if !topic.IsInternal(name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
