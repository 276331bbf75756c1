package broker

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
)

// sessionFetch is a Fetch v12 of session id at epoch, MaxWait 0, of the
// partitions of "events" at their offsets, forgetting forget.
func sessionFetch(id, epoch int32, offsets map[int32]int64, forget ...int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	req.SessionID, req.SessionEpoch = id, epoch
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 0, 1, 1<<20
	if len(offsets) > 0 {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "events"
		for _, p := range []int32{0, 1} {
			if off, ok := offsets[p]; ok {
				rp := kmsg.NewFetchRequestTopicPartition()
				rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, off, 1<<20
				rt.Partitions = append(rt.Partitions, rp)
			}
		}
		req.Topics = append(req.Topics, rt)
	}
	if len(forget) > 0 {
		ft := kmsg.NewFetchRequestForgottenTopic()
		ft.Topic, ft.Partitions = "events", forget
		req.ForgottenTopics = append(req.ForgottenTopics, ft)
	}
	return req
}

// fetched returns the partitions a response carries, with the bytes of
// records of each.
func fetched(t *testing.T, resp *fetchResponse) map[int32]int {
	t.Helper()
	defer resp.release()
	got := map[int32]int{}
	for _, st := range resp.Topics {
		require.Equal(t, "events", st.Topic)
		for _, sp := range st.Partitions {
			require.Equal(t, errNone, sp.ErrorCode)
			got[sp.Partition] = len(sp.RecordBatches)
		}
	}
	return got
}

// TestFetchSession walks a session through Kafka's rules (KIP-227): a
// full fetch at epoch 0 starts it, an incremental one carries only what
// changed, from the offsets the session holds, and forgets partitions; a
// wrong epoch, an unknown id, and a session closed with epoch -1 are
// refused.
func TestFetchSession(t *testing.T) {
	srv := testServer(t)
	do := func(req *kmsg.FetchRequest) *fetchResponse {
		t.Helper()
		resp, _, err := srv.handleFrame(frameOf(req))
		require.NoError(t, err)
		return resp.(*fetchResponse)
	}
	appendTo := func(part int) {
		_, err := srv.store.AppendTo(context.Background(), "events", part, strata.Record{Value: []byte("v")})
		require.NoError(t, err)
	}
	appendTo(0)

	resp := do(sessionFetch(0, 0, map[int32]int64{0: 0, 1: 0}))
	id := resp.SessionID
	require.NotZero(t, id, "a session")
	got := fetched(t, resp)
	require.Len(t, got, 2, "a full fetch carries every partition")
	require.Positive(t, got[0])

	resp = do(sessionFetch(id, 1, map[int32]int64{0: 1}))
	require.Equal(t, id, resp.SessionID)
	require.Empty(t, fetched(t, resp), "nothing changed")

	appendTo(1)
	resp = do(sessionFetch(id, 2, nil))
	got = fetched(t, resp)
	require.Len(t, got, 1, "only the partition that changed")
	require.Positive(t, got[1], "read from the offset the session holds")

	resp = do(sessionFetch(id, 3, map[int32]int64{1: 1}, 0))
	require.Empty(t, fetched(t, resp))
	appendTo(0)
	resp = do(sessionFetch(id, 4, nil))
	require.Empty(t, fetched(t, resp), "a forgotten partition is not fetched")

	resp = do(sessionFetch(id, 4, nil))
	require.Equal(t, errInvalidFetchSessionEpoch, resp.ErrorCode, "an epoch again")
	resp = do(sessionFetch(id, 6, nil))
	require.Equal(t, errInvalidFetchSessionEpoch, resp.ErrorCode, "an epoch skipped")
	resp = do(sessionFetch(id+1, 1, nil))
	require.Equal(t, errFetchSessionIDNotFound, resp.ErrorCode)

	resp = do(sessionFetch(id, -1, map[int32]int64{0: 0}))
	require.Equal(t, errNone, resp.ErrorCode)
	require.Zero(t, resp.SessionID, "epoch -1 is a full fetch without a session")
	require.Len(t, fetched(t, resp), 1)
	resp = do(sessionFetch(id, 5, nil))
	require.Equal(t, errFetchSessionIDNotFound, resp.ErrorCode, "closed")

	req := sessionFetch(0, 0, map[int32]int64{0: 0})
	req.SetVersion(6)
	resp = do(req)
	require.Zero(t, resp.SessionID, "no sessions before v7")
	fetched(t, resp)
}

// TestFetchSessionsFull checks the cache's bound: with maxFetchSessions
// kept, a new session evicts the longest unused one once it has been idle
// for fetchSessionIdle, and until then the fetch goes without a session.
func TestFetchSessionsFull(t *testing.T) {
	var c fetchSessions
	start := time.Unix(1_700_000_000, 0)
	var first int32
	for i := range maxFetchSessions {
		s, full, code := c.begin(sessionFetch(0, 0, map[int32]int64{0: 0}), start.Add(time.Duration(i)*time.Millisecond))
		require.Equal(t, errNone, code)
		require.True(t, full)
		require.NotNil(t, s)
		if i == 0 {
			first = s.id
		}
		s.mu.Unlock()
	}
	s, _, code := c.begin(sessionFetch(0, 0, map[int32]int64{0: 0}), start.Add(fetchSessionIdle-time.Millisecond))
	require.Equal(t, errNone, code)
	require.Nil(t, s, "no room")
	s, _, code = c.begin(sessionFetch(0, 0, map[int32]int64{0: 0}), start.Add(fetchSessionIdle))
	require.Equal(t, errNone, code)
	require.NotNil(t, s, "the longest unused evicted")
	s.mu.Unlock()
	require.Len(t, c.byID, maxFetchSessions)
	_, _, code = c.begin(sessionFetch(first, 1, nil), start.Add(fetchSessionIdle))
	require.Equal(t, errFetchSessionIDNotFound, code)
}

// TestKgoUsesFetchSessions consumes with kgo, which fetches in a session
// when the broker offers one, as every record comes back.
func TestKgoUsesFetchSessions(t *testing.T) {
	s, err := strata.Open(t.TempDir(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.NoError(t, s.CreateTopic("events", strata.TopicConfig{Partitions: 2}))
	srv, err := Start(s, &Options{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	ctx := context.Background()
	for i := range 100 {
		_, err := srv.store.AppendTo(ctx, "events", i%2, strata.Record{Value: []byte("v")})
		require.NoError(t, err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr().String()), kgo.ConsumeTopics("events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	require.NoError(t, err)
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	n := 0
	for n < 200 {
		fs := cl.PollFetches(pctx)
		require.NoError(t, pctx.Err())
		fs.EachError(func(_ string, _ int32, err error) { require.NoError(t, err) })
		n += fs.NumRecords()
		if n == 100 {
			for i := range 100 { // more, into the session's partitions
				_, err := srv.store.AppendTo(ctx, "events", i%2, strata.Record{Value: []byte("w")})
				require.NoError(t, err)
			}
		}
	}
	require.Equal(t, 200, n)
	srv.fetchSessions.mu.Lock()
	defer srv.fetchSessions.mu.Unlock()
	require.Len(t, srv.fetchSessions.byID, 1, "kgo's session")
}

// TestFetchSessionsPartitionBound checks the bound on the partitions all
// sessions hold: a new session past it is not made, an incremental fetch
// past it ends its session, and a session's end or forgotten partitions
// give theirs back.
func TestFetchSessionsPartitionBound(t *testing.T) {
	c := fetchSessions{maxParts: 3}
	now := time.Unix(1_700_000_000, 0)
	two := map[int32]int64{0: 0, 1: 0}
	a, _, _ := c.begin(sessionFetch(0, 0, two), now)
	require.NotNil(t, a)
	a.mu.Unlock()
	b, _, _ := c.begin(sessionFetch(0, 0, two), now)
	require.Nil(t, b, "4 partitions: no session")
	require.Equal(t, 2, c.parts)

	b, _, _ = c.begin(sessionFetch(0, 0, map[int32]int64{0: 0}), now)
	require.NotNil(t, b)
	b.mu.Unlock()
	_, _, code := c.begin(sessionFetch(b.id, 1, map[int32]int64{1: 0}), now)
	require.Equal(t, errFetchSessionIDNotFound, code, "past the bound: ended")
	require.Equal(t, 2, c.parts)

	s, _, code := c.begin(sessionFetch(a.id, 1, map[int32]int64{0: 5}, 1), now)
	require.Equal(t, errNone, code)
	s.mu.Unlock()
	require.Equal(t, 1, c.parts, "a forgotten partition given back")
	c.remove(a.id)
	require.Zero(t, c.parts)
}
