package peers

import (
	"github.com/stratalog/strata"
)

func init() {
	register(Peer{
		Name: "strata-producer",
		Open: openProducer,
		Note: "Store.Producer with its defaults (linger, idempotent): Produce per record, Flush at the end; ProduceSync per call when durable; reads as strata",
	})
}

// producerLog appends through a Producer and reads through its Store.
type producerLog struct {
	*strataLog
	p       *strata.Producer
	durable bool
}

func openProducer(dir string, o Options) (Log, error) {
	l, err := openStore(dir, o)
	if err != nil {
		return nil, err
	}
	return &producerLog{strataLog: l, p: l.s.Producer(strata.ProducerOptions{}), durable: o.Durable}, nil
}

// Append produces recs and, when durable, waits until they are appended
// (and so fsynced under SyncAlways).
func (l *producerLog) Append(recs []Rec) error {
	if l.durable {
		l.scratch = l.scratch[:0]
		for _, r := range recs {
			l.scratch = append(l.scratch, strata.Record{Key: r.Key, Value: r.Value})
		}
		_, err := l.p.ProduceSync(l.ctx, strataTopic, l.scratch...)
		return err
	}
	for _, r := range recs {
		if err := l.p.Produce(l.ctx, strataTopic, strata.Record{Key: r.Key, Value: r.Value}, nil); err != nil {
			return err
		}
	}
	return nil
}

// Flush waits until every produced record is appended.
func (l *producerLog) Flush() error {
	return l.p.Flush(l.ctx)
}

func (l *producerLog) Close() error {
	err := l.p.Close()
	if cerr := l.strataLog.Close(); err == nil {
		err = cerr
	}
	return err
}
