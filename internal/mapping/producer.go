package mapping

import (
	"encoding/binary"

	"github.com/iggygw/iggy-gateway-kafka/internal/kbatch"
)

// Producer identifies the idempotent batch a message starts: the batch's producer id, epoch
// and base sequence, and how many records (messages) it has. It travels as user headers on
// the batch's first message so that producer state can be rebuilt from the partition
// (docs/STORAGE-FORMAT.md §2.4, docs/IDEMPOTENCE.md).
type Producer struct {
	ID           int64
	Epoch        int16
	BaseSequence int32
	Records      int32
	// Transactional: the batch belongs to a transaction; its first message also carries
	// kafka.txn (docs/STORAGE-FORMAT.md §2.5). Not read back by ProducerOfMessage.
	Transactional bool
}

// ProducerOf returns the producer of an idempotent batch; ok is false when the batch has no
// producer id (it is not idempotent).
func ProducerOf(h *kbatch.Header) (p Producer, ok bool) {
	if h.ProducerID < 0 {
		return Producer{}, false
	}
	return Producer{ID: h.ProducerID, Epoch: h.ProducerEpoch, BaseSequence: h.BaseSequence, Records: h.NumRecords,
		Transactional: h.Transactional()}, true
}

// producerHeadersSize is the encoded size of the four producer headers.
var producerHeadersSize = headerEntrySize(len(HeaderProducerID), 8) + headerEntrySize(len(HeaderProducerEpoch), 2) +
	headerEntrySize(len(HeaderSequence), 4) + headerEntrySize(len(HeaderRecords), 4)

// transactionalHeaderSize is the encoded size of kafka.txn.
var transactionalHeaderSize = headerEntrySize(len(HeaderTransactional), 1)

// headersSize is the encoded size of p's headers.
func (p *Producer) headersSize() int {
	if p.Transactional {
		return producerHeadersSize + transactionalHeaderSize
	}
	return producerHeadersSize
}

func appendProducerHeaders(dst []byte, p *Producer) []byte {
	var v [8]byte
	binary.LittleEndian.PutUint64(v[:], uint64(p.ID))
	dst = appendHeader(dst, HeaderProducerID, KindInt64, v[:8])
	binary.LittleEndian.PutUint16(v[:], uint16(p.Epoch))
	dst = appendHeader(dst, HeaderProducerEpoch, KindInt16, v[:2])
	binary.LittleEndian.PutUint32(v[:], uint32(p.BaseSequence))
	dst = appendHeader(dst, HeaderSequence, KindInt32, v[:4])
	binary.LittleEndian.PutUint32(v[:], uint32(p.Records))
	dst = appendHeader(dst, HeaderRecords, KindInt32, v[:4])
	if p.Transactional {
		dst = appendHeader(dst, HeaderTransactional, KindRaw, transactionalValue)
	}
	return dst
}

var transactionalValue = []byte{1}

// ControlMessage returns the payload and user headers of a transaction marker of producer id
// and epoch (docs/STORAGE-FORMAT.md §2.5): commit or abort. Fetch serves it to Kafka clients
// as a control batch; native Iggy consumers recognise it by kafka.control.
func ControlMessage(id int64, epoch int16, commit bool) (payload, headers []byte) {
	kind := byte(0)
	if commit {
		kind = 1
	}
	headers = appendHeader(nil, HeaderVersion, KindRaw, versionValue)
	var v [8]byte
	binary.LittleEndian.PutUint64(v[:], uint64(id))
	headers = appendHeader(headers, HeaderProducerID, KindInt64, v[:8])
	binary.LittleEndian.PutUint16(v[:], uint16(epoch))
	headers = appendHeader(headers, HeaderProducerEpoch, KindInt16, v[:2])
	headers = appendHeader(headers, HeaderControl, KindRaw, []byte{kind})
	return []byte{kind}, headers
}

// ProducerOfMessage reads the producer headers of a stored message's user-headers block. ok
// is false when the message does not start an idempotent batch: it has none of them, or it
// has no kafka.v (a native Iggy client wrote it, and its kafka.* headers mean nothing). A
// gateway-written message with some but not all of them, of the wrong kinds or sizes, or
// repeated, is an ErrCorrupt *MessageError.
func ProducerOfMessage(m *Stored) (p Producer, ok bool, err error) {
	p, ok, err = producerOf(m.Headers)
	if err != nil {
		return Producer{}, false, &MessageError{Offset: m.Offset, Err: err}
	}
	return p, ok, nil
}

func producerOf(block []byte) (Producer, bool, error) {
	const (
		bitID = 1 << iota
		bitEpoch
		bitSeq
		bitRecords
		bitVersion
		all = bitID | bitEpoch | bitSeq | bitRecords
	)
	var p Producer
	var seen uint8
	for len(block) > 0 {
		h, rest, err := nextHeader(block)
		if err != nil {
			return Producer{}, false, err
		}
		block = rest
		if h.keyKind != KindString {
			continue
		}
		var bit uint8
		var v []byte
		switch string(h.key) {
		case HeaderVersion:
			bit = bitVersion
		case HeaderProducerID:
			bit = bitID
			v, err = fixedValue(&h, KindInt64, 8)
			p.ID = int64(binary.LittleEndian.Uint64(v))
		case HeaderProducerEpoch:
			bit = bitEpoch
			v, err = fixedValue(&h, KindInt16, 2)
			p.Epoch = int16(binary.LittleEndian.Uint16(v))
		case HeaderSequence:
			bit = bitSeq
			v, err = fixedValue(&h, KindInt32, 4)
			p.BaseSequence = int32(binary.LittleEndian.Uint32(v))
		case HeaderRecords:
			bit = bitRecords
			v, err = fixedValue(&h, KindInt32, 4)
			p.Records = int32(binary.LittleEndian.Uint32(v))
		default:
			continue
		}
		if err != nil {
			return Producer{}, false, err
		}
		if seen&bit != 0 {
			return Producer{}, false, corrupt("header %s repeated", h.key)
		}
		seen |= bit
	}
	switch {
	case seen&bitVersion == 0 || seen&all == 0:
		return Producer{}, false, nil
	case seen&all != all:
		return Producer{}, false, corrupt("incomplete producer headers")
	case p.ID < 0 || p.Epoch < 0 || p.BaseSequence < 0 || p.Records < 1:
		return Producer{}, false, corrupt("producer headers %+v out of range", p)
	}
	return p, true, nil
}

// fixedValue returns h's value when it has the kind and size of an integer header, or else a
// zero value of that size and an error.
func fixedValue(h *userHeader, kind byte, size int) ([]byte, error) {
	if h.valueKind != kind || len(h.value) != size {
		return make([]byte, size), corrupt("%s of kind %d, %d bytes", h.key, h.valueKind, len(h.value))
	}
	return h.value, nil
}

// TransactionalMessage reports whether a stored message starts a transactional batch: it
// carries kafka.txn (docs/STORAGE-FORMAT.md §2.5) and kafka.v (a gateway wrote it).
func TransactionalMessage(m *Stored) bool {
	var txn, version bool
	for block := m.Headers; len(block) > 0; {
		h, rest, err := nextHeader(block)
		if err != nil {
			return false
		}
		block = rest
		if h.keyKind != KindString {
			continue
		}
		switch string(h.key) {
		case HeaderTransactional:
			txn = len(h.value) == 1 && h.value[0] == 1
		case HeaderVersion:
			version = true
		}
	}
	return txn && version
}
