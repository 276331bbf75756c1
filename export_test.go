package strata

// EncodedAhead returns how many batches Produce calls waiting for room
// have encoded for the sender.
func (p *Producer) EncodedAhead() int64 { return p.encodedAhead.Load() }

// StoreErr is storeErr, for the test of the message rewriting.
func StoreErr(err error) error { return storeErr(err) }
