package deepjson

// Place is a place in a request for a deep value x: Wrap(x) is the
// request (or a compare side, Side) with x there, at level Level (the
// request itself is level 1).
type Place struct {
	Name  string
	Level int
	Side  bool // a recorded message list: a compare side, not a request
	Wrap  func(x Value) Value
}

var tmpl = M("observation_template", Str("{observation}"))

func msg(content Value) Value { return Obj(M("role", Str("user")), M("content", content)) }

func block(m ...Member) Value { return Arr(Obj(m...)) }

// Places are where the core reads a request (and a compare side's
// recorded list), each with a deep value: at the top, at each level of
// run_messages, steps and injections down to a block's text (level 6, the
// deepest the core reads), under unknown and repeated keys, and after and
// before values the core refuses first.
var Places = []Place{
	{"top", 1, false, func(x Value) Value { return x }},
	{"first-key", 2, false, func(x Value) Value { return Obj(M("x", x), tmpl) }},
	{"last-key", 2, false, func(x Value) Value { return Obj(tmpl, M("x", x)) }},
	{"v", 2, false, func(x Value) Value { return Obj(M("v", x), tmpl) }},
	{"budget", 2, false, func(x Value) Value { return Obj(tmpl, M("max_prompt_chars", x)) }},
	{"template", 2, false, func(x Value) Value { return Obj(M("observation_template", x)) }},
	{"run_messages", 2, false, func(x Value) Value { return Obj(tmpl, M("run_messages", x)) }},
	{"message", 3, false, func(x Value) Value { return Obj(tmpl, M("run_messages", Arr(x))) }},
	{"role", 4, false, func(x Value) Value {
		return Obj(tmpl, M("goal_messages", Arr(Obj(M("role", x), M("content", Arr())))))
	}},
	{"content", 4, false, func(x Value) Value { return Obj(tmpl, M("run_messages", Arr(msg(x)))) }},
	{"block", 5, false, func(x Value) Value { return Obj(tmpl, M("run_messages", Arr(msg(Arr(x))))) }},
	{"block-type", 6, false, func(x Value) Value {
		return Obj(tmpl, M("run_messages", Arr(msg(block(M("type", x), M("text", Str("t")))))))
	}},
	{"block-text", 6, false, func(x Value) Value {
		return Obj(tmpl, M("run_messages", Arr(msg(block(M("type", Str("text")), M("text", x))))))
	}},
	{"block-unknown", 6, false, func(x Value) Value {
		return Obj(tmpl, M("run_messages", Arr(msg(block(M("type", Str("text")), M("z", x))))))
	}},
	{"steps", 2, false, func(x Value) Value { return Obj(tmpl, M("steps", x)) }},
	{"step", 3, false, func(x Value) Value { return Obj(tmpl, M("steps", Arr(x))) }},
	{"step-field", 4, false, func(x Value) Value {
		return Obj(tmpl, M("steps", Arr(Obj(M("observation", Str("o")), M("raw_output", x)))))
	}},
	{"channel", 3, false, func(x Value) Value { return Obj(tmpl, M("injections", Obj(M("ch", x)))) }},
	{"entry-content", 5, false, func(x Value) Value {
		return Obj(tmpl, M("injections", Obj(M("ch", Arr(Obj(M("entry_id", Str("e")), M("content", x)))))))
	}},
	{"after-bad-version", 3, false, func(x Value) Value { return Obj(M("v", Int(2)), tmpl, M("steps", Arr(x))) }},
	{"before-bad-version", 3, false, func(x Value) Value { return Obj(tmpl, M("steps", Arr(x)), M("v", Int(2))) }},
	{"after-repeated-key", 3, false, func(x Value) Value { return Obj(tmpl, tmpl, M("steps", Arr(x))) }},
	{"in-repeated-key", 2, false, func(x Value) Value { return Obj(M("steps", Arr()), tmpl, M("steps", x)) }},
	{"after-valid-steps", 3, false, func(x Value) Value {
		return Obj(tmpl, M("steps", Arr(Obj(M("raw_output", Str("r")), M("observation", Str("o"))), x)))
	}},
	{"recorded", 1, true, func(x Value) Value { return x }},
	{"recorded-message", 2, true, func(x Value) Value { return Arr(x) }},
	{"recorded-content", 3, true, func(x Value) Value { return Arr(msg(x)) }},
	{"recorded-block", 4, true, func(x Value) Value { return Arr(msg(Arr(x))) }},
	{"recorded-text", 5, true, func(x Value) Value { return Arr(msg(block(M("type", Str("text")), M("text", x)))) }},
}
