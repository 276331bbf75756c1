package strata

// EnsureOffsetsTopic creates the internal topic of committed offsets,
// ConsumerOffsetsTopic, if the store has none yet; otherwise the first
// commit creates it. Kafka creates its __consumer_offsets when a client
// first looks for a group's coordinator, and package broker calls this
// then (FindCoordinator), so that Kafka clients and tools see the topic
// when they expect to. It does nothing to a store that has the topic.
// After Close, ErrClosed.
func (s *Store) EnsureOffsetsTopic() (err error) {
	if err := s.checkWritable("create offsets topic"); err != nil {
		return err
	}
	defer wrapErr(&err)
	if s.closed.Load() {
		return ErrClosed
	}
	_, err = s.offsetsPartition()
	return err
}
