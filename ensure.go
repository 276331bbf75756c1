package strata

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/stratalog/strata/partition"
	"github.com/stratalog/strata/topic"
)

// EnsureTopic creates a topic with cfg, as CreateTopic does, unless a
// topic of that name exists; it is what a service calls at every start.
//
// An existing topic is compared with cfg, both with their defaults filled
// in. A different partition count or cleanup policy is
// ErrTopicConfigMismatch, with each difference (wanted and actual) in the
// message: either changes where keyed records go or which records the
// topic keeps, so the service would not get the topic it was written for.
// Every other difference (retention, segment size, compression, ...) keeps
// the existing topic's config, is logged at Warn level through
// Options.Logger with what was wanted and what the topic has, and returns
// nil; DescribeTopic gives the config in effect. An existing topic's
// config is never changed.
//
// Bad input fails as CreateTopic's does (ErrInvalidTopic, ErrReservedTopic,
// ErrInvalidConfig, checked whether or not the topic exists); after Close,
// ErrClosed.
func (s *Store) EnsureTopic(name string, cfg TopicConfig) (err error) {
	if err := s.checkWritable("ensure topic"); err != nil {
		return err
	}
	defer wrapErr(&err)
	if err := s.checkUserTopic("", name); err != nil {
		return err
	}
	// The checks createTopic makes first, in its order, then the topic if
	// it is open: a service's every start finds it, and pays for no error
	// built and dropped and no field-by-field comparison.
	if err := topic.ValidateName(name); err != nil {
		return err
	}
	want, err := cfg.WithDefaults()
	if err != nil {
		return err
	}
	t, ok := (*s.topics.Load())[name]
	if !ok {
		err = s.createTopic(name, cfg)
		if !errors.Is(err, ErrTopicExists) {
			return err
		}
		var terr error
		if t, terr = s.topic(name); terr != nil {
			// Not open: directories of a topic the registry lost (the
			// refusal says what to do), or deleted meanwhile.
			return err
		}
	}
	have := t.Config()
	if want == have {
		return nil
	}
	fatal, other := configDiff(want, have)
	if len(fatal) > 0 {
		return fmt.Errorf("strata: topic %q exists with %s: %w", name, strings.Join(fatal, ", "), ErrTopicConfigMismatch)
	}
	if len(other) > 0 {
		s.opts.Logger.Warn("strata: topic exists with a config that differs from the one wanted; it keeps its own",
			"topic", name, "differences", strings.Join(other, ", "))
	}
	return nil
}

// configDiff lists the fields in which have, a topic's config, differs
// from want, each as "Field actual (wanted w)": fatal those EnsureTopic
// refuses (Partitions, CleanupPolicy), other the rest.
func configDiff(want, have TopicConfig) (fatal, other []string) {
	w, h := reflect.ValueOf(want), reflect.ValueOf(have)
	for i := range w.NumField() {
		wf, hf := w.Field(i).Interface(), h.Field(i).Interface()
		if reflect.DeepEqual(wf, hf) {
			continue
		}
		name := w.Type().Field(i).Name
		d := fmt.Sprintf("%s %s (wanted %s)", name, configValue(hf), configValue(wf))
		if name == "Partitions" || name == "CleanupPolicy" {
			fatal = append(fatal, d)
		} else {
			other = append(other, d)
		}
	}
	return fatal, other
}

// configValue formats the value of a TopicConfig field.
func configValue(v any) string {
	if sp, ok := v.(SyncPolicy); ok {
		switch {
		case sp == SyncPolicy{}:
			return "the store's sync policy"
		case sp.Mode == partition.SyncModeEvery:
			return fmt.Sprintf("SyncEvery(%v)", sp.Interval)
		case sp == SyncAlways:
			return "SyncAlways"
		case sp == SyncNever:
			return "SyncNever"
		}
	}
	return fmt.Sprint(v)
}
