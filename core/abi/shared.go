package abi

// ExtRequestText is the msgpack ext type of a shared text in the answer of
// the assemble_shared call: "the request's text k", its 4 data bytes k
// big-endian (docs/SPEC.md §7.11).
const ExtRequestText = 2

// SharedTextSections are the request's keys whose texts the
// assemble_shared answer numbers, in the order it numbers them
// (docs/SPEC.md §7.11): the blocks of run_messages, the entries of
// injections (channel by channel in the request's order), the blocks of
// goal_messages, then each step's raw_output and observation.
var SharedTextSections = []string{"run_messages", "injections", "goal_messages", "steps"}
