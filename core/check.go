package core

import (
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"
)

// checkRequest applies the rules of the wire decoder to a typed request, in
// SPEC table order (channels in code-point order), and parses the template.
func checkRequest(req *Request) (*Template, *Error) {
	if req == nil {
		return nil, newError(CodeMalformedRequest, "", "the request is nil")
	}
	if err := checkMessages(req.RunMessages, "run_messages"); err != nil {
		return nil, err
	}
	for _, ch := range slices.Sorted(maps.Keys(req.Injections)) {
		p := "injections" + channelSeg(ch)
		if !utf8.ValidString(ch) {
			return nil, invalidUTF8([]byte(ch), "a key of this map").within("injections")
		}
		for i, e := range req.Injections[ch] {
			ip := p + indexSeg(i)
			if err := checkText(e.EntryID, ip+".entry_id"); err != nil {
				return nil, err
			}
			if e.EntryID == "" {
				return nil, emptyEntryID().within(ip + ".entry_id")
			}
			if err := checkText(e.Content, ip+".content"); err != nil {
				return nil, err
			}
		}
	}
	if err := checkMessages(req.GoalMessages, "goal_messages"); err != nil {
		return nil, err
	}
	for i, s := range req.Steps {
		if err := checkStep(s, i); err != nil {
			return nil, err
		}
	}
	if err := checkText(req.ObservationTemplate, "observation_template"); err != nil {
		return nil, err
	}
	tmpl, err := ParseTemplate(req.ObservationTemplate)
	if err != nil {
		return nil, err.within("observation_template")
	}
	if req.MaxPromptChars != nil && *req.MaxPromptChars < 0 {
		return nil, newError(CodeInvalidBudget, "max_prompt_chars", "max_prompt_chars is "+strconv.FormatInt(*req.MaxPromptChars, 10)+"; give a budget of 0 or more code points, or nil for no budget")
	}
	return tmpl, nil
}

func checkMessages(msgs []Message, path string) *Error {
	for i, m := range msgs {
		mp := path + indexSeg(i)
		if err := checkText(m.Role, mp+".role"); err != nil {
			return err
		}
		if !validRole(m.Role) {
			return newError(CodeInvalidRole, mp+".role", "role "+quote(m.Role)+" is not one of system, user, assistant")
		}
		for j, b := range m.Content {
			bp := mp + ".content" + indexSeg(j)
			if err := checkText(b.Type, bp+".type"); err != nil {
				return err
			}
			if b.Type != BlockTypeText {
				return unknownBlockType(b.Type).within(bp + ".type")
			}
			if err := checkText(b.Text, bp+".text"); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkStep(s Step, i int) *Error {
	sp := "steps" + indexSeg(i)
	if err := checkText(s.RawOutput, sp+".raw_output"); err != nil {
		return err
	}
	return checkText(s.Observation, sp+".observation")
}

func checkText(s, path string) *Error {
	if utf8.ValidString(s) {
		return nil
	}
	return invalidUTF8([]byte(s), "this text").within(path)
}
