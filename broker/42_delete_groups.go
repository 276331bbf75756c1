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
	gs := &srv.groups
	gs.mu.Lock()
	defer gs.mu.Unlock()
	for _, name := range req.Groups {
		sg := kmsg.NewDeleteGroupsResponseGroup()
		sg.Group = name
		g := gs.groupLocked(name)
		switch {
		case name == "":
			sg.ErrorCode = errInvalidGroupID
		case g != nil && (len(g.members) > 0 || len(g.pending) > 0):
			sg.ErrorCode = errNonEmptyGroup
		case g == nil && !slices.Contains(known, name):
			sg.ErrorCode = errGroupIDNotFound
		default:
			err := srv.store.DeleteGroupOffsets(name)
			switch {
			case errors.Is(err, strata.ErrGroupActive), errors.Is(err, strata.ErrGroupClaimed):
				sg.ErrorCode = errNonEmptyGroup
			case err != nil:
				sg.ErrorCode = groupCodeOf(err)
			default:
				if g != nil {
					g.state = groupDead
					delete(gs.mu.m, name)
				}
			}
		}
		resp.Groups = append(resp.Groups, sg)
	}
	return resp, nil
}
