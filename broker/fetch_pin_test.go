package broker_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
	"github.com/stratalog/strata/log"
)

// TestFetchOutlivesTheSegment drops the segment a Fetch response is being
// written from while the client has read only its first bytes: the client
// still gets the very bytes stored, and the segment's files go once the
// response is written, or once the connection closes before it is: the
// server's Close, or a client that stops reading for IdleTimeout.
func TestFetchOutlivesTheSegment(t *testing.T) {
	dropRecords := func(t *testing.T, s *strata.Store, hw int64) {
		require.NoError(t, s.DeleteRecords("big", 0, hw))
		_, err := s.EnforceRetention(context.Background())
		require.NoError(t, err)
	}
	for _, tc := range []struct {
		name  string
		drop  func(t *testing.T, s *strata.Store, hw int64)
		close bool          // the server closes the connection instead of writing it all
		stall time.Duration // the client stops reading; the server's IdleTimeout
	}{
		{"DeleteRecords and retention", func(t *testing.T, s *strata.Store, hw int64) {
			require.NoError(t, s.DeleteRecords("big", 0, hw))
			_, err := s.EnforceRetention(context.Background())
			require.NoError(t, err)
		}, false, 0},
		{"DeleteTopic", func(t *testing.T, s *strata.Store, _ int64) {
			require.NoError(t, s.DeleteTopic("big"))
		}, false, 0},
		{"DeleteRecords then Server.Close", dropRecords, true, 0},
		{"DeleteRecords and a stalled client", dropRecords, false, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := strata.Open(t.TempDir(), &strata.Options{RetentionCheckInterval: -1})
			require.NoError(t, err)
			defer s.Close()
			srv, err := broker.Start(s, &broker.Options{Addr: "127.0.0.1:0", IdleTimeout: tc.stall})
			require.NoError(t, err)
			defer srv.Close()

			// 24 MiB segments of 100 KiB records: the first segment is
			// more than the sockets' buffers hold.
			require.NoError(t, s.CreateTopic("big", strata.TopicConfig{SegmentBytes: 24 << 20}))
			value := bytes.Repeat([]byte("0123456789"), 10<<10)
			for i := range 300 {
				value[0] = byte(i)
				_, err := s.AppendTo(context.Background(), "big", 0, strata.Record{Value: value})
				require.NoError(t, err)
			}
			want, err := s.View(strata.ReadUncommitted).ReadBatches("big", 0, 0, 64<<20, nil)
			require.NoError(t, err)
			require.Greater(t, len(want), 16<<20)
			first := filepath.Join(s.Dir(), "big-0", fmt.Sprintf("%020d.log", 0))

			d := net.Dialer{}
			nc, err := d.Dial("tcp", srv.Addr().String())
			require.NoError(t, err)
			defer nc.Close()
			require.NoError(t, nc.(*net.TCPConn).SetReadBuffer(16<<10))
			req := kmsg.NewPtrFetchRequest()
			req.SetVersion(11)
			req.MaxBytes, req.MinBytes, req.MaxWaitMillis = 64<<20, 1, 100
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = "big"
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.PartitionMaxBytes = 64 << 20
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			_, err = nc.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, 1))
			require.NoError(t, err)

			// The writer has begun the response once its first bytes are
			// here; it cannot have finished: the sockets hold less.
			_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
			var size [4]byte
			_, err = io.ReadFull(nc, size[:])
			require.NoError(t, err)
			hw, err := s.View(strata.ReadUncommitted).ListOffsets("big", 0, strata.Latest)
			require.NoError(t, err)
			tc.drop(t, s, hw)

			switch {
			case tc.close:
				require.NoError(t, srv.Close())
			case tc.stall > 0:
				// The client reads no more: the write times out.
			default:
				body := make([]byte, binary.BigEndian.Uint32(size[:]))
				_, err = io.ReadFull(nc, body)
				require.NoError(t, err)
				resp := req.ResponseKind().(*kmsg.FetchResponse)
				require.NoError(t, resp.ReadFrom(body[4:]))
				got := resp.Topics[0].Partitions[0].RecordBatches
				require.Equal(t, len(want), len(got))
				require.True(t, bytes.Equal(want, got), "the bytes stored")
				for it := log.NewBatchIter(got); it.Next(); {
					_, err := log.CheckBatch(it.Batch())
					require.NoError(t, err)
				}
			}
			deadline := time.Now().Add(30 * time.Second)
			for len(segmentFiles(t, first)) > 0 {
				require.True(t, time.Now().Before(deadline), "the dropped segment's files stay: %v", segmentFiles(t, first))
				time.Sleep(time.Millisecond)
			}
		})
	}
}

// segmentFiles returns the files of a segment's log, under its name or
// marked deleted, anywhere in the store's directory.
func segmentFiles(t *testing.T, path string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(filepath.Dir(filepath.Dir(path)), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && len(d.Name()) >= len(filepath.Base(path)) && d.Name()[:len(filepath.Base(path))] == filepath.Base(path) {
			found = append(found, p)
		}
		return nil
	})
	require.NoError(t, err)
	return found
}
