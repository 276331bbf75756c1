package group

import (
	"fmt"
	"sync"
)

// Claim marks group as used by members the Coordinator does not manage:
// the Kafka clients of a classic group that a server (package broker)
// coordinates itself, with assignments made by the clients. Until the
// returned release is called, Join fails with [ErrGroupClaimed], and so
// do DeleteOffsets of every offset and [Coordinator.Claimed] reports the
// claim; commits, which the claimer checks against its own members, and
// deleting the offsets of some partitions are still served. Claims nest:
// the group is free once every claim is released. Calling release again
// does nothing. The last release of a group that never had members of the
// Coordinator, offsets or a transaction's pending offsets forgets it, so
// that claims of ever new names hold no memory once released.
//
// A group with members of the Coordinator cannot be claimed:
// [ErrGroupActive].
func (c *Coordinator) Claim(group string) (release func(), err error) {
	if err := checkGroup(group); err != nil {
		return nil, err
	}
	g := c.lockGroup(group, true)
	defer g.mu.Unlock()
	if len(g.members) > 0 {
		return nil, fmt.Errorf("group: claiming group %q, which has %d members: %w", group, len(g.members), ErrGroupActive)
	}
	g.claims++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.claims--
			g.dead = g.claims == 0 && g.unusedLocked()
			dead := g.dead
			g.mu.Unlock()
			if dead {
				c.forget(g)
			}
		})
	}, nil
}

// Claimed reports whether group is claimed (Claim).
func (c *Coordinator) Claimed(group string) bool {
	g := c.lockGroup(group, false)
	if g == nil {
		return false
	}
	defer g.mu.Unlock()
	return g.claims > 0
}

// unusedLocked reports whether g holds nothing: no members now or ever
// (whose ids a new state would hand out again), no offsets, none pending,
// no metadata.
func (g *groupState) unusedLocked() bool {
	return g.issued == 0 && len(g.members) == 0 && len(g.offsets) == 0 && len(g.pending) == 0 && g.meta == nil
}
