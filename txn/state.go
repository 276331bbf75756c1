package txn

import "fmt"

// State is the state of a transactional id, numbered as Kafka numbers
// them in the record's status field.
type State int8

// The states (Kafka's TransactionState).
const (
	Empty             State = 0 // no transaction open
	Ongoing           State = 1 // a transaction open, with the partitions it wrote to
	PrepareCommit     State = 2 // committing: decided, markers being written
	PrepareAbort      State = 3 // aborting: markers being written
	CompleteCommit    State = 4 // the last transaction committed, every marker written
	CompleteAbort     State = 5 // the last transaction aborted, every marker written
	Dead              State = 6 // expired: the id is forgotten
	PrepareEpochFence State = 7 // Kafka's, while it bumps the epoch of an ongoing transaction; Strata does not write it
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

// String returns Kafka's name of the state, as DescribeTransactions shows
// it.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int8(s))
}

// Valid reports whether s is one of the states.
func (s State) Valid() bool { return s >= Empty && s <= PrepareEpochFence }

// Open reports whether s is a transaction that has not ended: Ongoing or
// either Prepare state (PrepareEpochFence too).
func (s State) Open() bool {
	return s == Ongoing || s == PrepareCommit || s == PrepareAbort || s == PrepareEpochFence
}

// validPrevious lists, per state, the states it may follow (Kafka's
// TransactionState.validPreviousStates, with transaction version 2's
// abort from Empty and the Complete states).
var validPrevious = [...][]State{
	Empty:             {Empty, CompleteCommit, CompleteAbort},
	Ongoing:           {Ongoing, Empty, CompleteCommit, CompleteAbort},
	PrepareCommit:     {Ongoing},
	PrepareAbort:      {Ongoing, PrepareEpochFence, Empty, CompleteCommit, CompleteAbort},
	CompleteCommit:    {PrepareCommit},
	CompleteAbort:     {PrepareAbort},
	Dead:              {Empty, CompleteAbort, CompleteCommit},
	PrepareEpochFence: {Ongoing},
}

// CanFollow reports whether a transactional id in state prev may move to
// s.
func (s State) CanFollow(prev State) bool {
	if !s.Valid() || !prev.Valid() {
		return false
	}
	for _, p := range validPrevious[s] {
		if p == prev {
			return true
		}
	}
	return false
}
