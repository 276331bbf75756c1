package mirror

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// translateLocked returns the target offset for source offset x of p (see
// syncList.translate), and false when the mirror has not copied that far.
func (p *part) translateLocked(x int64) (int64, bool) {
	if x > p.next {
		if x <= p.scanned {
			// Between the last copied record and x the source holds
			// nothing a read_committed consumer reads.
			return p.tgtEnd, true
		}
		return 0, false
	}
	if t, ok := p.syncs.translate(x); ok {
		return t, true
	}
	// Nothing of p copied yet, and x is at or before the source's start.
	return p.tgtEnd, true
}

// GroupOffset is one translated group offset.
type GroupOffset struct {
	Group       string
	Topic       string // source topic
	TargetTopic string
	Partition   int
	Source      int64 // the group's committed offset at the source
	Target      int64 // the offset it translates to on the target
}

// TranslateGroup returns the target offsets of group's committed offsets
// on the mirrored partitions, as far as the mirror has copied: a committed
// offset beyond what is on the target is left out.
func (m *Mirror) TranslateGroup(group string) []GroupOffset {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []GroupOffset
	for _, p := range m.mu.parts {
		om, ok := m.src.Committed(group, p.src, int(p.partition))
		if !ok {
			continue
		}
		t, ok := p.translateLocked(om.Offset)
		if !ok {
			continue
		}
		out = append(out, GroupOffset{Group: group, Topic: p.src, TargetTopic: p.tgt,
			Partition: int(p.partition), Source: om.Offset, Target: t})
	}
	return out
}

// syncGroups commits the translated offsets of the selected source groups
// to the target groups of the same names that have no active members
// there, as MirrorMaker 2's MirrorCheckpointTask does with
// sync.group.offsets.enabled: only forward, never over an offset the
// target group has committed past.
func (m *Mirror) syncGroups(ctx context.Context) error {
	re := m.opts.Groups
	if re == nil {
		return nil
	}
	listings, err := m.src.ListGroups()
	if err != nil {
		return fmt.Errorf("mirror: list source groups: %w", err)
	}
	for _, l := range listings {
		if loc := re.FindStringIndex(l.Group); loc == nil || loc[0] != 0 || loc[1] != len(l.Group) {
			continue
		}
		if err := m.syncGroup(ctx, l.Group); err != nil {
			return err
		}
	}
	return nil
}

func (m *Mirror) syncGroup(ctx context.Context, group string) error {
	offs := make(kadm.Offsets)
	m.mu.Lock()
	for _, p := range m.mu.parts {
		om, ok := m.src.Committed(group, p.src, int(p.partition))
		if !ok {
			continue
		}
		if t, ok := p.translateLocked(om.Offset); ok {
			offs.Add(kadm.Offset{Topic: p.tgt, Partition: p.partition, At: t, LeaderEpoch: -1, Metadata: om.Metadata})
		}
	}
	m.mu.Unlock()
	if len(offs) == 0 {
		return nil
	}
	dg, err := m.adm.DescribeGroups(ctx, group)
	if err != nil {
		return fmt.Errorf("mirror: describe target group %q: %w", group, err)
	}
	if d, ok := dg[group]; ok {
		if d.Err != nil && !errors.Is(d.Err, kerr.GroupIDNotFound) {
			return fmt.Errorf("mirror: describe target group %q: %w", group, d.Err)
		}
		if len(d.Members) > 0 {
			m.mu.Lock()
			m.mu.stats.GroupsActive++
			m.mu.Unlock()
			m.opts.Logger.Info("mirror: target group has members; its offsets are left alone", "group", group, "members", len(d.Members))
			return nil
		}
	}
	cur, err := m.adm.FetchOffsets(ctx, group)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return fmt.Errorf("mirror: fetch target offsets of %q: %w", group, err)
	}
	offs.KeepFunc(func(o kadm.Offset) bool {
		c, ok := cur.Lookup(o.Topic, o.Partition)
		return !ok || c.Err != nil || c.At < o.At
	})
	if len(offs) == 0 {
		return nil
	}
	resp, err := m.adm.CommitOffsets(ctx, group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("mirror: commit target offsets of %q: %w", group, err)
	}
	n := 0
	offs.Each(func(kadm.Offset) { n++ })
	m.mu.Lock()
	m.mu.stats.GroupCommits += int64(n)
	m.mu.Unlock()
	return nil
}
