package main

import (
	"encoding/binary"
	"hash/crc32"
)

// A record value is
//
//	[0:8]   sequence number, big endian (0..records-1, unique in a leg)
//	[8:12]  CRC32C of bytes [0:8] and [12:], big endian
//	[12:]   filler: 8-byte words (3 to 7 letters padded with spaces) of a fixed 256-word
//	        vocabulary, picked pseudo-randomly from the sequence number
//
// so a consumer can check every record on its own: corruption anywhere fails the checksum,
// and the sequence number tells which record it is, where it belongs and whether it came twice.
// The filler compresses like text logs: a batch of 1 KiB records shrinks to about 40% with
// lz4 and 25% with gzip or zstd, while one record alone hardly shrinks. Writing it costs about
// 0.2 µs per KiB, so the load generator leaves the CPU to what is measured.
const valueHeaderSize = 12

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// vocabulary holds 256 words of 8 bytes as little-endian integers, so one store writes one.
var vocabulary = func() (words [256]uint64) {
	x := uint64(0x10ad)
	for i := range words {
		w := [8]byte{' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '}
		x = splitmix64(x)
		for k := range 3 + x%5 {
			x = splitmix64(x)
			w[k] = 'a' + byte(x%26)
		}
		words[i] = binary.LittleEndian.Uint64(w[:])
	}
	return words
}()

// fillValue writes the value of record seq into v (the record size is len(v)).
func fillValue(v []byte, seq uint64) {
	binary.BigEndian.PutUint64(v, seq)
	rest, x := v[valueHeaderSize:], seq
	for len(rest) >= 64 { // eight words per random number
		x = splitmix64(x)
		for k := range 8 {
			binary.LittleEndian.PutUint64(rest[8*k:], vocabulary[byte(x>>(8*k))])
		}
		rest = rest[64:]
	}
	x = splitmix64(x)
	var w [8]byte
	for k := 0; len(rest) > 0; k++ {
		binary.LittleEndian.PutUint64(w[:], vocabulary[byte(x>>(8*k))])
		rest = rest[copy(rest, w[:]):]
	}
	binary.BigEndian.PutUint32(v[8:], valueChecksum(v))
}

// valueChecksum is the checksum stored in v[8:12].
func valueChecksum(v []byte) uint32 {
	return crc32.Update(crc32.Checksum(v[:8], castagnoli), castagnoli, v[valueHeaderSize:])
}

// splitmix64 is a tiny, fast pseudo-random step: enough to make values look unrelated.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// layout says which producer writes each record and to which partition: producer j writes
// records j, j+P, j+2P, ... (P producers), and its k-th record goes to partition k mod the
// partition count, so every producer spreads evenly over every partition.
type layout struct {
	records, producers, partitions int
}

func (l layout) producer(seq uint64) int { return int(seq % uint64(l.producers)) }
func (l layout) partition(seq uint64) int {
	return int(seq / uint64(l.producers) % uint64(l.partitions))
}

// produced returns how many records producer writes.
func (l layout) produced(producer int) int {
	return (l.records - producer + l.producers - 1) / l.producers
}

// lane returns, in order, the records producer writes to partition: the unit one direct
// writer sends in batches.
func (l layout) lane(producer, partition int) []uint64 {
	var seqs []uint64
	step := uint64(l.producers * l.partitions)
	for seq := uint64(producer + l.producers*partition); seq < uint64(l.records); seq += step {
		seqs = append(seqs, seq)
	}
	return seqs
}
