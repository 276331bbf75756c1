// Command deadletter shows a consumer that retries a failing record with
// backoff and, when the retries run out, moves it to a dead-letter topic
// with Consumer.DeadLetter, then goes on with the records after it. The
// dead letter carries Kafka Connect's __connect.errors.* headers: where the
// record came from and why it failed.
//
// The handler charges payments through a gateway that sometimes times
// out: a payment whose charge times out twice then succeeds is retried
// through; one whose charge times out at every attempt is dead-lettered
// once the retries run out; one whose amount does not parse, which no
// retry can fix, is dead-lettered at once. The backoff is a few
// milliseconds here, so the program ends at once.
//
//	go run ./examples/deadletter
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/stratalog/strata"
)

const (
	paymentsTopic = "payments"
	deadLetters   = "payments.dlq"
	maxAttempts   = 4
	firstBackoff  = time.Millisecond
)

// errTimeout is the gateway's transient failure.
var errTimeout = errors.New("gateway timeout")

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "deadletter:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "strata-deadletter-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, err := strata.Open(dir, &strata.Options{Sync: strata.SyncNever})
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.CreateTopic(paymentsTopic, strata.TopicConfig{}); err != nil {
		return err
	}
	payments := []string{"alice:10.00", "bob:25.50", "carol:7.25", "dave:40.00", "erin:12,OO", "frank:3.10"}
	for _, p := range payments {
		if _, err := s.Append(ctx, paymentsTopic, strata.Record{Key: []byte(strings.SplitN(p, ":", 2)[0]), Value: []byte(p)}); err != nil {
			return err
		}
	}

	c, err := s.Consumer("charger", []string{paymentsTopic}, strata.ConsumerOptions{AutoOffsetReset: strata.ResetEarliest})
	if err != nil {
		return err
	}
	gw := &gateway{flaky: map[string]int{"carol": 2, "dave": maxAttempts}}
	for m, err := range c.Messages(ctx) {
		if err != nil {
			return err
		}
		if err := retry(ctx, func() error { return gw.charge(string(m.Value)) }); err != nil {
			fmt.Printf("offset %d %s: giving up: %v\n", m.Offset, m.Value, err)
			if err := c.DeadLetter(ctx, deadLetters, m, err); err != nil {
				return err
			}
		} else if err := c.CommitMessages(ctx, m); err != nil {
			return err
		}
		if m.Offset == int64(len(payments))-1 {
			break
		}
	}
	if err := c.Close(); err != nil {
		return err
	}

	dead, err := s.Read(ctx, deadLetters, 0, 0, 10)
	if err != nil {
		return err
	}
	om, _ := s.Committed("charger", paymentsTopic, 0)
	fmt.Printf("charged %d, dead-lettered %d; committed offset %d of %d\n", gw.charged, len(dead), om.Offset, len(payments))
	fmt.Printf("%s holds %d record(s):\n", deadLetters, len(dead))
	for _, r := range dead {
		fmt.Printf("  %s\n", r.Value)
		for _, h := range r.Headers {
			if h.Key == strata.HeaderErrorTime {
				continue // the time of the run
			}
			fmt.Printf("    %s: %s\n", h.Key, h.Value)
		}
	}
	return nil
}

// retry calls f up to maxAttempts times, doubling the wait between
// attempts, and returns its last error. An error that no retry can fix (a
// bad amount) is returned at once.
func retry(ctx context.Context, f func() error) error {
	backoff := firstBackoff
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		if err = f(); err == nil || !errors.Is(err, errTimeout) || attempt == maxAttempts {
			return err
		}
		fmt.Printf("  attempt %d: %v, retrying in %v\n", attempt, err, backoff)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return ctx.Err()
		}
		backoff *= 2
	}
	return err
}

// gateway charges payments "name:amount"; a flaky name times out that many
// times first.
type gateway struct {
	flaky   map[string]int
	charged int
}

func (g *gateway) charge(payment string) error {
	name, amount, _ := strings.Cut(payment, ":")
	if g.flaky[name] > 0 {
		g.flaky[name]--
		return errTimeout
	}
	if _, err := strconv.ParseFloat(amount, 64); err != nil {
		return fmt.Errorf("amount %q: %w", amount, err)
	}
	g.charged++
	fmt.Printf("charged %s %s\n", name, amount)
	return nil
}
