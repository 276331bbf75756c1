package peers

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func init() {
	register(Peer{
		Name: "nats-jetstream",
		Open: openNATS,
		Note: "NATS JetStream's file store through an embedded nats-server started in Open (W7 pays for it; " +
			"package server exports no file store constructor) and nats.go's jetstream API on an in-process " +
			"connection: Publish for 1 record, PublishAsync then PublishAsyncComplete for more; durable is " +
			"the server's sync_interval: always (an fsync per message); Get a direct get, Scan an ordered consumer",
	})
}

// natsStream is the stream, and its one subject, that the peer writes.
const natsStream = "bench"

// natsTimeout bounds each call (a Scan gets more per record), so that a
// server that stops answering makes the call fail instead of hang.
const natsTimeout = 30 * time.Second

// errNATS is what the peer returns when the server's answer is not what
// was asked for (a sequence out of order, a message that does not parse).
var errNATS = errors.New("peers: unexpected answer from the NATS server")

// natsLog is a Log over a JetStream stream of an embedded server. Record
// i is the stream's message of sequence i+1; its data is the key's length
// as a uvarint, the key, then the value.
type natsLog struct {
	ns     *server.Server
	nc     *nats.Conn
	js     jetstream.JetStream
	stream jetstream.Stream
	n      int64 // messages in the stream
	buf    []byte
	futs   []jetstream.PubAckFuture
}

// openNATS starts a server with JetStream storing in dir, connects to it
// in process and creates the stream, or finds it when dir holds it.
func openNATS(dir string, o Options) (_ Log, err error) {
	ns, err := server.NewServer(&server.Options{
		ServerName: "bench",
		JetStream:  true,
		StoreDir:   dir,
		DontListen: true,
		NoLog:      true,
		NoSigs:     true,
		SyncAlways: o.Durable,
	})
	if err != nil {
		return nil, err
	}
	l := &natsLog{ns: ns}
	defer func() {
		if err != nil {
			err = errors.Join(err, l.Close())
		}
	}()
	ns.Start()
	if !ns.ReadyForConnections(natsTimeout) {
		return nil, fmt.Errorf("peers: the NATS server is not ready after %v: %w", natsTimeout, errNATS)
	}
	if l.nc, err = nats.Connect(ns.ClientURL(), nats.InProcessServer(ns), nats.NoReconnect()); err != nil {
		return nil, err
	}
	if l.js, err = jetstream.New(l.nc); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), natsTimeout)
	defer cancel()
	l.stream, err = l.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        natsStream,
		Subjects:    []string{natsStream},
		Storage:     jetstream.FileStorage,
		Replicas:    1,
		AllowDirect: true,
	})
	if err != nil {
		return nil, err
	}
	info := l.stream.CachedInfo()
	if info.State.Msgs != info.State.LastSeq {
		return nil, fmt.Errorf("peers: stream %s holds %d messages up to sequence %d, not all of them: %w", natsStream, info.State.Msgs, info.State.LastSeq, errNATS)
	}
	l.n = int64(info.State.LastSeq)
	return l, nil
}

// natsData appends rec's data to b.
func natsData(b []byte, r Rec) []byte {
	b = binary.AppendUvarint(b, uint64(len(r.Key)))
	b = append(b, r.Key...)
	return append(b, r.Value...)
}

// natsSplit is the key and value of a message's data.
func natsSplit(data []byte) (key, value []byte, err error) {
	k, n := binary.Uvarint(data)
	if n <= 0 || k > uint64(len(data)-n) {
		return nil, nil, fmt.Errorf("peers: message of %d bytes has no valid key length: %w", len(data), errNATS)
	}
	data = data[n:]
	return data[:k:k], data[k:], nil
}

// Append publishes one record and waits for its ack, or publishes more
// asynchronously and waits for all their acks, checking that they got the
// sequences that follow the ones before.
func (l *natsLog) Append(recs []Rec) error {
	ctx, cancel := context.WithTimeout(context.Background(), natsTimeout)
	defer cancel()
	switch len(recs) {
	case 0:
		return nil
	case 1:
		l.buf = natsData(l.buf[:0], recs[0])
		ack, err := l.js.Publish(ctx, natsStream, l.buf)
		if err != nil {
			return err
		}
		return l.acked(0, ack)
	}
	size := 0
	for _, r := range recs {
		size += binary.MaxVarintLen64 + len(r.Key) + len(r.Value)
	}
	// The futures keep the messages until they are acked (to publish
	// them again): each has its own part of buf, which is reused only
	// once every ack is in.
	if cap(l.buf) < size {
		l.buf = make([]byte, 0, size)
	}
	l.buf, l.futs = l.buf[:0], l.futs[:0]
	for _, r := range recs {
		start := len(l.buf)
		l.buf = natsData(l.buf, r)
		f, err := l.js.PublishAsync(natsStream, l.buf[start:len(l.buf):len(l.buf)])
		if err != nil {
			return errors.Join(err, l.waitAcks(ctx, len(l.futs)))
		}
		l.futs = append(l.futs, f)
	}
	if err := l.waitAcks(ctx, len(recs)); err != nil {
		return err
	}
	for i, f := range l.futs {
		select {
		case ack := <-f.Ok():
			if err := l.acked(i, ack); err != nil {
				return err
			}
		case err := <-f.Err():
			return err
		}
	}
	clear(l.futs)
	return nil
}

// waitAcks waits for the acks of the n messages published, so that buf
// may be reused.
func (l *natsLog) waitAcks(ctx context.Context, n int) error {
	select {
	case <-l.js.PublishAsyncComplete():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("peers: acks of %d messages: %w", n, ctx.Err())
	}
}

// acked checks that the i-th message of an Append got the sequence after
// the ones before it, and counts it.
func (l *natsLog) acked(i int, ack *jetstream.PubAck) error {
	if want := uint64(l.n) + 1; ack.Sequence != want {
		return fmt.Errorf("peers: message %d stored at sequence %d, want %d: %w", i, ack.Sequence, want, errNATS)
	}
	l.n++
	return nil
}

// Scan reads the stream from record from to the last one stored as of
// the call with an ordered consumer, then deletes the consumer.
func (l *natsLog) Scan(from int64, fn func(i int64, key, value []byte) bool) (err error) {
	end := l.n
	if from < 0 || from > end {
		return fmt.Errorf("peers: scan from %d out of range [0, %d]: %w", from, end, errNetRange)
	}
	if from == end {
		return nil
	}
	// The scan's deadline grows with its length: 1 M records have 130 s.
	ctx, cancel := context.WithTimeout(context.Background(), natsTimeout+time.Duration(end-from)*100*time.Microsecond)
	defer cancel()
	c, err := l.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   uint64(from) + 1,
	})
	if err != nil {
		return err
	}
	it, err := c.Messages()
	if err != nil {
		return err
	}
	defer func() {
		it.Stop()
		if info := c.CachedInfo(); info != nil {
			err = errors.Join(err, l.js.DeleteConsumer(ctx, natsStream, info.Name))
		}
	}()
	for i := from; i < end; i++ {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return err
		}
		if i == from {
			// The ordered consumer delivers the stream's messages
			// in order and without gaps: the first one says where
			// it starts.
			md, err := m.Metadata()
			if err != nil {
				return err
			}
			if md.Sequence.Stream != uint64(from)+1 {
				return fmt.Errorf("peers: scan from sequence %d got %d first: %w", from+1, md.Sequence.Stream, errNATS)
			}
		}
		key, value, err := natsSplit(m.Data())
		if err != nil {
			return err
		}
		if !fn(i, key, value) {
			return nil
		}
	}
	return nil
}

// Get reads record i with a direct get of its sequence.
func (l *natsLog) Get(i int64, fn func(key, value []byte)) error {
	if i < 0 || i >= l.n {
		return fmt.Errorf("peers: record %d out of range [0, %d): %w", i, l.n, errNetRange)
	}
	ctx, cancel := context.WithTimeout(context.Background(), natsTimeout)
	defer cancel()
	m, err := l.stream.GetMsg(ctx, uint64(i)+1)
	if err != nil {
		return err
	}
	if m.Sequence != uint64(i)+1 {
		return fmt.Errorf("peers: get of sequence %d got %d: %w", i+1, m.Sequence, errNATS)
	}
	key, value, err := natsSplit(m.Data)
	if err != nil {
		return err
	}
	fn(key, value)
	return nil
}

// Close closes the connection, shuts the server down and waits for it to
// stop; the file store writes out what it buffers as it stops.
func (l *natsLog) Close() error {
	if l.nc != nil {
		l.nc.Close()
		l.nc = nil
	}
	if l.ns != nil {
		l.ns.Shutdown()
		l.ns.WaitForShutdown()
		l.ns = nil
	}
	return nil
}
