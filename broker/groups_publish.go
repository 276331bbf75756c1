package broker

import (
	"errors"
	"time"

	"github.com/stratalog/strata"
)

// publishLocked records g's membership in the store (Store.PublishGroup),
// which writes it to __consumer_offsets as Kafka's coordinator does
// (GroupCoordinatorRecordHelpers.newGroupMetadataRecord): once the
// leader's assignment makes a generation Stable, and when the group has
// lost its last member, or the server closes. Membership is a
// description: a failure is logged (but a closed store's) and the group
// goes on.
//
// protocolType is the group's protocol type, which an Empty group has
// cleared but its record keeps, as Kafka's does.
func (g *wireGroup) publishLocked(protocolType string) {
	md := &strata.GroupMetadata{
		ProtocolType: protocolType,
		Generation:   g.generation,
		Protocol:     g.protocol,
		Leader:       g.leader,
		StateTime:    time.Now(),
	}
	for _, m := range g.sortedMembersLocked() {
		md.Members = append(md.Members, strata.GroupMemberMetadata{
			MemberID:         m.id,
			InstanceID:       m.instanceID,
			ClientID:         m.clientID,
			ClientHost:       m.clientHost,
			RebalanceTimeout: m.rebalance,
			SessionTimeout:   m.session,
			Subscription:     m.metadata(g.protocol),
			Assignment:       m.assignment,
		})
	}
	if err := g.srv.store.PublishGroup(g.name, md); err != nil && !errors.Is(err, strata.ErrClosed) {
		g.srv.logf("broker: recording the membership of group %q: %v", g.name, err)
	}
}
