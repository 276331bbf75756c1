package strata

// NewProducerID is newProducerID, for the tests of producer id allocation.
func NewProducerID(s *Store) (int64, error) { return s.newProducerID() }

// ProducerIDBlock is how many ids one write of the producer id file reserves.
const ProducerIDBlock = producerIDBlock

// ProducerIDsFile is the name of the producer id file in the store's directory.
const ProducerIDsFile = producerIDsFile

// SetAfterAppend makes fn replace the error of each of p's append attempts
// (nil for a batch appended): an error for a batch that was appended is a
// lost answer. Set it before the first Produce.
func SetAfterAppend(p *Producer, fn func(error) error) { p.afterAppend = fn }

// SetProducerEpoch moves p to epoch (at least 1), its sequences at 0, as
// if failures had moved it there. Call it with nothing buffered.
func SetProducerEpoch(p *Producer, epoch int16) {
	p.mu.Lock()
	p.mu.epoch = epoch - 1
	p.mu.Unlock()
	p.newEpoch(nil)
}
