package strata_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/stratalog/strata"
)

// AppendIfEnd guards a read-modify-write: two withdrawals both read the
// account's balance up to the same end offset, and the second, appended
// after the first, is refused and told the end it missed, so it reads the
// new balance and decides again.
func ExampleStore_AppendIfEnd() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("account-7", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	if _, err := s.AppendTo(ctx, "account-7", 0, strata.Record{Value: []byte("100")}); err != nil {
		panic(err)
	}

	// balance adds up the partition's records from offset from and returns
	// the end offset it read to.
	balance := func(from int64, sum int) (int, int64) {
		recs, err := s.Read(ctx, "account-7", 0, from, 100)
		if err != nil {
			panic(err)
		}
		for _, r := range recs {
			n, _ := strconv.Atoi(string(r.Value))
			sum += n
		}
		return sum, from + int64(len(recs))
	}
	withdraw := func(amount, sum int, end int64) error {
		if sum < amount {
			return fmt.Errorf("balance %d is less than %d", sum, amount)
		}
		_, err := s.AppendIfEnd(ctx, "account-7", 0, end, strata.Record{Value: []byte(strconv.Itoa(-amount))})
		return err
	}

	a, endA := balance(0, 0)
	b, endB := balance(0, 0)
	fmt.Println("A reads", a, "to offset", endA, "and B reads", b, "to offset", endB)
	fmt.Println("A withdraws 70:", withdraw(70, a, endA))
	err := withdraw(70, b, endB)
	var wrong *strata.WrongOffsetError
	if errors.As(err, &wrong) {
		fmt.Println("B is refused: the end is now", wrong.Actual)
		b, endB = balance(endB, b)
		fmt.Println("B withdraws 70:", withdraw(70, b, endB))
	}
	// Output:
	// A reads 100 to offset 1 and B reads 100 to offset 1
	// A withdraws 70: <nil>
	// B is refused: the end is now 2
	// B withdraws 70: balance 30 is less than 70
}

// Error names the end offset found and the one expected; the store's
// error adds the partition.
func ExampleWrongOffsetError_Error() {
	err := &strata.WrongOffsetError{Expected: 5, Actual: 8}
	fmt.Println(err)
	// Output:
	// partition: end offset is 8, not the expected 5
}

// Unwrap makes a *WrongOffsetError match ErrWrongOffset.
func ExampleWrongOffsetError_Unwrap() {
	var err error = &strata.WrongOffsetError{Expected: 5, Actual: 8}
	fmt.Println(errors.Is(err, strata.ErrWrongOffset))
	// Output:
	// true
}

// AppendIfLast keeps an aggregate's events, the records of one key,
// consistent: each writer appends at the offset of the last event it
// loaded, and one that loaded too early is refused, whatever other keys
// were appended meanwhile.
func ExampleStore_AppendIfLast() {
	s, done := exampleStore(nil)
	defer done()
	ctx := context.Background()
	if err := s.CreateTopic("carts", strata.TopicConfig{Partitions: 2}); err != nil {
		panic(err)
	}
	cart := []byte("cart-42")
	event := func(v string) strata.Record { return strata.Record{Key: cart, Value: []byte(v)} }

	// A new aggregate: no event with the key yet.
	created, err := s.AppendIfLast(ctx, "carts", cart, strata.NoOffset, event("created"))
	fmt.Println("created at", created, err)
	_, err = s.AppendIfLast(ctx, "carts", cart, strata.NoOffset, event("created"))
	fmt.Println("created twice:", errors.Is(err, strata.ErrWrongOffset))

	// Two writers loaded the cart when its last event was "created".
	added, err := s.AppendIfLast(ctx, "carts", cart, created, event("added book"), event("added pen"))
	fmt.Println("added at", added, err)
	_, err = s.AppendIfLast(ctx, "carts", cart, created, event("checked out"))
	var wrong *strata.WrongOffsetError
	if errors.As(err, &wrong) {
		fmt.Printf("refused: the last event of %s is at %d\n", wrong.Key, wrong.Actual)
	}
	// Output:
	// created at 0 <nil>
	// created twice: true
	// added at 1 <nil>
	// refused: the last event of cart-42 is at 2
}
