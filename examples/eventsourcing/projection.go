package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stratalog/strata"
)

// Projection is a read model: the balance of every account, built by
// reading the whole topic in offset order. With it, Kafka-style, it keeps
// its position in each partition as the next offset to read (what a Kafka
// consumer commits), so that after a stop it resumes where it was and
// processes no event twice.
//
// The balances and the offsets are saved together, in one file replaced
// atomically, so that they always agree: a crash between processing and
// saving loses the unsaved work, which the next run simply does again.
type Projection struct {
	Next     []int64          `json:"next"`     // per partition: the next offset to read
	Balances map[string]int64 `json:"balances"` // cents per account
}

// LoadProjection reads a projection saved at path; with no file there, it
// starts from the beginning of every partition.
func LoadProjection(path string, partitions int) (*Projection, error) {
	p := &Projection{Next: make([]int64, partitions), Balances: map[string]int64{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(p.Next) != partitions {
		return nil, fmt.Errorf("%s has offsets for %d partitions, the topic has %d", path, len(p.Next), partitions)
	}
	return p, nil
}

// CatchUp processes every event from the projection's offsets up to the end
// of each partition and returns how many it processed.
func (p *Projection) CatchUp(ctx context.Context, s *strata.Store, topicName string) (int, error) {
	processed := 0
	for part := range p.Next {
		for {
			recs, err := s.Read(ctx, topicName, part, p.Next[part], 100)
			if err != nil {
				return processed, err
			}
			if len(recs) == 0 {
				break // at the end of the partition
			}
			for _, r := range recs {
				var e Event
				if err := json.Unmarshal(r.Value, &e); err != nil {
					return processed, fmt.Errorf("partition %d offset %d: %w", part, r.Offset, err)
				}
				switch e.Type {
				case "deposited":
					p.Balances[string(r.Key)] += e.Amount
				case "withdrawn":
					p.Balances[string(r.Key)] -= e.Amount
				case "opened":
					p.Balances[string(r.Key)] = 0
				}
				fmt.Printf("    partition %d offset %d: %-10s %s\n", part, r.Offset, r.Key, e.Type)
				p.Next[part] = r.Offset + 1
				processed++
			}
		}
	}
	return processed, nil
}

// Save writes the projection to path atomically, as the store writes its own
// checkpoints: a temporary file, fsync, rename over the old one, fsync of the
// directory.
func (p *Projection) Save(path string) error {
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return err
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}
