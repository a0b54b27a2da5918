package deepjson

import (
	"math/rand/v2"

	"github.com/tinylib/msgp/msgp"
)

// Level is one level of a chain: an array or object holding the next
// level (under Key in an object) between its siblings Before and After.
// Space is white space written inside its brackets.
type Level struct {
	Obj           bool
	Key           Value
	Before, After []Member
	Space         string
}

// Chain is depth levels around inner: level(i) is level i, 0 the
// outermost (it is called twice per level, so it must give the same level
// each time). Time and memory are linear in the result, at any depth.
func Chain(depth int, level func(i int) Level, inner Value) Value {
	var v Value
	for i := range depth {
		v = level(i).open(v)
	}
	v.JSON, v.MP = append(v.JSON, inner.JSON...), append(v.MP, inner.MP...)
	for i := depth - 1; i >= 0; i-- {
		v = level(i).close(v)
	}
	return v
}

func (l Level) open(v Value) Value {
	n := uint32(len(l.Before) + 1 + len(l.After))
	if l.Obj {
		v.JSON, v.MP = append(v.JSON, '{'), msgp.AppendMapHeader(v.MP, n)
	} else {
		v.JSON, v.MP = append(v.JSON, '['), msgp.AppendArrayHeader(v.MP, n)
	}
	v.JSON = append(v.JSON, l.Space...)
	for _, m := range l.Before {
		v = l.member(v, m)
		v.JSON = append(v.JSON, ',')
	}
	if l.Obj {
		v.JSON, v.MP = append(append(v.JSON, l.Key.JSON...), ':'), append(v.MP, l.Key.MP...)
	}
	return v
}

func (l Level) close(v Value) Value {
	for _, m := range l.After {
		v.JSON = append(v.JSON, ',')
		v = l.member(v, m)
	}
	v.JSON = append(v.JSON, l.Space...)
	if l.Obj {
		return Value{append(v.JSON, '}'), v.MP}
	}
	return Value{append(v.JSON, ']'), v.MP}
}

func (l Level) member(v Value, m Member) Value {
	if l.Obj {
		v.JSON, v.MP = append(append(v.JSON, m.Key.JSON...), ':'), append(v.MP, m.Key.MP...)
	}
	v.JSON, v.MP = append(v.JSON, m.Val.JSON...), append(v.MP, m.Val.MP...)
	return v
}

// Arrays is a level function of arrays with nothing else in them.
func Arrays(int) Level { return Level{} }

// Objects is a level function of objects {"a": ...}.
func Objects(int) Level { return Level{Obj: true, Key: Str("a")} }

// Wide is a level function of arrays of n members, the next level last
// (a header's size changes at 16 and at 65,536 members).
func Wide(n int) func(int) Level {
	l := Level{Before: make([]Member, n-1)}
	for j := range l.Before {
		l.Before[j].Val = Int(int64(j % 3))
	}
	return func(int) Level { return l }
}

// Random is a level function of seeded random levels: arrays and objects,
// keys and siblings from Keys and Scalars, mostly none, sometimes 15 to 17
// (a header's size changes at 16).
func Random(seed uint64) func(int) Level {
	return func(i int) Level {
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		l := Level{Obj: r.IntN(2) == 0, Key: Keys[r.IntN(len(Keys))]}
		if r.IntN(4) == 0 {
			l.Space = [...]string{" ", "\n\t", "\r\n  "}[r.IntN(3)]
		}
		l.Before, l.After = members(r, l.Obj), members(r, l.Obj)
		return l
	}
}

func members(r *rand.Rand, obj bool) []Member {
	var n int
	switch k := r.IntN(64); {
	case k < 3:
		n = 15 + r.IntN(3)
	case k < 12:
		n = 1 + r.IntN(3)
	}
	ms := make([]Member, n)
	for j := range ms {
		ms[j].Val = Scalars[r.IntN(len(Scalars))]
		if j > 8 || len(ms[j].Val.JSON) > 1000 && r.IntN(64) > 0 {
			ms[j].Val = Scalars[r.IntN(4)] // a long run of short values; 64 KiB rarely
		}
		if obj {
			ms[j].Key = Keys[r.IntN(len(Keys))]
		}
	}
	return ms
}
