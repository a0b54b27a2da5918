package core

import (
	"hash/maphash"
	"math/bits"
)

// keysSeen finds a key met twice in one map of a value the core passes
// through or reads by name (an export's body, a usage object, the
// arguments of a call): such a map is refused, duplicate_key at the key,
// as a request's is, since which of the two a reader keeps is not
// defined (docs/SPEC.md §2.2). A few keys are compared in a scan; more go
// in a set of hashes that holds, for each key, where it lies in the map's
// bytes, not the key: 8 bytes a slot, at most 16 a key, whatever the
// keys' length (a map of millions of keys, a usage object of 64 MB, costs
// a fraction of its size, not a string map's 40 bytes and more a key).
// A key whose hash matches a slot's is read again there and compared, so
// that only an equal key is a duplicate; the hash is seeded per process,
// so that no input can make the keys' hashes collide on purpose.
//
// The zero keysSeen is ready, its set growing as keys come; keys is the
// count the map's header gives, to size the set at once, only where the
// header is known to be true (the value was skipped whole before): maps
// nested 60 deep that claim 2^32 − 1 keys each would otherwise cost 8 MB
// a level for 1 MB of input (TestKeysSeenLyingHeaders).
type keysSeen struct {
	keys  uint32    // the map's count of keys, from its header when it is true; else 0
	few   [8]string // the first keys
	n     int
	base  []byte   // the bytes from the ninth key on: a slot's key lies at an offset in them
	slots []uint64 // open addressing: the hash's high 32 bits, then where the key is (slotKey); 0 is free
	used  int
	big   map[string]struct{} // instead of slots, for keys lying past 4 GiB of base (never in a request)
}

// A slot's low 32 bits: 1 + i for few[i], slotBase + the key's offset in
// base for the others.
const slotBase = 1 + len(keysSeen{}.few)

// keysSeed seeds the set's hash.
var keysSeed = maphash.MakeSeed()

// add records key, read from the bytes at (its header on), and reports
// whether it was not seen before in the map.
func (s *keysSeen) add(key string, at []byte) bool {
	if s.slots == nil && s.big == nil {
		for _, k := range s.few[:s.n] {
			if k == key {
				return false
			}
		}
		if s.n < len(s.few) {
			s.few[s.n], s.n = key, s.n+1
			return true
		}
		if len(at) > 1<<32-1-slotBase {
			s.big = make(map[string]struct{})
			for _, k := range s.few {
				s.big[k] = struct{}{}
			}
		} else {
			s.grow(at)
			for i, k := range s.few {
				s.insert(k, uint64(1+i))
			}
		}
	}
	if s.big != nil {
		if _, ok := s.big[key]; ok {
			return false
		}
		s.big[key] = struct{}{}
		return true
	}
	return s.insert(key, uint64(slotBase+len(s.base)-len(at)))
}

// grow makes (or doubles) the set, to hold the keys the header gives
// (within what the bytes from at can hold, 2 bytes a key at least) or
// twice what it holds, at a load of 3/4 at most.
func (s *keysSeen) grow(at []byte) {
	old := s.slots
	want := 2 * s.used
	if old == nil {
		s.base = at
		want = max(int(min(uint64(s.keys), uint64(len(at)/2+len(s.few)))), 2*len(s.few))
	}
	size := 1 << bits.Len(uint(want+want/3))
	s.slots, s.used = make([]uint64, size), 0
	for _, e := range old {
		if e != 0 {
			s.place(e, maphash.String(keysSeed, s.slotKey(e)))
		}
	}
}

// insert adds key, where is its slot's low 32 bits, unless an equal key
// is there: false.
func (s *keysSeen) insert(key string, where uint64) bool {
	h := maphash.String(keysSeed, key)
	tag := h >> 32 << 32
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := s.slots[i]
		if e == 0 {
			break
		}
		if e>>32<<32 == tag && s.slotKey(e) == key {
			return false
		}
	}
	if 4*(s.used+1) > 3*len(s.slots) {
		s.grow(nil)
	}
	s.place(tag|where, h)
	return true
}

// place puts the slot e of hash h in the first free slot from h.
func (s *keysSeen) place(e, h uint64) {
	mask := uint64(len(s.slots) - 1)
	i := h & mask
	for s.slots[i] != 0 {
		i = (i + 1) & mask
	}
	s.slots[i], s.used = e, s.used+1
}

// slotKey is the key of the slot e, read again where it lies.
func (s *keysSeen) slotKey(e uint64) string {
	where := int(uint32(e))
	if where < slotBase {
		return s.few[where-1]
	}
	k, _, _ := readKey(s.base[where-slotBase:])
	return k
}
