package mirror

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/topic"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// errTopicMismatch means a target topic exists with fewer partitions than
// its source and could not be given more, or a rename gives a name that
// cannot be a target topic.
var errTopicMismatch = errors.New("mirror: target topic does not fit its source")

// unknownTopicError is a topic named in the options that the source (the
// store, or for Pull the cluster) does not have; it matches
// strata.ErrUnknownTopic.
type unknownTopicError string

func (e unknownTopicError) Error() string {
	return fmt.Sprintf("mirror: the source has no topic %q", string(e))
}

func (e unknownTopicError) Unwrap() error { return strata.ErrUnknownTopic }

// selected returns the source topics to mirror, sorted. A name in
// Options.Topics that the store does not have is strata.ErrUnknownTopic.
func (m *Mirror) selected() ([]string, error) {
	have := m.src.Topics()
	var out []string
	for _, name := range m.opts.Topics {
		if !slices.Contains(have, name) {
			return nil, unknownTopicError(name)
		}
		out = append(out, name)
	}
	if re := m.opts.TopicPattern; re != nil {
		for _, name := range have {
			if topic.IsInternal(name) || len(name) >= 2 && name[:2] == "__" {
				continue
			}
			if loc := re.FindStringIndex(name); loc != nil && loc[0] == 0 && loc[1] == len(name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func (m *Mirror) targetName(src string) (string, error) {
	tgt := src
	if m.opts.Rename != nil {
		tgt = m.opts.Rename(src)
	}
	if err := topic.ValidateName(tgt); err != nil {
		return "", fmt.Errorf("%w: topic %q renamed to %q: %w", errTopicMismatch, src, tgt, err)
	}
	if tgt == m.opts.SyncsTopic {
		return "", fmt.Errorf("%w: topic %q renamed to the syncs topic %q", errTopicMismatch, src, tgt)
	}
	return tgt, nil
}

// ensureSyncsTopic creates the offset-syncs topic if the target has none.
func (m *Mirror) ensureSyncsTopic(ctx context.Context) error {
	configs := map[string]*string{
		"cleanup.policy":  kadm.StringPtr("delete"),
		"retention.ms":    kadm.StringPtr("-1"),
		"retention.bytes": kadm.StringPtr("-1"),
	}
	_, err := m.createTopic(ctx, 1, configs, m.opts.SyncsTopic)
	return err
}

func (m *Mirror) refreshTopics(ctx context.Context) error {
	return m.refreshTopicsWith(ctx, nil)
}

// refreshTopicsWith picks up the selected source topics and partitions the
// Mirror does not have yet: it creates each target topic with the source's
// partition count and configs (by Kafka's names), or adds partitions to
// one that has fewer, and starts the new partitions from the progress in
// loaded (nil: read the syncs topic when a new partition needs it).
func (m *Mirror) refreshTopicsWith(ctx context.Context, loaded map[string]syncList) error {
	names, err := m.selected()
	if err != nil {
		return err
	}
	for _, name := range names {
		desc, err := m.src.DescribeTopic(name)
		if errors.Is(err, strata.ErrUnknownTopic) {
			continue // deleted since Topics
		}
		if err != nil {
			return err
		}
		m.mu.Lock()
		have := len(m.mu.byName[name])
		m.mu.Unlock()
		if have >= len(desc.Partitions) {
			continue
		}
		tgt, err := m.targetName(name)
		if err != nil {
			return err
		}
		if err := m.ensureTarget(ctx, tgt, desc); err != nil {
			return err
		}
		if loaded == nil {
			if loaded, err = m.loadSyncs(ctx); err != nil {
				return err
			}
		}
		ends, err := m.adm.ListEndOffsets(ctx, tgt)
		if err != nil {
			return fmt.Errorf("mirror: list offsets of %q: %w", tgt, err)
		}
		m.mu.Lock()
		for i := have; i < len(desc.Partitions); i++ {
			p := &part{src: name, tgt: tgt, partition: int32(i)}
			m.resetLocked(p, loaded)
			if len(p.syncs) == 0 {
				if o, ok := ends.Lookup(tgt, int32(i)); ok && o.Err == nil {
					p.tgtEnd = o.Offset
				}
			}
			m.mu.byName[name] = append(m.mu.byName[name], p)
			m.mu.parts = append(m.mu.parts, p)
		}
		slices.SortFunc(m.mu.parts, func(a, b *part) int {
			if a.src != b.src {
				if a.src < b.src {
					return -1
				}
				return 1
			}
			return int(a.partition - b.partition)
		})
		m.mu.Unlock()
		m.opts.Logger.Info("mirror: topic", "source", name, "target", tgt, "partitions", len(desc.Partitions))
	}
	return nil
}

// ensureTarget creates tgt for the source topic desc, or gives an existing
// one the partitions it lacks. A topic whose records carry LogAppendTime at
// the source is created with CreateTime, so that the copies keep the
// source's timestamps rather than get the target's.
func (m *Mirror) ensureTarget(ctx context.Context, tgt string, desc strata.TopicDescription) error {
	configs := make(map[string]*string)
	for k, v := range topic.KafkaConfigs(desc.Config) {
		configs[k] = kadm.StringPtr(v)
	}
	if v := configs["message.timestamp.type"]; v != nil && *v == "LogAppendTime" {
		configs["message.timestamp.type"] = kadm.StringPtr("CreateTime")
	}
	n := len(desc.Partitions)
	created, err := m.createTopic(ctx, n, configs, tgt)
	if err != nil || created {
		return err
	}
	td, err := m.adm.ListTopics(ctx, tgt)
	if err != nil {
		return fmt.Errorf("mirror: describe %q: %w", tgt, err)
	}
	d, ok := td[tgt]
	if !ok || d.Err != nil {
		return fmt.Errorf("mirror: describe %q: %v", tgt, d.Err)
	}
	if len(d.Partitions) >= n {
		return nil
	}
	cr, err := m.adm.UpdatePartitions(ctx, n, tgt)
	if err == nil {
		err = cr.Error()
	}
	if err != nil {
		return fmt.Errorf("%w: %q has %d partitions, the source %d, and adding failed: %w", errTopicMismatch, tgt, len(d.Partitions), n, err)
	}
	return nil
}

// createTopic creates a target topic and says whether it did; one that
// exists is no error.
func (m *Mirror) createTopic(ctx context.Context, partitions int, configs map[string]*string, name string) (bool, error) {
	resp, err := m.adm.CreateTopic(ctx, int32(partitions), m.opts.ReplicationFactor, configs, name)
	if err == nil {
		err = resp.Err
	}
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, kerr.TopicAlreadyExists):
		return false, nil
	}
	return false, fmt.Errorf("mirror: create %q: %w", name, err)
}
