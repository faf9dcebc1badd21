package memserver

// slab stores values under dense 0-based ids and hands out the lowest free id on insert, the
// way the real server's IdSlab allocates stream, topic, user and member ids (so a deleted
// stream's id is reused by the next create).
type slab[T any] struct {
	items []*T
	n     int
}

// insert stores v under the lowest free id and returns that id.
func (s *slab[T]) insert(v *T) uint32 {
	s.n++
	for i, it := range s.items {
		if it == nil {
			s.items[i] = v
			return uint32(i)
		}
	}
	s.items = append(s.items, v)
	return uint32(len(s.items) - 1)
}

func (s *slab[T]) get(id uint32) *T {
	if uint64(id) >= uint64(len(s.items)) {
		return nil
	}
	return s.items[id]
}

func (s *slab[T]) remove(id uint32) {
	if s.get(id) == nil {
		return
	}
	s.items[id] = nil
	s.n--
	for len(s.items) > 0 && s.items[len(s.items)-1] == nil {
		s.items = s.items[:len(s.items)-1]
	}
}

func (s *slab[T]) len() int { return s.n }

// each calls f for every stored value in id order.
func (s *slab[T]) each(f func(id uint32, v *T)) {
	for i, it := range s.items {
		if it != nil {
			f(uint32(i), it)
		}
	}
}
