package main

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/polyloop/assembly/core"
)

// writeText writes the view for people: the segments with their boundaries,
// each message's role and size, the total and the budget line.
func writeText(w *bufio.Writer, reqBytes, respBytes []byte, engine string) error {
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
	req, err := core.DecodeRequest(reqBytes)
	if err != nil {
		return fmt.Errorf("the request of an ok response does not decode: %w", err)
	}
	nRun, nGoal := len(req.RunMessages), len(req.GoalMessages)
	nInj := len(resp.Injected)
	total := len(resp.Messages)
	fmt.Fprintf(w, "assembled by the %s engine: %d messages, %s chars\n", engine, total, group(resp.PromptChars))

	injAt := map[int]core.Injected{}
	for _, in := range resp.Injected {
		injAt[in.MessageIndex] = in
	}
	segment := func(title string, n int, chars int64) {
		fmt.Fprintf(w, "\n━━ %s · %d message%s · %s chars %s\n", title, n, plural(n), group(chars), strings.Repeat("━", max(3, 40-len(title))))
	}
	sum := func(from, to int) int64 {
		var s int64
		for _, c := range resp.MessageChars[from:to] {
			s += c
		}
		return s
	}
	bounds := []struct {
		title    string
		from, to int
	}{
		{"run", 0, nRun},
		{"injections", nRun, nRun + nInj},
		{"goal", nRun + nInj, nRun + nInj + nGoal},
		{fmt.Sprintf("history (%d step%s)", (total-nRun-nInj-nGoal)/2, plural((total-nRun-nInj-nGoal)/2)), nRun + nInj + nGoal, total},
	}
	for _, seg := range bounds {
		segment(seg.title, seg.to-seg.from, sum(seg.from, seg.to))
		for i := seg.from; i < seg.to; i++ {
			m := resp.Messages[i]
			label := ""
			if in, ok := injAt[i]; ok {
				label = fmt.Sprintf(" · channel %s · entry %s", strconv.Quote(in.Channel), strconv.Quote(in.EntryID))
			} else if seg.title != "run" && seg.title != "goal" && i >= seg.from {
				step := (i - seg.from) / 2
				if (i-seg.from)%2 == 0 {
					label = fmt.Sprintf(" · step %d output", step)
				} else {
					label = fmt.Sprintf(" · step %d observation", step)
				}
			}
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
	}
	fmt.Fprintf(w, "\ntotal: %s chars in %d messages\n", group(resp.PromptChars), total)
	if req.MaxPromptChars == nil {
		fmt.Fprintf(w, "budget: none (max_prompt_chars not set)\n")
	} else {
		b := *req.MaxPromptChars
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
	d := resp.PrefixDigests
	fmt.Fprintf(w, "prefix digests: run %s… injections %s… goal %s…\n", d.Run[:16], d.Injections[:16], d.Goal[:16])
	return nil
}

// visible makes control characters visible, as cat -v and less do, so that
// a message cannot drive the terminal that shows it (clear the screen, set
// the window title, write the clipboard with OSC 52, or hide a line behind a
// carriage return): a C0 character is shown as ^ and a letter (ESC ^[,
// CR ^M, NUL ^@), DEL as ^?, a C1 character (U+0080 to U+009F) as <U+009B>.
// Newline and tab are layout and stay; the caller splits lines at newlines.
// Like cat -v, the view is for reading: a literal "^[" in the text looks the
// same as an escaped ESC (--out json is exact).
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
	for _, c := range s {
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
	return b.String()
}

func isControl(c rune) bool {
	return c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f && c <= 0x9f
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
