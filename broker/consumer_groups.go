package broker

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/topic"
)

// consumerGroups are the members of KIP-848 consumer groups that Kafka
// clients joined with ConsumerGroupHeartbeat. Their groups are the
// store's: each wire member is a member of the store's group coordinator
// (Store.HeartbeatGroup), which assigns the partitions and runs the
// incremental rebalance with the store's own Consumers of the group. What
// is kept here is what the coordinator does not know: the member id the
// client chose, its member epoch and the previous one, its instance id,
// its subscription as the client gave it, and the assignment it was last
// sent.
//
// One mutex guards the map of groups; each group has its own, held while
// one of its members' heartbeats runs, so that a member's epoch and what
// the coordinator holds for it change together.
type consumerGroups struct {
	mu struct {
		sync.Mutex
		m map[string]*consumerGroup
		// sweep runs sweepGroups every sweepInterval while there are
		// groups; nil when not armed.
		sweep  *time.Timer
		closed bool
	}
	// members counts the wire members of every group, at most
	// maxWireMembers: a new member past it is COORDINATOR_NOT_AVAILABLE,
	// which clients retry, so that heartbeats that join ever new groups
	// bound what the broker and the store hold until the members'
	// session timeouts have passed.
	members atomic.Int64
}

// sweepInterval is how often the groups are swept (sweepGroups): the
// members of a group nobody heartbeats to any more are evicted within
// the store's session timeout and this. A variable for tests.
var sweepInterval = 10 * time.Second

// armSweep starts the sweep of the groups, if not started yet.
func (cs *consumerGroups) armSweep(store *strata.Store) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.mu.sweep == nil && !cs.mu.closed {
		cs.mu.sweep = time.AfterFunc(sweepInterval, func() { cs.sweepGroups(store) })
	}
}

// sweepGroups asks the store for the members of every group, which
// evicts those whose session timed out (the store's coordinator checks
// its deadlines when called), forgets the wire members it evicted and
// the groups left without members, and arms the next sweep while groups
// remain: so that a client that joined groups and went away leaves
// nothing behind, neither here nor in the store, even if no one calls on
// those groups again.
func (cs *consumerGroups) sweepGroups(store *strata.Store) {
	cs.mu.Lock()
	names := make([]string, 0, len(cs.mu.m))
	for name := range cs.mu.m {
		names = append(names, name)
	}
	cs.mu.Unlock()
	for _, name := range names {
		if g := cs.lockGroup(name, false); g != nil {
			g.pruneLocked(store)
			cs.unlockGroup(g)
		}
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.mu.sweep = nil
	if len(cs.mu.m) > 0 && !cs.mu.closed {
		cs.mu.sweep = time.AfterFunc(sweepInterval, func() { cs.sweepGroups(store) })
	}
}

// consumerGroup is the wire members of one group, by the member id the
// client sent (v1) or was given (v0). Its fields are guarded by mu.
type consumerGroup struct {
	mu      sync.Mutex
	cs      *consumerGroups
	name    string
	members map[string]*consumerMember
	static  map[string]*consumerMember // by instance id
	gone    bool                       // removed from consumerGroups
}

// consumerMember is one wire member of a consumerGroup.
type consumerMember struct {
	id         string // the client's
	coordID    string // the store coordinator's
	instanceID string
	clientID   string // of its join
	clientHost string // of its join: the client's address, "/127.0.0.1"
	rackID     string
	// epoch is the member epoch last sent: the store's generation of the
	// member's last heartbeat, or the epoch it had while it holds
	// partitions to give back; prevEpoch the one before it, which Kafka
	// accepts once more from a member that lost a response.
	epoch, prevEpoch int32
	// gen is the store's generation of the member's last heartbeat, at
	// which its commits go to the store (Store.CommitAsMember).
	gen        int
	names      []string       // SubscribedTopicNames, sorted
	regex      *regexp.Regexp // SubscribedTopicRegex, nil if none
	regexSrc   string         // as the member sent it
	subscribed []string       // the topics last given to the store
	assigned   []strata.TopicPartition
	sent       bool // assigned was sent
}

// lockGroup returns the group named name, locked, creating it if create
// is set; nil if there is none.
func (cs *consumerGroups) lockGroup(name string, create bool) *consumerGroup {
	for {
		cs.mu.Lock()
		g := cs.mu.m[name]
		if g == nil {
			if !create {
				cs.mu.Unlock()
				return nil
			}
			if cs.mu.m == nil {
				cs.mu.m = map[string]*consumerGroup{}
			}
			g = &consumerGroup{cs: cs, name: name, members: map[string]*consumerMember{}, static: map[string]*consumerMember{}}
			cs.mu.m[name] = g
		}
		cs.mu.Unlock()
		g.mu.Lock()
		if !g.gone {
			return g
		}
		g.mu.Unlock()
	}
}

// unlockGroup unlocks g, forgetting it first if it has no members.
func (cs *consumerGroups) unlockGroup(g *consumerGroup) {
	if len(g.members) == 0 {
		cs.mu.Lock()
		if cs.mu.m[g.name] == g {
			delete(cs.mu.m, g.name)
		}
		cs.mu.Unlock()
		g.gone = true
	}
	g.mu.Unlock()
}

// has reports whether the group named name has wire members.
func (cs *consumerGroups) has(name string) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.mu.m[name] != nil
}

// putLocked makes m a member of g, and removeLocked forgets it; they
// keep the count maxWireMembers caps.
func (g *consumerGroup) putLocked(m *consumerMember) {
	if g.members[m.id] == nil {
		g.cs.members.Add(1)
	}
	g.members[m.id] = m
}

func (g *consumerGroup) removeLocked(m *consumerMember) {
	if g.members[m.id] == m {
		g.cs.members.Add(-1)
		delete(g.members, m.id)
	}
	if m.instanceID != "" && g.static[m.instanceID] == m {
		delete(g.static, m.instanceID)
	}
}

// pruneLocked forgets the members the store's coordinator no longer has
// (evicted after their session timeout), so that what is kept here is
// bounded by the coordinator's members.
func (g *consumerGroup) pruneLocked(store *strata.Store) {
	live := map[string]bool{}
	for _, m := range store.GroupMembers(g.name) {
		live[m.ID] = true
	}
	for _, m := range g.members {
		if !live[m.coordID] {
			g.removeLocked(m)
		}
	}
}

// close takes every wire member out of its group in the store, so that
// their partitions go to the group's other members at once (the clients
// join again, with UNKNOWN_MEMBER_ID, on the next Server), and forgets
// them. Server.Close calls it once no handler runs.
func (cs *consumerGroups) close(store *strata.Store) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.mu.closed = true
	if cs.mu.sweep != nil {
		cs.mu.sweep.Stop()
		cs.mu.sweep = nil
	}
	for name, g := range cs.mu.m {
		g.mu.Lock()
		for _, m := range g.members {
			_ = store.LeaveGroup(name, m.coordID)
		}
		cs.members.Add(-int64(len(g.members)))
		clear(g.members)
		clear(g.static)
		g.gone = true
		g.mu.Unlock()
		delete(cs.mu.m, name)
	}
}

// memberEpoch is the store member id and error code of a commit by
// memberID at memberEpoch, as Kafka's ConsumerGroup validateMemberEpoch
// checks it (STALE_MEMBER_EPOCH), and ok; not ok if memberID is not a
// wire member of a consumer group (the classic rules apply).
func (cs *consumerGroups) memberEpoch(name, memberID string, memberEpoch int32) (coordID string, gen int, code int16, ok bool) {
	g := cs.lockGroup(name, false)
	if g == nil {
		return "", 0, errNone, false
	}
	defer cs.unlockGroup(g)
	m := g.members[memberID]
	switch {
	case m == nil:
		return "", 0, errNone, false
	case memberEpoch != m.epoch:
		return "", 0, errStaleMemberEpoch, true
	}
	return m.coordID, m.gen, errNone, true
}

// fetchCode is the error code of an OffsetFetch (v9+) of a group by
// memberID at memberEpoch, as Kafka's ConsumerGroup validateOffsetFetch
// checks it: none for a request without a member (an admin's) or for a
// group without KIP-848 wire members; else UNKNOWN_MEMBER_ID for another
// member, STALE_MEMBER_EPOCH for another epoch.
func (cs *consumerGroups) fetchCode(name string, memberID *string, memberEpoch int32) int16 {
	if memberID == nil && memberEpoch < 0 {
		return errNone
	}
	g := cs.lockGroup(name, false)
	if g == nil {
		return errNone
	}
	defer cs.unlockGroup(g)
	m := g.members[str(memberID)]
	switch {
	case m == nil:
		return errUnknownMemberID
	case memberEpoch != m.epoch:
		return errStaleMemberEpoch
	}
	return errNone
}

// subscription returns the topics m subscribes to: its names and
// the store's topics its regex matches whole, sorted; never nil.
func (m *consumerMember) subscription(store *strata.Store) []string {
	topics := slices.Clone(m.names)
	if m.regex != nil {
		for _, name := range store.Topics() {
			if !topic.IsInternal(name) && m.regex.MatchString(name) {
				topics = append(topics, name)
			}
		}
	}
	slices.Sort(topics)
	return append([]string{}, slices.Compact(topics)...)
}

// compileRegex compiles a SubscribedTopicRegex (Java's RE2/J syntax,
// which Go's RE2 shares) to match a topic name whole.
func compileRegex(expr string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(`^(?:` + expr + `)$`)
	if err != nil {
		return nil, fmt.Errorf("invalid SubscribedTopicRegex %q: %v", expr, err)
	}
	return re, nil
}

// heartbeatCode is the code of a store error from HeartbeatGroup.
func heartbeatCode(err error) int16 {
	switch {
	case errors.Is(err, strata.ErrGroupClaimed):
		return errGroupIDNotFound
	case errors.Is(err, strata.ErrFenced), errors.Is(err, group.ErrUnknownMember):
		return errUnknownMemberID
	case errors.Is(err, strata.ErrInvalidGroup):
		return errInvalidGroupID
	case errors.Is(err, strata.ErrInvalidTopic), errors.Is(err, strata.ErrReservedTopic):
		return errInvalidTopic
	}
	return groupCodeOf(err)
}
