package strata

// NewProducerID is newProducerID, for the tests of producer id allocation.
func NewProducerID(s *Store) (int64, error) { return s.newProducerID() }

// ProducerIDBlock is how many ids one write of the producer id file reserves.
const ProducerIDBlock = producerIDBlock

// ProducerIDsFile is the name of the producer id file in the store's directory.
const ProducerIDsFile = producerIDsFile
