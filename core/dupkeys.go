package core

// keysSeen finds a key met twice in one map of a value the core passes
// through or reads by name (an export's body, a usage object, the
// arguments of a call): such a map is refused, duplicate_key at the key,
// as a request's is, since which of the two a reader keeps is not
// defined (docs/SPEC.md §2.2). A few keys are compared in a scan; more go
// in a set.
type keysSeen struct {
	few [8]string
	n   int
	set map[string]struct{}
}

// add records key and reports whether it was not seen before in the map.
func (s *keysSeen) add(key string) bool {
	if s.set == nil {
		for _, k := range s.few[:s.n] {
			if k == key {
				return false
			}
		}
		if s.n < len(s.few) {
			s.few[s.n], s.n = key, s.n+1
			return true
		}
		s.set = make(map[string]struct{}, 2*len(s.few))
		for _, k := range s.few {
			s.set[k] = struct{}{}
		}
	}
	if _, ok := s.set[key]; ok {
		return false
	}
	s.set[key] = struct{}{}
	return true
}
