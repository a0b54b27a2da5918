//go:build !wasip1

package core

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
)

// The reading of a view answer (docs/SPEC.md §7.8) is the hosts': the
// module writes answers and never reads one, so this file is left out of
// its build (GOOS wasip1), and encoding/json with it.

// SplitViewAnswer splits an answer of AppendAssembleViewBytes into the
// response and the view (nil for an error response).
func SplitViewAnswer(answer []byte) (response []byte, view *View, err error) {
	if len(answer) < 4 || uint64(binary.LittleEndian.Uint32(answer)) > uint64(len(answer)-4) {
		return nil, nil, errors.New("a view answer is its response's length (4 bytes), the response and the view")
	}
	n := 4 + int(binary.LittleEndian.Uint32(answer))
	response = answer[4:n]
	var w viewJSON
	if err := json.Unmarshal(answer[n:], &w); err != nil {
		return nil, nil, err
	}
	if w.Role == nil {
		return response, nil, nil
	}
	view, err = w.view()
	return response, view, err
}

// viewJSON is the JSON form of View, for SplitViewAnswer.
type viewJSON struct {
	RunEnd          int      `json:"run_end"`
	InjectionsEnd   int      `json:"injections_end"`
	GoalEnd         int      `json:"goal_end"`
	Steps           int      `json:"steps"`
	MaxPromptChars  *string  `json:"max_prompt_chars"`
	FirstOver       int      `json:"first_over"`
	Roles           []string `json:"roles"`
	Role            []int    `json:"role"`
	BlockStart      []int    `json:"block_start"`
	Texts           []int    `json:"texts"`
	MessageChars    []int64  `json:"message_chars"`
	PromptChars     int64    `json:"prompt_chars"`
	ContextOverflow bool     `json:"context_overflow"`
	Injected        []struct {
		Channel      string `json:"channel"`
		EntryID      string `json:"entry_id"`
		MessageIndex int    `json:"message_index"`
	} `json:"injected"`
	PrefixDigests struct {
		Run        string `json:"run"`
		Injections string `json:"injections"`
		Goal       string `json:"goal"`
	} `json:"prefix_digests"`
}

func (w *viewJSON) view() (*View, error) {
	v := &View{
		RunEnd: w.RunEnd, InjectionsEnd: w.InjectionsEnd, GoalEnd: w.GoalEnd, Steps: w.Steps, FirstOver: w.FirstOver,
		Roles: w.Roles, Role: w.Role, BlockStart: w.BlockStart, Texts: w.Texts, MessageChars: w.MessageChars,
		PromptChars: w.PromptChars, ContextOverflow: w.ContextOverflow, Injected: []Injected{}, ok: true,
		PrefixDigests: PrefixDigests{Run: w.PrefixDigests.Run, Injections: w.PrefixDigests.Injections, Goal: w.PrefixDigests.Goal},
	}
	for _, in := range w.Injected {
		v.Injected = append(v.Injected, Injected{Channel: in.Channel, EntryID: in.EntryID, MessageIndex: in.MessageIndex})
	}
	if w.MaxPromptChars != nil {
		b, err := strconv.ParseInt(*w.MaxPromptChars, 10, 64)
		if err != nil {
			return nil, err
		}
		v.MaxPromptChars = &b
	}
	return v, nil
}
