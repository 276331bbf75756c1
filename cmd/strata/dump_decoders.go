package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/stratalog/strata/group"
	"github.com/stratalog/strata/log"
	"github.com/stratalog/strata/topic"
	"github.com/stratalog/strata/txn"
)

// jsonText is v as compact JSON.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The JSON of --offsets-decoder, in the order of Kafka's
// OffsetCommitKeyJsonConverter and OffsetCommitValueJsonConverter.
type (
	keyJSON struct {
		Type string `json:"type"`
		Data any    `json:"data"`
	}
	valueJSON struct {
		Version string `json:"version"`
		Data    any    `json:"data"`
	}
	commitKeyJSON struct {
		Group     string `json:"group"`
		Topic     string `json:"topic"`
		Partition int    `json:"partition"`
	}
	commitValueJSON struct {
		Offset          int64  `json:"offset"`
		LeaderEpoch     int32  `json:"leaderEpoch"`
		Metadata        string `json:"metadata"`
		CommitTimestamp int64  `json:"commitTimestamp"`
		TopicID         string `json:"topicId,omitempty"`
	}
)

// decodeOffsetsRecord decodes a record of __consumer_offsets as
// kafka-dump-log --offsets-decoder does (DumpLogSegments.scala's
// OffsetsMessageParser): the key as {"type": version, "data": {...}}, the
// value as {"version": version, "data": {...}}, "<DELETE>" for a
// tombstone. Offset commits (key versions 0 and 1) are decoded in full;
// group metadata (key version 2) too, with its members' subscriptions
// and assignments decoded for a consumer group, as Kafka does; other types
// are Kafka's "Unknown record type".
func decodeOffsetsRecord(r log.Record) (string, string) {
	if r.Key == nil {
		return fmt.Sprintf("Error at offset %d, skipping. The record has no key.", r.Offset), ""
	}
	if len(r.Key) < 2 {
		return fmt.Sprintf("Error at offset %d, skipping. A key of %d bytes.", r.Offset, len(r.Key)), ""
	}
	version := int16(binary.BigEndian.Uint16(r.Key))
	switch version {
	case 0, 1:
		c, err := group.DecodeCommit(r.Key, r.Value)
		if err != nil {
			return fmt.Sprintf("Error at offset %d, skipping. %v", r.Offset, err), ""
		}
		key := jsonText(keyJSON{fmt.Sprint(version), commitKeyJSON{c.Group, c.Topic, c.Partition}})
		if c.Deleted {
			return key, "<DELETE>"
		}
		vv := int16(binary.BigEndian.Uint16(r.Value))
		data := commitValueJSON{Offset: c.Offset, LeaderEpoch: -1, Metadata: c.Metadata, CommitTimestamp: c.CommitTime.UnixMilli()}
		if vv >= 3 && len(r.Value) >= 14 {
			data.LeaderEpoch = int32(binary.BigEndian.Uint32(r.Value[10:]))
		}
		if c.TopicID != ([16]byte{}) {
			data.TopicID = topic.ID(c.TopicID).String()
		}
		return key, jsonText(valueJSON{fmt.Sprint(vv), data})
	case 2:
		name, md, err := group.DecodeGroupMetadata(r.Key, r.Value)
		if err != nil {
			return fmt.Sprintf("Error at offset %d, skipping. %v", r.Offset, err), ""
		}
		key := jsonText(keyJSON{"2", struct {
			Group string `json:"group"`
		}{name}})
		if md == nil {
			return key, "<DELETE>"
		}
		return key, jsonText(valueJSON{fmt.Sprint(int16(binary.BigEndian.Uint16(r.Value))), groupMetadataToJSON(md)})
	}
	return fmt.Sprintf("Unknown record type %d at offset %d, skipping.", version, r.Offset), ""
}

// decodeTxnRecord decodes a record of __transaction_state as
// kafka-dump-log --transaction-log-decoder does (Kafka's
// TransactionLog.formatRecordKeyAndValue).
func decodeTxnRecord(r log.Record) (string, string) {
	id, m, deleted, err := txn.Decode(r.Key, r.Value)
	switch {
	case errors.Is(err, txn.ErrNotTxnRecord) && len(r.Key) >= 2:
		return fmt.Sprintf("Unknown record type %d at offset %d, skipping.", int16(binary.BigEndian.Uint16(r.Key)), r.Offset), ""
	case err != nil:
		return fmt.Sprintf("Error at offset %d, skipping. %v", r.Offset, err), ""
	}
	key := "transaction_metadata::transactionalId=" + id
	if deleted {
		return key, "<DELETE>"
	}
	parts := make([]string, len(m.Partitions))
	for i, p := range m.Partitions {
		parts[i] = fmt.Sprintf("%s-%d", p.Topic, p.Partition)
	}
	return key, fmt.Sprintf("producerId:%d,producerEpoch:%d,state=%s,partitions=[%s],txnLastUpdateTimestamp=%d,txnTimeoutMs=%d",
		m.ProducerID, m.ProducerEpoch, m.State, strings.Join(parts, ","), m.LastUpdate.UnixMilli(), m.Timeout.Milliseconds())
}

// The JSON of a group metadata record, Kafka's
// GroupMetadataValueJsonConverter with the consumer protocol's
// subscription and assignment decoded as DumpLogSegments.scala does.
type (
	groupJSON struct {
		ProtocolType          string       `json:"protocolType"`
		Generation            int32        `json:"generation"`
		Protocol              *string      `json:"protocol"`
		Leader                *string      `json:"leader"`
		CurrentStateTimestamp int64        `json:"currentStateTimestamp"`
		Members               []memberJSON `json:"members"`
	}
	memberJSON struct {
		MemberID         string  `json:"memberId"`
		GroupInstanceID  *string `json:"groupInstanceId"`
		ClientID         string  `json:"clientId"`
		ClientHost       string  `json:"clientHost"`
		RebalanceTimeout int64   `json:"rebalanceTimeout"`
		SessionTimeout   int64   `json:"sessionTimeout"`
		Subscription     any     `json:"subscription"`
		Assignment       any     `json:"assignment"`
	}
	subscriptionJSON struct {
		Topics          []string             `json:"topics"`
		UserData        []byte               `json:"userData"`
		OwnedPartitions []topicPartitionJSON `json:"ownedPartitions"`
		GenerationID    int32                `json:"generationId"`
		RackID          *string              `json:"rackId"`
	}
	assignmentJSON struct {
		AssignedPartitions []topicPartitionJSON `json:"assignedPartitions"`
		UserData           []byte               `json:"userData"`
	}
	topicPartitionJSON struct {
		Topic      string `json:"topic"`
		Partitions []int  `json:"partitions"`
	}
)

// nullable is s, or null for "".
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func groupMetadataToJSON(md *group.GroupMetadata) groupJSON {
	out := groupJSON{ProtocolType: md.ProtocolType, Generation: md.Generation, Protocol: nullable(md.Protocol),
		Leader: nullable(md.Leader), CurrentStateTimestamp: -1, Members: []memberJSON{}}
	if !md.StateTime.IsZero() {
		out.CurrentStateTimestamp = md.StateTime.UnixMilli()
	}
	for _, m := range md.Members {
		mj := memberJSON{MemberID: m.MemberID, GroupInstanceID: nullable(m.InstanceID), ClientID: m.ClientID, ClientHost: m.ClientHost,
			RebalanceTimeout: m.RebalanceTimeout.Milliseconds(), SessionTimeout: m.SessionTimeout.Milliseconds(),
			Subscription: m.Subscription, Assignment: m.Assignment}
		if md.ProtocolType == group.ConsumerProtocolType {
			// As Kafka: bytes that do not decode stay as they are.
			if sub, err := group.DecodeSubscription(m.Subscription); err == nil {
				mj.Subscription = subscriptionJSON{Topics: sub.Topics, UserData: sub.UserData,
					OwnedPartitions: byTopic(sub.Owned), GenerationID: sub.Generation, RackID: nullable(sub.RackID)}
			}
			if parts, userData, err := group.DecodeAssignment(m.Assignment); err == nil {
				mj.Assignment = assignmentJSON{AssignedPartitions: byTopic(parts), UserData: userData}
			}
		}
		out.Members = append(out.Members, mj)
	}
	return out
}

// byTopic groups partitions by topic, in the order topics first appear.
func byTopic(parts []group.TopicPartition) []topicPartitionJSON {
	out := []topicPartitionJSON{}
	at := map[string]int{}
	for _, p := range parts {
		i, ok := at[p.Topic]
		if !ok {
			i = len(out)
			at[p.Topic] = i
			out = append(out, topicPartitionJSON{Topic: p.Topic, Partitions: []int{}})
		}
		out[i].Partitions = append(out[i].Partitions, p.Partition)
	}
	return out
}
