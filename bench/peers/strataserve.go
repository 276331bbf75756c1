package peers

import (
	"errors"
	"log/slog"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

func init() {
	register(Peer{
		Name: "strata-serve",
		Open: openStrataServe,
		Note: "Strata's Kafka listener (package broker) serving a Store (SyncNever, SyncAlways when durable) " +
			"on loopback TCP, started in Open (W7 pays for it), driven by the same kgo client as kfake",
	})
}

// openStrataServe opens the store in dir with the topic, serves it on a
// loopback port of the system's choosing and connects to it.
func openStrataServe(dir string, o Options) (Log, error) {
	sync := strata.SyncNever
	if o.Durable {
		sync = strata.SyncAlways
	}
	s, err := strata.Open(dir, &strata.Options{Sync: sync, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	if err := s.EnsureTopic(kgoTopic, strata.TopicConfig{Partitions: 1}); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	srv, err := broker.Start(s, &broker.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return openKgo(srv.Addr().String(), o, func() error { return errors.Join(srv.Close(), s.Close()) })
}
