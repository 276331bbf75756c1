package peers

import (
	"context"
	"log/slog"

	"github.com/stratalog/strata"
)

// strataTopic is the one topic, of one partition, that the Strata peers
// write.
const strataTopic = "log"

func init() {
	register(Peer{
		Name: "strata",
		Open: openStrata,
		Note: "root API: AppendTo of one topic of one partition, Scan (bounded), GetInto; SyncNever, or SyncAlways when durable",
	})
}

// strataLog is a Store with its one topic; Producer peers reuse its reads.
type strataLog struct {
	s       *strata.Store
	ctx     context.Context
	scratch []strata.Record // reused by Append: no allocation per call
	buf     []byte          // GetInto's destination
}

// openStore opens a Store in dir with the sync policy o asks for and makes
// sure its topic is there (EnsureTopic: created on the first Open).
func openStore(dir string, o Options) (*strataLog, error) {
	opts := &strata.Options{Sync: strata.SyncNever, Logger: slog.New(slog.DiscardHandler)}
	if o.Durable {
		opts.Sync = strata.SyncAlways
	}
	s, err := strata.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	if err := s.EnsureTopic(strataTopic, strata.TopicConfig{Partitions: 1}); err != nil {
		_ = s.Close()
		return nil, err
	}
	return &strataLog{s: s, ctx: context.Background(), buf: make([]byte, 64<<10)}, nil
}

func openStrata(dir string, o Options) (Log, error) {
	return openStore(dir, o)
}

func (l *strataLog) Append(recs []Rec) error {
	l.scratch = l.scratch[:0]
	for _, r := range recs {
		l.scratch = append(l.scratch, strata.Record{Key: r.Key, Value: r.Value})
	}
	_, err := l.s.AppendTo(l.ctx, strataTopic, 0, l.scratch...)
	return err
}

func (l *strataLog) Scan(from int64, fn func(i int64, key, value []byte) bool) error {
	for r, err := range l.s.Scan(strataTopic, 0, from) {
		if err != nil {
			return err
		}
		if !fn(r.Offset, r.Key, r.Value) {
			break
		}
	}
	return nil
}

func (l *strataLog) Get(i int64, fn func(key, value []byte)) error {
	r, err := l.s.GetInto(strataTopic, 0, i, l.buf)
	if err != nil {
		return err
	}
	fn(r.Key, r.Value)
	return nil
}

func (l *strataLog) Close() error {
	return l.s.Close()
}
