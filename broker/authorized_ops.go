package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// omittedOps is the authorized operations of a response whose request did
// not ask for them (the schemas' default, Integer.MIN_VALUE).
const omittedOps int32 = -1 << 31

// The authorized operations Metadata, DescribeCluster and DescribeGroups
// give when asked (KIP-430): every operation Kafka supports on the
// resource type, as a Kafka broker without an authorizer answers
// (AuthHelper.authorizedOperations and AclEntry.supportedOperations): the
// broker has no ACLs, and every client, authenticated or not, may do
// everything. A group's are those before KIP-848's group configs, which
// are not served.
var (
	groupOps = opsField(kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete)
	topicOps = opsField(kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate,
		kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete, kmsg.ACLOperationAlter,
		kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs)
	clusterOps = opsField(kmsg.ACLOperationCreate, kmsg.ACLOperationClusterAction,
		kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs,
		kmsg.ACLOperationIdempotentWrite, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe)
)

// opsField is the bit field of ops: bit n set for the operation of code n
// (Kafka's Utils.to32BitField).
func opsField(ops ...kmsg.ACLOperation) int32 {
	var f int32
	for _, op := range ops {
		f |= 1 << op
	}
	return f
}
