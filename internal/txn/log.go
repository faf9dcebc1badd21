package txn

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/iggygw/iggy-gateway-kafka/internal/offsets"
)

// The transaction log (docs/TRANSACTIONS.md, "Storage"): one Iggy message per state change,
// the whole state of one transactional id as JSON after a 4-byte CRC-32C of the JSON. The
// last record of an id is its state; the aborted ranges of every complete-abort record are
// kept so that read_committed fetches go on skipping aborted records after a restart.

// DefaultTopic is the log's Iggy topic in the reserved stream; it has one partition.
const DefaultTopic = "__transaction_state"

// recordVersion is the layout written and read.
const recordVersion = 1

type record struct {
	V        int                         `json:"v"`
	ID       string                      `json:"id"`
	PID      int64                       `json:"pid"`
	Epoch    int16                       `json:"epoch"`
	Timeout  int64                       `json:"timeout_ms"`
	State    State                       `json:"state"`
	Started  int64                       `json:"started_ms,omitempty"`
	Parts    []partFrom                  `json:"parts,omitempty"`
	Groups   map[string][]offsets.Commit `json:"groups,omitempty"`
	HasGroup []string                    `json:"has_groups,omitempty"`
	Aborted  []abortedRanges             `json:"aborted,omitempty"`
}

type partFrom struct {
	TP
	From uint64 `json:"from"`
}

type abortedRanges struct {
	TP
	Ranges []Range `json:"r"`
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func encode(t *txn, aborted map[TP][]Range) ([]byte, error) {
	r := record{V: recordVersion, ID: t.id, PID: t.pid, Epoch: t.epoch, Timeout: t.timeout.Milliseconds(), State: t.state}
	if !t.started.IsZero() {
		r.Started = t.started.UnixMilli()
	}
	for tp, from := range t.parts {
		r.Parts = append(r.Parts, partFrom{tp, from})
	}
	if len(t.groups) > 0 {
		r.Groups = map[string][]offsets.Commit{}
		for g, cs := range t.groups {
			for _, c := range cs {
				r.Groups[g] = append(r.Groups[g], c)
			}
		}
	}
	for g := range t.hasGroup {
		r.HasGroup = append(r.HasGroup, g)
	}
	for tp, rs := range aborted {
		if len(rs) > 0 {
			r.Aborted = append(r.Aborted, abortedRanges{tp, rs})
		}
	}
	body, err := json.Marshal(&r)
	if err != nil {
		return nil, err
	}
	return binary.BigEndian.AppendUint32(body, crc32.Checksum(body, crcTable)), nil
}

func decode(b []byte) (*record, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("transaction log record of %d bytes", len(b))
	}
	body, sum := b[:len(b)-4], b[len(b)-4:]
	if binary.BigEndian.Uint32(sum) != crc32.Checksum(body, crcTable) {
		return nil, fmt.Errorf("transaction log record: CRC mismatch")
	}
	var r record
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("transaction log record: %w", err)
	}
	if r.V != recordVersion {
		return nil, fmt.Errorf("transaction log record version %d, this gateway reads %d", r.V, recordVersion)
	}
	return &r, nil
}

// persist appends t's state; nothing is acknowledged before it is in the log.
func (c *Coordinator) persist(ctx context.Context, t *txn) error {
	return c.persistWith(ctx, t, nil)
}

func (c *Coordinator) persistWith(ctx context.Context, t *txn, aborted map[TP][]Range) error {
	if c.cfg.Log == nil {
		return nil
	}
	b, err := encode(t, aborted)
	if err != nil {
		return err
	}
	if _, err := c.cfg.Log.Append(ctx, 0, [][]byte{b}); err != nil {
		c.log.Warn("transaction log append failed", "transactional_id", t.id, "err", err)
		return errUnavailable
	}
	return nil
}

// Restorer learns at load what the log says the data plane must know: open transactions'
// partitions (their records are above the last stable offset) and aborted records.
type Restorer interface {
	Restore(pid int64, open map[TP]uint64, aborted map[TP][]Range)
}

// Load replays the log (ensuring it exists); call before Start.
func (c *Coordinator) Load(ctx context.Context, into Restorer) error {
	if c.cfg.Log == nil {
		return nil
	}
	if err := c.cfg.Log.Ensure(ctx); err != nil {
		return err
	}
	end, err := c.cfg.Log.End(ctx, 0)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for off := uint64(0); off < end; {
		entries, err := c.cfg.Log.ReadFrom(ctx, 0, off, 1000)
		if err != nil {
			return err
		}
		if len(entries) == 0 {
			break
		}
		for _, e := range entries {
			off = e.Offset + 1
			r, err := decode(e.Data)
			if err != nil {
				return fmt.Errorf("transaction log offset %d: %w", e.Offset, err)
			}
			if len(r.Aborted) > 0 && into != nil {
				ab := map[TP][]Range{}
				for _, a := range r.Aborted {
					ab[a.TP] = a.Ranges
				}
				into.Restore(r.PID, nil, ab)
			}
			t := c.txns[r.ID]
			if t == nil {
				t = &txn{id: r.ID}
				c.txns[r.ID] = t
			}
			next := &txn{id: r.ID, pid: r.PID, epoch: r.Epoch, timeout: time.Duration(r.Timeout) * time.Millisecond, state: r.State}
			if r.Started != 0 {
				next.started = time.UnixMilli(r.Started)
			}
			if len(r.Parts) > 0 {
				next.parts = map[TP]uint64{}
				for _, p := range r.Parts {
					next.parts[p.TP] = p.From
				}
			}
			if r.State == Ongoing || r.State == PrepareCommit || r.State == PrepareAbort {
				if next.parts == nil {
					next.parts = map[TP]uint64{}
				}
				next.groups, next.hasGroup = map[string]map[TP]offsets.Commit{}, map[string]bool{}
				for g, cs := range r.Groups {
					m := map[TP]offsets.Commit{}
					for _, cm := range cs {
						m[TP{cm.Topic, cm.Partition}] = cm
					}
					next.groups[g] = m
				}
				for _, g := range r.HasGroup {
					next.hasGroup[g] = true
				}
			}
			c.apply(t, next)
		}
	}
	if into != nil {
		for _, t := range c.txns {
			if len(t.parts) > 0 {
				into.Restore(t.pid, t.parts, nil)
			}
		}
	}
	return nil
}
