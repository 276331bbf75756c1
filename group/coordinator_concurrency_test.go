package group

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fetchers records which consumer is fetching each partition, as real
// consumers would, and fails if two fetch one partition at once.
type fetchers struct {
	mu sync.Mutex
	by map[string]string // group/topic-partition → member id
}

// start marks id as fetching p of group.
func (f *fetchers) start(group, id string, p TopicPartition) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := group + "/" + p.String()
	if other, ok := f.by[key]; ok {
		return fmt.Errorf("%s handed to %s while %s still fetches it", key, id, other)
	}
	f.by[key] = id
	return nil
}

// stop marks id as no longer fetching p of group.
func (f *fetchers) stop(group string, p TopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.by, group+"/"+p.String())
}

// TestConcurrentConsumers runs consumers on many goroutines, joining,
// syncing, committing, revoking and leaving at once, with readers and
// Expire running beside them, and checks that no partition is ever
// fetched by two consumers of a group.
func TestConcurrentConsumers(t *testing.T) {
	const workers, steps = 16, 200
	f := newFixture(map[string]int{"t0": 8, "t1": 5}, Sticky())
	fetching := &fetchers{by: map[string]string{}}
	groups := []string{"g", "h"}

	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			errs <- runConsumer(f, fetching, groups[w%2], rand.New(rand.NewPCG(uint64(w), 7)), steps)
		})
	}
	done := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		// The clock moves, but never near the session timeout: every
		// consumer here stays a member, so none is a zombie.
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			for _, g := range groups {
				f.Members(g)
				f.Offsets(g)
				f.Generation(g)
			}
			f.Groups()
			f.Expire()
			if i < 1000 {
				f.clock.Advance(time.Millisecond)
			}
		}
	})
	wg.Wait()
	close(done)
	readers.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, g := range groups {
		f.settle(t, g)
		requireOwnersDisjoint(t, f.Coordinator, g)
		requireConverged(t, f, g)
	}
}

// runConsumer is one consumer's loop: it follows the protocol for steps
// rounds, sometimes leaving and joining again, and leaves at the end
// about half the time.
func runConsumer(f *fixture, fetching *fetchers, group string, rng *rand.Rand, steps int) error {
	subs := [][]string{{"t0"}, {"t1"}, {"t0", "t1"}}
	ref, err := f.Join(group, subs[rng.IntN(len(subs))])
	if err != nil {
		return err
	}
	owned := map[TopicPartition]struct{}{}
	leave := func() error {
		for p := range owned {
			fetching.stop(group, p)
		}
		clear(owned)
		return f.Leave(group, ref.MemberID)
	}
	for i := range steps {
		res, err := f.Sync(group, ref.MemberID)
		if err != nil {
			return err
		}
		ref.Generation = res.Generation
		for _, p := range res.Assign {
			if err := fetching.start(group, ref.MemberID, p); err != nil {
				return err
			}
			owned[p] = struct{}{}
		}
		if err := commitAll(f.Coordinator, group, ref, slices.Collect(maps.Keys(owned)), int64(i)); err != nil {
			return err
		}
		if len(res.Revoke) > 0 {
			for _, p := range res.Revoke {
				fetching.stop(group, p)
				delete(owned, p)
			}
			if err := f.Revoked(group, ref.MemberID, res.Revoke); err != nil {
				return err
			}
		}
		if rng.IntN(20) == 0 {
			if err := leave(); err != nil {
				return err
			}
			if ref, err = f.Join(group, subs[rng.IntN(len(subs))]); err != nil {
				return err
			}
		}
	}
	if rng.IntN(2) == 0 {
		return leave()
	}
	return nil
}
