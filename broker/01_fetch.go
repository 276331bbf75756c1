package broker

import (
	"context"
	"sync"
	"time"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/log"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleFetch answers a Fetch with the stored batches as they are on
// disk, each partition's from the batch that holds its fetch offset on
// (View.ReadBatches), within the partition's and the request's byte
// limits (the first partition with data gets at least one batch, as
// KIP-74 has it). Under read_committed (isolation level 1) it stops at the
// last stable offset and lists the aborted transactions of the range
// returned. It long-polls: with fewer than MinBytes to return and no
// partition in error, it waits up to MaxWaitMillis for more. An empty
// partition carries an empty record set, never a null one (librdkafka
// retries a null one forever).
//
// The batches are not copied: the response aliases the segments' memory
// mappings, pinned (View.PinBatches) until the connection has
// written them with one writev (see fetchResponse), so that retention,
// compaction, DeleteRecords or Store.Close meanwhile never changes the
// bytes sent; a pinned dropped segment is removed once written, or once
// the write fails or times out (IdleTimeout).
//
// Fetch sessions (KIP-227, v7 on) are kept as Kafka keeps them: a request
// of epoch 0 starts one (session id 0 in the response when
// maxFetchSessions are in use, none of them idle for fetchSessionIdle),
// one of a later epoch names only the partitions whose fetch offset
// changed and forgets the ones it no longer wants, and its response
// carries only the partitions with records, an error or new offsets. An
// unknown session id is FETCH_SESSION_ID_NOT_FOUND, an epoch other than
// the next INVALID_FETCH_SESSION_EPOCH; epoch -1 ends the session. Any
// connection may use a session.
func handleFetch(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.FetchRequest)
	sess, full, code := srv.fetchSessions.begin(req, time.Now())
	if code != errNone {
		resp := &fetchResponse{FetchResponse: req.ResponseKind().(*kmsg.FetchResponse)}
		resp.ErrorCode = code
		return resp, nil
	}
	f := fetch{srv: srv, req: req, view: srv.view(req.IsolationLevel), session: sess, full: full}
	if sess != nil {
		defer sess.mu.Unlock()
	}
	// A wait longer than IdleTimeout is cut to it: a connection holds its
	// slot no longer waiting for records than it may sending nothing.
	wait := min(time.Duration(max(req.MaxWaitMillis, 0))*time.Millisecond, srv.opts.IdleTimeout)
	ctx, cancel := context.WithTimeout(srv.ctx, wait)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			f.resp.release() // a panic (handleFrame recovers it) pins nothing
			panic(p)
		}
	}()
	for {
		bytes, failed, next := f.once()
		if failed || bytes >= int(req.MinBytes) || ctx.Err() != nil {
			break
		}
		f.resp.release() // nothing is held while waiting
		f.waitAny(ctx, next)
		if ctx.Err() != nil {
			f.once()
			break
		}
	}
	if sess != nil {
		sess.sent(f.resp.FetchResponse)
	}
	return f.resp, nil
}

// view returns the store's View at a request's isolation level: 1 is
// read_committed, anything else read_uncommitted.
func (srv *Server) view(isolationLevel int8) strata.View {
	if isolationLevel == 1 {
		return srv.store.View(strata.ReadCommitted)
	}
	return srv.store.View(strata.ReadUncommitted)
}

// fetch is one Fetch request being answered.
type fetch struct {
	srv     *Server
	req     *kmsg.FetchRequest
	view    strata.View
	session *fetchSession  // nil for a fetch without one
	full    bool           // of all the session's partitions (epoch 0)
	resp    *fetchResponse // the last once's
}

// position is a partition the response read without error, and the
// offset past what it returned.
type position struct {
	topic string
	part  int
	next  int64
}

// once reads every partition of the request, or of its session, into a
// new f.resp (whose batches it pins: the caller releases them, or hands
// them to the connection to write), and returns the bytes of records in it, whether a
// partition failed, and where each partition's next data would start.
func (f *fetch) once() (int, bool, []position) {
	resp := &fetchResponse{FetchResponse: f.req.ResponseKind().(*kmsg.FetchResponse)}
	f.resp = resp
	total, failed := 0, false
	var next []position
	budget := int(f.req.MaxBytes)
	if budget <= 0 {
		budget = int(^uint32(0) >> 1)
	}
	read := func(topic string, part int32, offset int64, maxBytes int32) kmsg.FetchResponseTopicPartition {
		sp := kmsg.NewFetchResponseTopicPartition()
		sp.Partition = part
		sp.PreferredReadReplica = -1
		sp.RecordBatches = []byte{}
		end, err := f.partition(resp, &sp, topic, int(part), offset, min(int(maxBytes), budget-total), total == 0)
		if err != nil {
			sp.ErrorCode = codeOf(err)
			failed = true
		} else {
			total += len(sp.RecordBatches)
			next = append(next, position{topic, int(part), end})
		}
		return sp
	}
	if f.session != nil {
		// The session's partitions, each topic's together; in an
		// incremental fetch only those that changed.
		var at map[string]int
		for _, p := range f.session.parts {
			sp := read(p.topic, p.part, p.offset, p.maxBytes)
			if !f.full && !p.changed(&sp) {
				continue
			}
			i, ok := at[p.topic]
			if !ok {
				if at == nil {
					at = map[string]int{}
				}
				i = len(resp.Topics)
				at[p.topic] = i
				st := kmsg.NewFetchResponseTopic()
				st.Topic = p.topic
				resp.Topics = append(resp.Topics, st)
			}
			resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, sp)
		}
		return total, failed, next
	}
	resp.Topics = make([]kmsg.FetchResponseTopic, 0, len(f.req.Topics))
	for _, rt := range f.req.Topics {
		st := kmsg.NewFetchResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.FetchResponseTopicPartition, 0, len(rt.Partitions))
		for _, rp := range rt.Partitions {
			st.Partitions = append(st.Partitions, read(rt.Topic, rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes))
		}
		resp.Topics = append(resp.Topics, st)
	}
	return total, failed, next
}

// partition fills sp with what a fetch of one partition from offset
// returns, at most limit bytes (at least one batch when first), pinned in
// resp, and returns the offset after the batches returned (offset if
// none).
func (f *fetch) partition(resp *fetchResponse, sp *kmsg.FetchResponseTopicPartition, topic string, part int, offset int64, limit int, first bool) (int64, error) {
	sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
	next := offset
	if limit > 0 || first {
		b, err := f.view.PinBatches(topic, part, offset, max(limit, 1))
		if err != nil {
			_ = f.offsets(sp, topic, part)
			return offset, err
		}
		if b.Bytes != nil {
			resp.pins = append(resp.pins, b)
			sp.RecordBatches = b.Bytes
		}
		next = batchesEnd(b.Bytes, offset)
		sp.LogStartOffset, sp.HighWatermark, sp.LastStableOffset = b.StartOffset, b.HighWatermark, b.LastStableOffset
	} else if err := f.offsets(sp, topic, part); err != nil {
		return offset, err
	}
	if f.view.Isolation() == strata.ReadCommitted {
		sp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
		if next > offset {
			aborted, err := f.srv.store.AbortedTxns(topic, part, offset, next)
			if err != nil {
				return offset, err
			}
			for _, a := range aborted {
				at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
				at.ProducerID, at.FirstOffset = a.ProducerID, a.FirstOffset
				sp.AbortedTransactions = append(sp.AbortedTransactions, at)
			}
		}
	}
	return next, nil
}

// offsets fills in a partition's high watermark, last stable offset and
// log start offset, for a partition whose batches were not read.
func (f *fetch) offsets(sp *kmsg.FetchResponseTopicPartition, topic string, part int) error {
	ru, rc := f.srv.store.View(strata.ReadUncommitted), f.srv.store.View(strata.ReadCommitted)
	var err error
	if sp.LogStartOffset, err = ru.ListOffsets(topic, part, strata.Earliest); err != nil {
		return err
	}
	if sp.HighWatermark, err = ru.ListOffsets(topic, part, strata.Latest); err != nil {
		return err
	}
	sp.LastStableOffset, err = rc.ListOffsets(topic, part, strata.Latest)
	return err
}

// batchesEnd returns the offset after the last of back-to-back batches b,
// or offset if there are none.
func batchesEnd(b []byte, offset int64) int64 {
	next := offset
	for it := log.NewBatchIter(b); it.Next(); {
		next = max(next, it.Header().NextOffset())
	}
	return next
}

// waitAny blocks until one of the positions has more to read or ctx ends.
func (f *fetch) waitAny(ctx context.Context, next []position) {
	if len(next) == 0 {
		<-ctx.Done()
		return
	}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, p := range next {
		wg.Go(func() {
			if f.view.Wait(wctx, p.topic, p.part, p.next) == nil {
				cancel()
			}
		})
	}
	<-wctx.Done()
	cancel()
	wg.Wait()
}
