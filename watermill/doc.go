// Package watermill is a Watermill Pub/Sub (github.com/ThreeDotsLabs/watermill,
// v1.5) over a Strata store: a [Publisher] that appends Watermill messages to
// a store's topics and a [Subscriber] that delivers them, with or without a
// consumer group, so that a service written against Watermill's
// message.Publisher and message.Subscriber keeps an embedded, durable log in
// its own process and can move to watermill-kafka unchanged when it outgrows
// one machine.
//
// # Messages
//
// A message is one record: its payload is the record's value, its UUID the
// header "_watermill_message_uuid" and each metadata entry a header of its
// own, as watermill-kafka's DefaultMarshaler writes them, so that Kafka
// consumers of the same records read the same messages (see [Marshaler]).
// Records have no key unless the publisher's marshaler gives one
// ([NewWithPartitioningMarshaler]): then a key keeps its partition, and with
// it its order. A delivered message's context carries the record's
// partition, offset, timestamp and key ([MessagePartitionFromCtx] and the
// others).
//
// # Delivery
//
// A subscription delivers each partition's messages in order, one at a time
// (the next message of a partition comes only after the previous one was
// acked), and its partitions side by side, as watermill-kafka delivers
// each partition it claims. Ack commits the message's offset to the group
// before the next message of its partition is delivered; Nack delivers the
// same message again after [SubscriberConfig.NackResendSleep], and the
// messages after it follow it in order. Delivery is at least once: a
// message acked while the process crashes before the commit lands, or one
// handed out when its subscriber closes, is delivered again.
//
// A group subscription checks in with its group (its heartbeat) between
// the batches of records it takes from the store (up to
// [SubscriberConfig.MaxPollRecords]), not while a handler works on a
// message: a message that is neither acked nor nacked for longer than the
// store's Options.SessionTimeout (45 s by default) gets the subscription
// evicted from its group, and the messages it had not committed go to
// another member. Set the store's SessionTimeout above the longest a
// handler may take, retries included.
//
// With [SubscriberConfig.ConsumerGroup] set, subscribers of a topic in one
// group share its partitions (a Strata consumer group, [strata.Consumer]),
// and a group that has committed nothing starts at the earliest record
// ([SubscriberConfig.InitialOffset]). Without a group, every subscription
// reads every partition from the initial offset, commits nothing, and its
// Ack only lets the next message through.
//
// Topics are created on demand, by Publish, Subscribe and
// SubscribeInitialize, with [PublisherConfig.Topic] or
// [SubscriberConfig.Topic]; an existing topic is used as it is.
package watermill
