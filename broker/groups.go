package broker

import "sync"

// Kafka's error codes of the group APIs (Kafka's Errors.java).
const (
	errCoordinatorNotAvailable   int16 = 15
	errIllegalGeneration         int16 = 22
	errInconsistentGroupProtocol int16 = 23
	errInvalidGroupID            int16 = 24
	errUnknownMemberID           int16 = 25
	errInvalidSessionTimeout     int16 = 26
	errRebalanceInProgress       int16 = 27
	errNonEmptyGroup             int16 = 68
	errGroupIDNotFound           int16 = 69
	errMemberIDRequired          int16 = 79
	errFencedInstanceID          int16 = 82
	errGroupSubscribedToTopic    int16 = 86
)

// groupState is the state of a classic group, Kafka's GroupState
// (kafka/coordinator/group/GroupMetadata.scala).
type groupState int8

const (
	// groupEmpty: no members; the group may have committed offsets.
	groupEmpty groupState = iota
	// groupPreparingRebalance: members are (re)joining; JoinGroup
	// responses wait until every known member has joined or the
	// rebalance timeout has passed.
	groupPreparingRebalance
	// groupCompletingRebalance: the generation is set and the members
	// know it; SyncGroup responses wait for the leader's assignment.
	groupCompletingRebalance
	// groupStable: every member has its assignment.
	groupStable
	// groupDead: the group was deleted.
	groupDead
)

// String returns Kafka's name of the state, as DescribeGroups and
// ListGroups give it.
func (s groupState) String() string {
	switch s {
	case groupEmpty:
		return "Empty"
	case groupPreparingRebalance:
		return "PreparingRebalance"
	case groupCompletingRebalance:
		return "CompletingRebalance"
	case groupStable:
		return "Stable"
	case groupDead:
		return "Dead"
	}
	return "Unknown"
}

// groups are the classic groups of wire clients. One mutex guards them
// all; no handler holds it while it waits for a rebalance.
type groups struct {
	mu struct {
		sync.Mutex
		m map[string]*wireGroup
	}
}

// wireGroup is one classic group of wire clients. Its fields are
// guarded by groups.mu.
type wireGroup struct {
	state      groupState
	generation int32
	members    map[string]*wireMember
	// static maps a group.instance.id (KIP-345) to its member's id.
	static map[string]string
}

// wireMember is a member of a wireGroup.
type wireMember struct{}

// groupLocked returns the group named name, nil if there is none.
func (gs *groups) groupLocked(name string) *wireGroup {
	return gs.mu.m[name]
}

// memberCode is the error code (errNone if none) of an offset commit by
// memberID at generation for group, as Kafka's ClassicGroup
// validateOffsetCommit gives it: a commit at a negative generation (a
// standalone commit: memberID "", generation -1) is accepted while the
// group has no wire members; otherwise the member must be a member (UNKNOWN_MEMBER_ID) of the
// current generation (ILLEGAL_GENERATION), and the group not between a
// JoinGroup and its SyncGroup (REBALANCE_IN_PROGRESS).
func (srv *Server) memberCode(group, memberID string, generation int32) int16 {
	return srv.memberCodeFor(group, memberID, "", generation)
}

// memberCodeFor is memberCode for a member that may be static: an
// instance id that belongs to another member is FENCED_INSTANCE_ID.
func (srv *Server) memberCodeFor(group, memberID, instanceID string, generation int32) int16 {
	gs := &srv.groups
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.groupLocked(group)
	if g == nil || len(g.members) == 0 {
		if generation < 0 {
			return errNone
		}
		return errUnknownMemberID
	}
	if memberID == "" && instanceID == "" && generation < 0 {
		return errUnknownMemberID
	}
	if code := g.checkMemberLocked(memberID, instanceID); code != errNone {
		return code
	}
	if generation != g.generation {
		return errIllegalGeneration
	}
	if g.state == groupCompletingRebalance {
		return errRebalanceInProgress
	}
	return errNone
}

// checkMemberLocked is Kafka's validateMember: the code for a request of
// memberID (with instanceID, if static) that is not g's member.
func (g *wireGroup) checkMemberLocked(memberID, instanceID string) int16 {
	if instanceID != "" {
		id, ok := g.static[instanceID]
		switch {
		case !ok:
			return errUnknownMemberID
		case id != memberID:
			return errFencedInstanceID
		}
	}
	if g.members[memberID] == nil {
		return errUnknownMemberID
	}
	return errNone
}
