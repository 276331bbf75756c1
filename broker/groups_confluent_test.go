package broker_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

// pyMember is a process of testdata/confluent_group.py: a member of a
// balanced consumer group (librdkafka).
type pyMember struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}

	mu       sync.Mutex
	assigned []int
	closed   bool
	err      error
}

// startPyMember starts a member of group consuming topic, counting the
// values it consumes in seen.
func startPyMember(t *testing.T, python string, srv *broker.Server, group, topic string, seen *counter) *pyMember {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	m := &pyMember{done: make(chan struct{})}
	m.cmd = exec.CommandContext(ctx, python, "testdata/confluent_group.py", srv.Addr().String(), group, topic)
	var err error
	m.stdin, err = m.cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := m.cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr lockedBuffer
	m.cmd.Stderr = &stderr
	require.NoError(t, m.cmd.Start())
	go func() {
		defer close(m.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var line struct {
				Assigned []int `json:"assigned"`
				Revoked  []int `json:"revoked"`
				Closed   bool  `json:"closed"`
				V        *string
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				m.fail(fmt.Errorf("confluent_group.py printed %q: %v", sc.Bytes(), err))
				continue
			}
			m.mu.Lock()
			switch {
			case line.V != nil:
				seen.add(*line.V)
			case line.Assigned != nil:
				m.assigned = line.Assigned
			case line.Revoked != nil:
				m.assigned = nil
			case line.Closed:
				m.closed = true
			}
			m.mu.Unlock()
		}
		if err := m.cmd.Wait(); err != nil {
			m.fail(fmt.Errorf("confluent_group.py: %v: %s", err, stderr.String()))
		}
	}()
	t.Cleanup(func() {
		m.stdin.Close()
		<-m.done
	})
	return m
}

func (m *pyMember) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.err = err
	}
}

// owned returns how many partitions the member was last assigned, and
// its error if it failed.
func (m *pyMember) owned() (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.assigned), m.err
}

// stop closes the member's stdin, so that it closes its consumer
// (LeaveGroup), and waits for it to exit.
func (m *pyMember) stop(t *testing.T) {
	m.stdin.Close()
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	require.NoError(t, m.err)
	require.True(t, m.closed, "the consumer closed")
}

// lockedBuffer is a bytes buffer safe for a writer and a reader.
type lockedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// TestConfluentKafkaGroup runs a balanced consumer group of two
// python3-confluent-kafka processes (librdkafka, range assignor,
// JoinGroup v5 with MEMBER_ID_REQUIRED, commits after each message): one
// consumes everything, a second joins and the partitions are shared, the
// second leaves and the first takes them back. Every record is consumed,
// and the group's commits, in the store's __consumer_offsets, reach the
// end of every partition (Store.Lag).
func TestConfluentKafkaGroup(t *testing.T) {
	python := lookConfluent(t)
	s, srv := serve(t, nil)
	const parts = 4
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{Partitions: parts}))
	produce := orderProducer(t, s, "orders", parts)
	owns := func(m *pyMember, n int) func() bool {
		return func() bool {
			got, err := m.owned()
			require.NoError(t, err)
			return got == n
		}
	}
	var seen counter
	produce(200)
	a := startPyMember(t, python, srv, "billing", "orders", &seen)
	eventually(t, "the first process to consume everything", func() bool { return seen.len() == 200 })
	require.True(t, owns(a, parts)())
	b := startPyMember(t, python, srv, "billing", "orders", &seen)
	eventually(t, "the first process to give up half", owns(a, parts/2))
	eventually(t, "the second process to take half", owns(b, parts/2))
	produce(100)
	eventually(t, "the next hundred", func() bool { return seen.len() == 300 })
	b.stop(t)
	eventually(t, "the first process to own every partition", owns(a, parts))
	produce(100)
	eventually(t, "the last hundred", func() bool { return seen.len() == 400 })
	eventuallyCommitted(t, s, "billing", "orders")
	a.stop(t)
	seen.mu.Lock()
	defer seen.mu.Unlock()
	dups := 0
	for _, n := range seen.n {
		dups += n - 1
	}
	t.Logf("%d records consumed twice across the rebalances", dups)
}

// TestConfluentKafkaGroupInProcess checks what librdkafka shows for a
// group with consumers in the process: its consumer reports
// INCONSISTENT_GROUP_PROTOCOL ("JoinGroup failed: Broker: Inconsistent
// group protocol"), and confluent_group.py exits with it.
func TestConfluentKafkaGroupInProcess(t *testing.T) {
	python := lookConfluent(t)
	s, srv := serve(t, nil)
	require.NoError(t, s.CreateTopic("orders", strata.TopicConfig{}))
	local, err := s.Consumer("billing", []string{"orders"}, strata.ConsumerOptions{})
	require.NoError(t, err)
	defer local.Close()
	var seen counter
	m := startPyMember(t, python, srv, "billing", "orders", &seen)
	<-m.done
	_, err = m.owned()
	require.ErrorContains(t, err, "INCONSISTENT_GROUP_PROTOCOL")
}
