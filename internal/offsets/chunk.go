package offsets

// chunk splits groups into pieces whose records stay within budget bytes: fixed is the
// record's size without groups, groupSize the cost of a group's header and entrySize the cost
// of one partition. A group or topic split across pieces repeats its header in each. A piece
// always holds at least one partition or group header, so an entry larger than the budget
// gets a piece of its own rather than looping.
func chunk(groups []GroupState, budget, fixed int, groupSize func(*GroupState) int, entrySize func(*PartitionOffset) int) [][]GroupState {
	var (
		pieces  [][]GroupState
		cur     []GroupState
		size    = fixed
		entries = 0
	)
	flush := func() {
		if len(cur) > 0 {
			pieces = append(pieces, cur)
		}
		cur, size, entries = nil, fixed, 0
	}
	for gi := range groups {
		g := &groups[gi]
		open := func() {
			cur = append(cur, GroupState{Name: g.Name, HasGeneration: g.HasGeneration, Generation: g.Generation, ProtocolType: g.ProtocolType})
			size += groupSize(g)
		}
		if entries > 0 && size+groupSize(g) > budget {
			flush()
		}
		open()
		for _, t := range g.Topics {
			opened := false
			for _, p := range t.Partitions {
				need := entrySize(&p)
				if !opened {
					need += topicHeaderSize + len(t.Topic)
				}
				if entries > 0 && size+need > budget {
					flush()
					open()
					opened = false
					need = entrySize(&p) + topicHeaderSize + len(t.Topic)
				}
				cg := &cur[len(cur)-1]
				if !opened {
					cg.Topics = append(cg.Topics, TopicOffsets{Topic: t.Topic})
					opened = true
				}
				ct := &cg.Topics[len(cg.Topics)-1]
				ct.Partitions = append(ct.Partitions, p)
				size += need
				entries++
			}
		}
		entries++ // the group header itself is content
	}
	flush()
	return pieces
}

func commitEntry(p *PartitionOffset) int { return commitEntrySize + len(p.Metadata) }
func deleteEntry(*PartitionOffset) int   { return deleteEntrySize }
func groupHeader(g *GroupState) int      { return groupHeaderSize + len(g.Name) }
func stateHeader(g *GroupState) int      { return stateHeaderSize + len(g.Name) + len(g.ProtocolType) }
