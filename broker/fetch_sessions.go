package broker

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The limits of fetch sessions (KIP-227).
const (
	// maxFetchSessions is the most sessions kept at once, Kafka's
	// max.incremental.fetch.session.cache.slots default.
	maxFetchSessions = 1000
	// fetchSessionIdle is how long a session must go unused before a new
	// one may evict it when maxFetchSessions are kept, Kafka's
	// min.incremental.fetch.session.eviction.ms default.
	fetchSessionIdle = 2 * time.Minute
	// maxSessionPartitions bounds the partitions of all sessions together
	// (about 128 bytes each): a new session that would take more is not
	// made (the fetch goes without one), and an incremental fetch that
	// would ends its session (FETCH_SESSION_ID_NOT_FOUND, and the client
	// starts a new one).
	maxSessionPartitions = 1 << 20
)

// fetchSessions are the fetch sessions the broker keeps for clients
// (Kafka's FetchSessionCache), by id, for any connection to use.
type fetchSessions struct {
	mu     sync.Mutex
	byID   map[int32]*fetchSession
	lastID int32
	parts  int // of all sessions, at most maxSessionPartitions
	// maxParts is maxSessionPartitions, or a test's (0 for the former).
	maxParts int
}

// fetchSession is one client's fetch session: the partitions it fetches,
// with what it last asked and was last told of each, so that an
// incremental fetch names only the partitions whose fetch offset changed
// and its response carries only the partitions that changed.
type fetchSession struct {
	id int32

	closed atomic.Bool // removed from fetchSessions
	used   time.Time   // guarded by fetchSessions.mu
	held   int         // its count in fetchSessions.parts; guarded by fetchSessions.mu

	mu    sync.Mutex // held by the one request that uses the session
	epoch int32      // the epoch the next request carries
	parts []*sessionPart
	index map[topicPart]*sessionPart
}

type topicPart struct {
	topic string
	part  int32
}

// sessionPart is a partition of a session: its fetch offset and byte
// limit as last asked, and the offsets last sent (sent false: none yet).
type sessionPart struct {
	topicPart
	offset            int64
	maxBytes          int32
	hw, lso, logStart int64
	sent              bool
}

// begin starts answering req with its session: nil with code 0 for a
// fetch without one (a full fetch, whose response has session id 0: a
// request before v7, a session closed with epoch -1, or no room for a new
// one), else the session, locked until the caller calls done; with full
// true for a new session (epoch 0), whose partitions are the request's.
// A code other than 0 is the response's error: FETCH_SESSION_ID_NOT_FOUND
// or INVALID_FETCH_SESSION_EPOCH.
func (c *fetchSessions) begin(req *kmsg.FetchRequest, now time.Time) (s *fetchSession, full bool, code int16) {
	if req.Version < 7 {
		return nil, true, errNone
	}
	switch {
	case req.SessionEpoch == -1: // a full fetch that closes its session, if any
		if req.SessionID != 0 {
			c.remove(req.SessionID)
		}
		return nil, true, errNone
	case req.SessionEpoch == 0: // a full fetch that starts a new session
		if req.SessionID != 0 {
			c.remove(req.SessionID)
		}
		s = c.create(now)
		if s == nil {
			return nil, true, errNone
		}
		s.mu.Lock()
		if !s.update(c, req) {
			s.mu.Unlock()
			c.remove(s.id)
			return nil, true, errNone
		}
		s.epoch = 1
		return s, true, errNone
	case req.SessionEpoch < 0:
		return nil, false, errInvalidFetchSessionEpoch
	}
	c.mu.Lock()
	s = c.byID[req.SessionID]
	if s != nil {
		s.used = now
	}
	c.mu.Unlock()
	if s == nil {
		return nil, false, errFetchSessionIDNotFound
	}
	s.mu.Lock()
	switch {
	case s.closed.Load():
		s.mu.Unlock()
		return nil, false, errFetchSessionIDNotFound
	case req.SessionEpoch != s.epoch:
		s.mu.Unlock()
		return nil, false, errInvalidFetchSessionEpoch
	case !s.update(c, req):
		s.mu.Unlock()
		c.remove(s.id)
		return nil, false, errFetchSessionIDNotFound
	}
	s.epoch = nextEpoch(s.epoch)
	return s, false, errNone
}

// nextEpoch is the epoch after e: 1 follows the largest.
func nextEpoch(e int32) int32 {
	if e == math.MaxInt32 {
		return 1
	}
	return e + 1
}

// create adds a new session, evicting the longest unused one if the
// cache is full and it has been unused for fetchSessionIdle; nil if there
// is no room.
func (c *fetchSessions) create(now time.Time) *fetchSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[int32]*fetchSession{}
	}
	if len(c.byID) >= maxFetchSessions {
		var oldest *fetchSession
		for _, s := range c.byID {
			if oldest == nil || s.used.Before(oldest.used) {
				oldest = s
			}
		}
		if now.Sub(oldest.used) < fetchSessionIdle {
			return nil
		}
		c.removeMuLocked(oldest)
	}
	for {
		c.lastID++
		if c.lastID <= 0 {
			c.lastID = 1
		}
		if c.byID[c.lastID] == nil {
			break
		}
	}
	s := &fetchSession{id: c.lastID, used: now, index: map[topicPart]*sessionPart{}}
	c.byID[s.id] = s
	return s
}

// remove ends a session; one not kept is no matter.
func (c *fetchSessions) remove(id int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.byID[id]; s != nil {
		c.removeMuLocked(s)
	}
}

func (c *fetchSessions) removeMuLocked(s *fetchSession) {
	delete(c.byID, s.id)
	c.parts -= s.held
	s.held = 0
	s.closed.Store(true) // a request waiting for s.mu finds it gone
}

// update applies a request's partitions (added, or their fetch offset and
// byte limit changed) and forgotten topics to the session, which the
// caller holds; false, having changed nothing, if the new partitions would
// take the sessions past maxSessionPartitions, or the session is closed.
func (s *fetchSession) update(c *fetchSessions, req *kmsg.FetchRequest) bool {
	added := 0
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			if s.index[topicPart{rt.Topic, rp.Partition}] == nil {
				added++ // a partition named twice counts twice: an upper bound
			}
		}
	}
	if !c.reserve(s, added) {
		return false
	}
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			k := topicPart{rt.Topic, rp.Partition}
			p := s.index[k]
			if p == nil {
				p = &sessionPart{topicPart: k}
				s.index[k] = p
				s.parts = append(s.parts, p)
			}
			p.offset, p.maxBytes = rp.FetchOffset, rp.PartitionMaxBytes
		}
	}
	forgot := false
	for _, ft := range req.ForgottenTopics {
		for _, part := range ft.Partitions {
			k := topicPart{ft.Topic, part}
			if s.index[k] != nil {
				delete(s.index, k)
				forgot = true
			}
		}
	}
	if forgot {
		kept := s.parts[:0]
		for _, p := range s.parts {
			if s.index[p.topicPart] == p {
				kept = append(kept, p)
			}
		}
		clear(s.parts[len(kept):])
		s.parts = kept
	}
	c.settle(s, len(s.parts)) // gives back what was forgotten or counted twice
	return true
}

// reserve counts n more partitions for s in the sessions' total; false,
// counting nothing, if s is closed or they would take the total past
// maxSessionPartitions.
func (c *fetchSessions) reserve(s *fetchSession, n int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	limit := c.maxParts
	if limit == 0 {
		limit = maxSessionPartitions
	}
	if s.closed.Load() || c.parts+n > limit {
		return false
	}
	c.parts += n
	s.held += n
	return true
}

// settle makes s count n partitions in the sessions' total, at most what
// it reserved; a closed session counts none.
func (c *fetchSessions) settle(s *fetchSession, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !s.closed.Load() && n < s.held {
		c.parts -= s.held - n
		s.held = n
	}
}

// changed reports whether a partition as read must be in an incremental
// fetch's response: it has records or an error, or offsets other than the
// session last sent (KIP-227), or the session has sent none.
func (p *sessionPart) changed(sp *kmsg.FetchResponseTopicPartition) bool {
	return !p.sent || len(sp.RecordBatches) > 0 || sp.ErrorCode != errNone ||
		sp.HighWatermark != p.hw || sp.LastStableOffset != p.lso || sp.LogStartOffset != p.logStart
}

// sent gives resp the session's id and remembers the offsets it sends.
func (s *fetchSession) sent(resp *kmsg.FetchResponse) {
	resp.SessionID = s.id
	for _, st := range resp.Topics {
		for _, sp := range st.Partitions {
			if p := s.index[topicPart{st.Topic, sp.Partition}]; p != nil {
				p.hw, p.lso, p.logStart, p.sent = sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset, true
			}
		}
	}
}
