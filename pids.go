package strata

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/vfs"
)

// producerIDsFile is the store's record of the producer ids it has handed
// out: every id below its next_producer_id may have been used.
const producerIDsFile = "producer-ids.json"

// producerIDBlock is how many producer ids one write of producerIDsFile
// reserves: Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE
// (server-common/src/main/java/org/apache/kafka/server/common/ProducerIdsBlock.java).
const producerIDBlock = 1000

// producerIDsVersion is the version of producerIDsFile this build writes
// and reads.
const producerIDsVersion = 1

// producerIDs hands out the store's producer ids in blocks, as Kafka's
// ProducerIdManager does: before the first id of a block is used, the end
// of the block is made durable in producerIDsFile, so that no id is handed
// out twice, across restarts and crashes alike; a crash loses at most the
// rest of a block.
type producerIDs struct {
	mu     sync.Mutex
	loaded bool  // the file was read (next and end hold its value)
	next   int64 // the next id to hand out
	end    int64 // the end of the block: the file's value, durably
}

// producerIDsRecord is producerIDsFile's contents. NextProducerID is the
// first id not reserved yet (the name of Kafka's ProducerIdsRecord field);
// CRC32C is the CRC-32C of its decimal form, so that damage which still
// parses is told from a valid file.
type producerIDsRecord struct {
	Version        int    `json:"version"`
	NextProducerID int64  `json:"next_producer_id"`
	CRC32C         uint32 `json:"crc32c"`
}

func producerIDsChecksum(next int64) uint32 {
	return crc32.Checksum(strconv.AppendInt(nil, next, 10), castagnoli)
}

// newProducerID returns a producer id that this store has never returned
// before, not even before a restart or a crash. Ids start at 0 and grow;
// after a restart they resume at the end of the last block reserved, so
// they are not dense. The first call creates producerIDsFile (a store that
// never needs a producer id has none), and every producerIDBlock-th call
// rewrites it: a temporary file, fsync, rename, fsync of the directory,
// whatever the store's flush policy, since an id handed out again would
// make the producer that gets it collide with the state its first owner
// left in the partitions.
//
// It fails with ErrClosed after Close, and with ErrCorrupt if the file is
// damaged; a failed write hands out nothing, and a later call tries again.
// It is safe for concurrent use and takes no lock of the Store but its own.
func (s *Store) newProducerID() (int64, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	p := &s.pids
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.loaded {
		next, err := readProducerIDs(s.fsys, s.dir)
		if err != nil {
			return 0, err
		}
		p.next, p.end, p.loaded = next, next, true
	}
	if p.next == p.end {
		if p.end > math.MaxInt64-producerIDBlock {
			return 0, fmt.Errorf("strata: every producer id up to %d has been handed out", p.end)
		}
		end := p.end + producerIDBlock
		if err := writeProducerIDs(s.topicFS, s.dir, end); err != nil {
			return 0, err
		}
		p.end = end
	}
	id := p.next
	p.next++
	return id, nil
}

// readProducerIDs returns the next producer id producerIDsFile reserves,
// 0 if there is no file.
func readProducerIDs(fsys vfs.FS, dir string) (int64, error) {
	path := filepath.Join(dir, producerIDsFile)
	data, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("strata: reading %s: %w", path, err)
	}
	var r producerIDsRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return 0, damagedProducerIDs(path, err)
	}
	if r.Version != producerIDsVersion {
		return 0, log.Corruption(fmt.Sprintf("strata: %s has version %d; this build reads version %d", path, r.Version, producerIDsVersion))
	}
	if sum := producerIDsChecksum(r.NextProducerID); sum != r.CRC32C {
		return 0, damagedProducerIDs(path, fmt.Errorf("its checksum is %d, its contents sum to %d", r.CRC32C, sum))
	}
	if r.NextProducerID < 0 {
		return 0, damagedProducerIDs(path, fmt.Errorf("next_producer_id %d is negative", r.NextProducerID))
	}
	return r.NextProducerID, nil
}

// damagedProducerIDs says what is wrong with producerIDsFile.
func damagedProducerIDs(path string, reason error) error {
	return log.Corruption(fmt.Sprintf("strata: %s is damaged (%v); restore it from a backup, or write one whose "+
		"next_producer_id is above every producer id the store's partitions hold", path, reason))
}

// writeProducerIDs replaces producerIDsFile durably with next.
func writeProducerIDs(fsys vfs.FS, dir string, next int64) error {
	data, err := json.Marshal(producerIDsRecord{Version: producerIDsVersion, NextProducerID: next, CRC32C: producerIDsChecksum(next)})
	if err != nil {
		return err
	}
	path := filepath.Join(dir, producerIDsFile)
	if err := vfs.WriteFileAtomic(fsys, path, append(data, '\n')); err != nil {
		return fmt.Errorf("strata: writing %s: %w", path, err)
	}
	return nil
}
