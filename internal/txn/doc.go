// Package txn is the transaction coordinator: Kafka's transactional-id state machine
// (InitProducerId with a transactional id, AddPartitionsToTxn, AddOffsetsToTxn,
// TxnOffsetCommit, EndTxn, transaction.timeout.ms), with every state change appended to a
// log in Iggy before it is acknowledged and replayed at start, so that a restart in the
// middle of a commit finishes it and one in the middle of an abort aborts
// (docs/TRANSACTIONS.md).
//
// The coordinator decides; the data plane writes the markers and the offset store applies
// the staged offsets, through Finisher. It knows nothing of sockets or Kafka requests.
package txn
