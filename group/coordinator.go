package group

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configures a [Coordinator]. A zero field (or a negative one)
// means its default.
type Options struct {
	// Now is the clock. Default: time.Now. Tests inject a fake one; the
	// Coordinator never sleeps or starts timers, it compares Now with the
	// deadlines whenever it is called.
	Now func() time.Time
	// SessionTimeout is how long a member may go without calling Sync (its
	// heartbeat) before it is evicted. Default: 45 s (Kafka's
	// session.timeout.ms).
	SessionTimeout time.Duration
	// RebalanceTimeout is how long a member may keep partitions it was
	// told to revoke before it is evicted: a consumer that heartbeats but
	// never finishes its revocation would otherwise hold them from their
	// new owner forever. Default: 5 min (Kafka's max.poll.interval.ms,
	// which the Java consumer sends as its rebalance.timeout.ms).
	RebalanceTimeout time.Duration
	// Assignor computes the target assignment at every rebalance. Default:
	// [Range] (the first entry of Kafka's partition.assignment.strategy).
	// [Sticky] moves the fewest partitions when members come and go.
	Assignor Assignor
	// Partitions returns the partition count of a topic, 0 if the topic
	// does not exist. Default: nil, meaning no topic exists for the
	// assignment (members are assigned nothing) and commits are not
	// range-checked. Sync calls it for every topic the group subscribes to,
	// with the group's lock held: it should be a quick lookup that neither
	// calls back into the Coordinator nor waits for a lock held by anyone
	// calling the Coordinator.
	Partitions func(topic string) int
	// TopicID returns the current id of a topic, zero if it has none or
	// does not exist. Default: nil, meaning topics have no ids. Commit
	// stamps it on each offset, and Committed and Offsets return only the
	// offsets of a topic's current id (see OffsetAndMetadata.TopicID). It
	// is called with a group's lock held, as Partitions is.
	TopicID func(topic string) [16]byte
	// MetadataMaxBytes is the longest metadata string a commit may carry,
	// in bytes. Default: 4096 (Kafka's offset.metadata.max.bytes). Values
	// above 32767, the most the record format holds, are lowered to it.
	MetadataMaxBytes int
	// ClientID and ClientHost are the client id and host that the group
	// metadata of a MetadataLog records for the members that Join adds
	// (JoinClient names its own). Default: none ("").
	ClientID, ClientHost string
}

// Defaults of the Options fields.
const (
	DefaultSessionTimeout   = 45 * time.Second
	DefaultRebalanceTimeout = 5 * time.Minute
	DefaultMetadataMaxBytes = 4096
)

// withDefaults returns a copy of o (nil for all defaults) with every
// default filled in.
func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	if out.SessionTimeout <= 0 {
		out.SessionTimeout = DefaultSessionTimeout
	}
	if out.RebalanceTimeout <= 0 {
		out.RebalanceTimeout = DefaultRebalanceTimeout
	}
	if out.Assignor == nil {
		out.Assignor = Range()
	}
	if out.MetadataMaxBytes <= 0 {
		out.MetadataMaxBytes = DefaultMetadataMaxBytes
	}
	out.MetadataMaxBytes = min(out.MetadataMaxBytes, maxStringLen)
	return out
}

// Coordinator is Kafka's group coordinator for the groups of one store:
// it keeps the committed offsets of every group, persisting each commit
// through an [OffsetLog] before it becomes visible, and it runs the groups'
// membership — joins, heartbeats, session timeouts, generations — and the
// incremental rebalance that moves partitions between members without ever
// letting two members of a group own one partition at the same time.
//
// Membership is recorded, not restored: a MetadataLog writes each
// rebalance's membership (GroupMetadata) for tools to read, but a
// Coordinator starts with no members, as a Kafka group does after its
// coordinator moves. Committed offsets are rebuilt with Replay, the
// recorded membership with ReplayMetadata.
//
// A Coordinator is safe for concurrent use. Each group has its own lock,
// so calls on different groups never wait for each other; a call that
// appends to the OffsetLog holds its group's lock until the append
// returns. It is deterministic: the same calls, in the same order, with
// the same clock readings and partition counts, give the same member ids,
// generations, assignments and errors.
type Coordinator struct {
	log  OffsetLog
	opts Options
	txn  txnState

	mu struct {
		sync.RWMutex
		groups map[string]*groupState
	}
}

// NewCoordinator returns a Coordinator that persists commits to log (nil
// keeps them in memory only) and is configured by opts (nil for the
// defaults). It copies opts.
func NewCoordinator(log OffsetLog, opts *Options) *Coordinator {
	c := &Coordinator{log: log, opts: opts.withDefaults()}
	c.mu.groups = map[string]*groupState{}
	return c
}

// groupState is one group: its offsets and its membership. Every field is
// guarded by mu. Its methods named ...Locked, and the Coordinator's named
// ...GroupLocked (which take the group as an argument), need mu held by
// their caller; the Coordinator's own mu (the map of groups) is never taken
// while a group's is held.
type groupState struct {
	mu   sync.Mutex
	name string

	offsets map[TopicPartition]OffsetAndMetadata
	// pending holds, per producer id, the offsets committed in its
	// transaction that has not ended yet.
	pending map[int64]map[TopicPartition]*txnOffset
	txnSeq  uint64 // the seq of the last pending offset added

	members    map[string]*member
	issued     int // members ever joined; member ids are name-1 … name-issued
	claims     int // claims not released (Claim)
	generation int // bumped at every rebalance
	// counts holds the partition count of every subscribed topic as of the
	// last rebalance; Sync rebalances when one changes.
	counts map[string]int
	// owner is the member that owns each owned partition: the single
	// source of truth for "never two owners".
	owner map[TopicPartition]*member
	// target is the member each partition should go to, per the
	// assignment computed at the last rebalance.
	target map[TopicPartition]*member
	// deadline is no later than the earliest time a member can be due for
	// eviction: until then, expiry has nothing to do. It may be earlier
	// (a member synced since), which costs a scan that evicts nothing.
	deadline time.Time
	// meta is the group's latest metadata (GroupMetadata): written at its
	// last rebalance, published for a claimed group, or replayed; nil if
	// none.
	meta *GroupMetadata
	// dead is set when the state left the coordinator's map (a claim's
	// release forgot it): whoever locked it looks the group up again.
	dead bool
}

// member is one member of a group.
type member struct {
	id     string
	topics []string // sorted, without duplicates
	// generation is the generation last given to the member, by Join or
	// Sync; its commits must carry it.
	generation int
	lastSeen   time.Time // last Join or Sync
	owned      map[TopicPartition]struct{}
	assigned   []TopicPartition // target assignment, sorted
	// revokeSince is when the member first owned a partition outside its
	// target since it last owned none; zero if it owns none.
	revokeSince time.Time
	// clientID and clientHost name the member's client in the group's
	// metadata (JoinClient).
	clientID, clientHost string
}

// lookup returns the state of group, creating it if create is set; it
// returns nil for an unknown group when create is not set.
func (c *Coordinator) lookup(group string, create bool) *groupState {
	c.mu.RLock()
	g := c.mu.groups[group]
	c.mu.RUnlock()
	if g != nil || !create {
		return g
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if g = c.mu.groups[group]; g == nil {
		g = &groupState{
			name:    group,
			offsets: map[TopicPartition]OffsetAndMetadata{},
			members: map[string]*member{},
			counts:  map[string]int{},
			owner:   map[TopicPartition]*member{},
			target:  map[TopicPartition]*member{},
		}
		c.mu.groups[group] = g
	}
	return g
}

// lockGroup looks group up (creating it if create is set), locks it and
// evicts its expired members. It returns nil, with nothing locked, for an
// unknown group when create is not set.
func (c *Coordinator) lockGroup(group string, create bool) *groupState {
	g := c.lockState(group, create)
	if g != nil {
		c.expireGroupLocked(g)
	}
	return g
}

// lockState is lockGroup without the expiry: the state of group, locked,
// that is in the coordinator's map (a dead one is looked up again).
func (c *Coordinator) lockState(group string, create bool) *groupState {
	for {
		g := c.lookup(group, create)
		if g == nil {
			return nil
		}
		g.mu.Lock()
		if !g.dead {
			return g
		}
		g.mu.Unlock()
		runtime.Gosched() // its forget deletes it from the map next
	}
}

// forget takes g, which its caller marked dead, out of the map.
func (c *Coordinator) forget(g *groupState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.groups[g.name] == g {
		delete(c.mu.groups, g.name)
	}
}

// all returns every group, sorted by name.
func (c *Coordinator) all() []*groupState {
	c.mu.RLock()
	out := make([]*groupState, 0, len(c.mu.groups))
	for _, g := range c.mu.groups {
		out = append(out, g)
	}
	c.mu.RUnlock()
	slices.SortFunc(out, func(a, b *groupState) int { return strings.Compare(a.name, b.name) })
	return out
}

// Groups returns the groups that have members, committed offsets,
// metadata (Metadata) or a claim (Claim), sorted by name.
func (c *Coordinator) Groups() []string {
	var out []string
	for _, g := range c.all() {
		g.mu.Lock()
		c.expireGroupLocked(g)
		if len(g.members) > 0 || len(g.offsets) > 0 || g.claims > 0 || g.meta != nil {
			out = append(out, g.name)
		}
		g.mu.Unlock()
	}
	return out
}

// Expire evicts, in every group, the members whose session has timed out
// (no Sync for longer than SessionTimeout) or that have held a partition
// they were told to revoke for longer than RebalanceTimeout. Their
// partitions are freed at once, each affected group rebalances, and their
// later calls fail with [ErrFenced].
//
// Every other method does the same for the groups it touches before doing
// anything else, so calling Expire is never needed for correctness; it
// only lets a store free the partitions of dead members of groups nobody
// calls into.
func (c *Coordinator) Expire() {
	for _, g := range c.all() {
		g.mu.Lock()
		c.expireGroupLocked(g)
		g.mu.Unlock()
	}
}

// expireGroupLocked evicts g's expired members and rebalances once if any
// was. The caller holds g.mu.
func (c *Coordinator) expireGroupLocked(g *groupState) {
	if len(g.members) == 0 {
		return
	}
	now := c.opts.Now()
	if !now.After(g.deadline) {
		return
	}
	g.deadline = time.Time{}
	evicted := false
	for _, m := range g.members {
		session := m.lastSeen.Add(c.opts.SessionTimeout)
		revoke := m.revokeSince.Add(c.opts.RebalanceTimeout)
		if now.After(session) || (!m.revokeSince.IsZero() && now.After(revoke)) {
			g.removeLocked(m)
			evicted = true
			continue
		}
		g.noteDeadline(session)
		if !m.revokeSince.IsZero() {
			g.noteDeadline(revoke)
		}
	}
	if evicted {
		c.rebalanceGroupLocked(g)
	}
}

// noteDeadline lowers g.deadline to t if t is earlier.
func (g *groupState) noteDeadline(t time.Time) {
	if g.deadline.IsZero() || t.Before(g.deadline) {
		g.deadline = t
	}
}

// removeLocked takes m out of g and frees its partitions. The caller
// rebalances.
func (g *groupState) removeLocked(m *member) {
	for tp := range m.owned {
		delete(g.owner, tp)
	}
	clear(m.owned)
	delete(g.members, m.id)
}

// memberLocked returns the live member id of g: [ErrFenced] if the id
// was issued by g but the member is gone, [ErrUnknownMember] if it never
// was. The error names the call (verb), the member and the group once:
// `group: commit by member "g-1" of group "g", which left or was evicted`.
func (g *groupState) memberLocked(verb, id string) (*member, error) {
	if m := g.members[id]; m != nil {
		return m, nil
	}
	if g.issuedID(id) {
		return nil, fmt.Errorf("group: %s by member %q of group %q, which left or was evicted: %w", verb, id, g.name, ErrFenced)
	}
	return nil, fmt.Errorf("group: %s by member %q of group %q: %w", verb, id, g.name, ErrUnknownMember)
}

// memberID returns the id of the n-th member to join g: "<group>-<n>".
func (g *groupState) memberID(n int) string { return g.name + "-" + strconv.Itoa(n) }

// issuedID reports whether id is one g has handed out.
func (g *groupState) issuedID(id string) bool {
	rest, ok := strings.CutPrefix(id, g.name+"-")
	if !ok {
		return false
	}
	n, err := strconv.Atoi(rest)
	return err == nil && n >= 1 && n <= g.issued && g.memberID(n) == id
}

// ValidateGroupID checks a group id: 1 to 32767 bytes (the record format
// stores it with an int16 length), else ErrInvalidGroup.
func ValidateGroupID(group string) error {
	if group == "" || len(group) > maxStringLen {
		return fmt.Errorf("group: group id of %d bytes, want 1 to %d: %w", len(group), maxStringLen, ErrInvalidGroup)
	}
	return nil
}

// checkGroup validates a group id.
func checkGroup(group string) error { return ValidateGroupID(group) }

// checkPartition reports whether tp can be stored (the record format
// holds an int16-length topic and an int32 partition) and, if exists is
// set and Options.Partitions was given, whether it exists.
func (c *Coordinator) checkPartition(tp TopicPartition, exists bool) error {
	if len(tp.Topic) > maxStringLen || tp.Partition < 0 || tp.Partition > math.MaxInt32 {
		return fmt.Errorf("group: partition %d of a topic name of %d bytes: %w", tp.Partition, len(tp.Topic), ErrUnknownPartition)
	}
	if exists && c.opts.Partitions != nil {
		if n := c.opts.Partitions(tp.Topic); tp.Partition >= n {
			return fmt.Errorf("group: partition %s (the topic has %d): %w", tp, n, ErrUnknownPartition)
		}
	}
	return nil
}

// partitions returns the partition count of topic, 0 if unknown.
func (c *Coordinator) partitions(topic string) int {
	if c.opts.Partitions == nil {
		return 0
	}
	return max(c.opts.Partitions(topic), 0)
}
