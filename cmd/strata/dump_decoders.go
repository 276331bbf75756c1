package main

import (
	"encoding/binary"
	"encoding/hex"
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
// group metadata (key version 2) has its key decoded and its value
// printed as hex; other types are Kafka's "Unknown record type".
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
		if len(r.Key) < 4 || int(binary.BigEndian.Uint16(r.Key[2:])) != len(r.Key)-4 {
			return fmt.Sprintf("Error at offset %d, skipping. A group metadata key of %d bytes.", r.Offset, len(r.Key)), ""
		}
		key := jsonText(keyJSON{"2", struct {
			Group string `json:"group"`
		}{string(r.Key[4:])}})
		if r.Value == nil {
			return key, "<DELETE>"
		}
		vv := ""
		if len(r.Value) >= 2 {
			vv = fmt.Sprint(int16(binary.BigEndian.Uint16(r.Value)))
		}
		return key, jsonText(struct {
			Version string `json:"version"`
			Raw     string `json:"raw"`
			Note    string `json:"note"`
		}{vv, hex.EncodeToString(r.Value), "group metadata, not decoded"})
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
