package main

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
)

// writeText writes the view for people: the segments with their boundaries,
// each message's role and size, the total and the budget line. The layout
// (segment ends, steps, budget and where it is first exceeded) is the
// core's view of the response (core.View, docs/SPEC.md §7.8); view is nil
// for an error response.
func writeText(w *bufio.Writer, respBytes []byte, view *core.View, engine string) error {
	resp, err := core.DecodeResponse(respBytes)
	if err != nil {
		var e *core.Error
		if errors.As(err, &e) {
			fmt.Fprintf(w, "error %s", e.Code)
			if e.Path != "" {
				fmt.Fprintf(w, " at %s", visible(e.Path))
			}
			fmt.Fprintf(w, "\n  %s\n", visible(e.Message))
			return nil
		}
		return err
	}
	if view == nil {
		return errors.New("an ok response came without its view")
	}
	total := len(resp.Messages)
	fmt.Fprintf(w, "assembled by the %s engine: %d messages, %s chars\n", engine, total, group(resp.PromptChars))
	v := view
	segments := []segment{
		{"run", 0, v.RunEnd, false},
		{"injections", v.RunEnd, v.InjectionsEnd, false},
		{"goal", v.InjectionsEnd, v.GoalEnd, false},
		{fmt.Sprintf("history (%d step%s)", v.Steps, plural(v.Steps)), v.GoalEnd, total, true},
	}
	injAt := map[int]core.Injected{}
	for _, in := range resp.Injected {
		injAt[in.MessageIndex] = in
	}
	for _, seg := range segments {
		writeSegment(w, resp, seg, injAt)
	}
	fmt.Fprintf(w, "\ntotal: %s chars in %d messages\n", group(resp.PromptChars), total)
	writeBudget(w, resp, v.MaxPromptChars)
	d := resp.PrefixDigests
	fmt.Fprintf(w, "prefix digests: run %s… injections %s… goal %s…\n", d.Run[:16], d.Injections[:16], d.Goal[:16])
	return nil
}

// segment is one segment of the prompt: messages from to to (exclusive);
// the history's are steps, two messages each.
type segment struct {
	title    string
	from, to int
	history  bool
}

// writeSegment writes the segment's title line and its messages.
func writeSegment(w *bufio.Writer, resp *core.Response, seg segment, injAt map[int]core.Injected) {
	var chars int64
	for _, c := range resp.MessageChars[seg.from:seg.to] {
		chars += c
	}
	n := seg.to - seg.from
	fmt.Fprintf(w, "\n━━ %s · %d message%s · %s chars %s\n", seg.title, n, plural(n), group(chars), strings.Repeat("━", max(3, 40-len(seg.title))))
	for i := seg.from; i < seg.to; i++ {
		label := ""
		if in, ok := injAt[i]; ok {
			label = fmt.Sprintf(" · channel %s · entry %s", strconv.Quote(in.Channel), strconv.Quote(in.EntryID))
		} else if seg.history {
			label = fmt.Sprintf(" · step %d %s", (i-seg.from)/2, [2]string{"output", "observation"}[(i-seg.from)%2])
		}
		writeMessage(w, resp, i, label)
	}
}

// writeMessage writes message i: its head line and its blocks' lines.
func writeMessage(w *bufio.Writer, resp *core.Response, i int, label string) {
	m := resp.Messages[i]
	fmt.Fprintf(w, "[%d] %s%s · %s chars\n", i, visible(m.Role), label, group(resp.MessageChars[i]))
	for j, b := range m.Content {
		if len(m.Content) > 1 {
			fmt.Fprintf(w, "    ┄ block %d (%s)\n", j, b.Type)
		}
		for _, line := range strings.Split(b.Text, "\n") {
			fmt.Fprintf(w, "    │ %s\n", visible(line))
		}
	}
}

// writeBudget writes the budget line: none, the share used, or the overflow.
func writeBudget(w *bufio.Writer, resp *core.Response, budget *int64) {
	if budget == nil {
		fmt.Fprintf(w, "budget: none (max_prompt_chars not set)\n")
		return
	}
	b := *budget
	pct := 0.0
	if b > 0 {
		pct = 100 * float64(resp.PromptChars) / float64(b)
	}
	if resp.ContextOverflow {
		fmt.Fprintf(w, "budget: %s chars · CONTEXT OVERFLOW by %s chars (%.1f%%)\n", group(b), group(resp.PromptChars-b), pct)
	} else {
		fmt.Fprintf(w, "budget: %s chars · %.1f%% used · %s left\n", group(b), pct, group(b-resp.PromptChars))
	}
}

// visible makes invisible characters visible, so that a message cannot
// drive the terminal that shows it (clear the screen, set the window title,
// write the clipboard with OSC 52, or hide a line behind a carriage return)
// nor hide or reorder text from its reader (bidi controls, zero-width
// characters, a byte-order mark, spaces that look like a space, tag
// characters that spell instructions no one sees). A C0 character is shown
// as cat -A shows it, ^ and a letter (ESC ^[, CR ^M, tab ^I, NUL ^@), DEL as
// ^?, a run of tag characters spelling ASCII as <hidden text: "…">, every
// other character of abi.InvisibleRanges (the set the JavaScript preview
// marks too, docs/SPEC.md §7.8) as <U+202E>. Newline is layout and stays;
// the caller splits lines at newlines. Like cat -A, the view is for
// reading: a literal "^[" in the text looks the same as an escaped ESC
// (--out json is exact).
func visible(s string) string {
	clean := true
	for _, c := range s {
		if isControl(c) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	var tags []byte
	for _, c := range s {
		if t, ok := abi.TagText(c); ok {
			tags = append(tags, t)
			continue
		}
		if tags != nil {
			fmt.Fprintf(&b, "<hidden text: %s>", strconv.Quote(string(tags)))
			tags = nil
		}
		switch {
		case !isControl(c):
			b.WriteRune(c)
		case c == 0x7f:
			b.WriteString("^?")
		case c < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(c) + '@')
		default:
			fmt.Fprintf(&b, "<U+%04X>", c)
		}
	}
	if tags != nil {
		fmt.Fprintf(&b, "<hidden text: %s>", strconv.Quote(string(tags)))
	}
	return b.String()
}

func isControl(c rune) bool {
	return abi.Invisible(c)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// group writes n with thousands separators: 12,345.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
