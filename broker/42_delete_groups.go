package broker

import (
	"errors"
	"slices"

	"github.com/stratalog/strata"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleDeleteGroups deletes groups and their committed offsets
// (Store.DeleteGroupOffsets), as Kafka's GroupCoordinator.handleDeleteGroups
// does: only a group without members, NON_EMPTY_GROUP otherwise (wire
// members, or consumers in the process); GROUP_ID_NOT_FOUND for a group
// with neither members nor offsets.
func handleDeleteGroups(srv *Server, _ header, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	known := srv.store.Groups()
	for _, name := range req.Groups {
		sg := kmsg.NewDeleteGroupsResponseGroup()
		sg.Group, sg.ErrorCode = name, srv.deleteGroup(name, slices.Contains(known, name))
		resp.Groups = append(resp.Groups, sg)
	}
	return resp, nil
}

// deleteGroup deletes the group named name, which the store knows if
// known, and returns the error code. The offsets are deleted without
// groups.mu held, so that the other groups' requests and timers do not
// wait for the store's write: a JoinGroup that claims the group meanwhile
// makes the store refuse the deletion (ErrGroupClaimed).
func (srv *Server) deleteGroup(name string, known bool) int16 {
	if name == "" {
		return errInvalidGroupID
	}
	gs := &srv.groups
	gs.mu.Lock()
	g := gs.groupLocked(name)
	busy := g != nil && (len(g.members) > 0 || len(g.pending) > 0)
	gs.mu.Unlock()
	switch {
	case busy:
		return errNonEmptyGroup
	case g == nil && !known:
		return errGroupIDNotFound
	}
	err := srv.store.DeleteGroupOffsets(name)
	switch {
	case errors.Is(err, strata.ErrGroupActive), errors.Is(err, strata.ErrGroupClaimed):
		return errNonEmptyGroup
	case err != nil:
		return groupCodeOf(err)
	}
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if g := gs.groupLocked(name); g != nil && len(g.members) == 0 && len(g.pending) == 0 {
		g.state = groupDead
		delete(gs.mu.m, name)
	}
	return errNone
}
