// Package benchreq builds the benchmark requests every host measures: tiny
// (about 250 bytes), typical (a ReAct request with 20 steps), and requests of
// 1 MB and 16 MB. They are deterministic; `go run ./internal/testing/benchreq/gen DIR`
// writes them as msgpack files for the Python and JavaScript benchmarks.
package benchreq

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/wirejson"
)

// Template is the ReAct observation template of the examples.
const Template = "Output:\n```\n{observation}\n```\n\n"

// Tiny is a request of about 250 bytes: one run message, one injection, a
// goal and one step.
func Tiny() *core.Request {
	budget := int64(4000)
	return &core.Request{
		RunMessages:         []core.Message{{Role: "system", Content: []core.Block{{Type: "text", Text: "You are a shell agent."}}}},
		Injections:          map[string][]core.Injection{"skills": {{EntryID: "s1", Content: "Use ls before cat."}}},
		GoalMessages:        []core.Message{{Role: "user", Content: []core.Block{{Type: "text", Text: "Count the files in /data."}}}},
		Steps:               []core.Step{{RawOutput: "```bash\nls /data | wc -l\n```", Observation: "42"}},
		ObservationTemplate: Template,
		MaxPromptChars:      &budget,
	}
}

func text(s string) []core.Block { return []core.Block{{Type: "text", Text: s}} }

// step returns a realistic step of about size bytes: a thought and a command,
// and an observation of shell output with some non-ASCII text.
func step(i, size int) core.Step {
	raw := fmt.Sprintf("Thought: step %d, inspect the next file.\n```bash\ngrep -n 'total' /data/part-%03d.csv | head -40\n```", i, i)
	var obs strings.Builder
	for line := 0; obs.Len() < size-len(raw); line++ {
		fmt.Fprintf(&obs, "%d:2025-%02d-%02d,région-%d,\"Nord, Est\",%d.%02d € ✓\n", line+1, line%12+1, line%28+1, line%7, 1000+i*line%9000, line%100)
	}
	return core.Step{RawOutput: raw, Observation: obs.String()}
}

// React returns a ReAct request with a role description, two demos, two
// injection channels, a goal and n steps of about stepSize bytes.
func React(n, stepSize int) *core.Request {
	budget := int64(200_000)
	req := &core.Request{
		RunMessages: []core.Message{
			{Role: "user", Content: text("You are a careful software agent in a Linux shell. Think in a line starting with 'Thought:', then give one command in a ```bash block. Run `submit ANSWER` when done.")},
			{Role: "user", Content: text("Task: How many lines does /etc/hostname have?")},
			{Role: "assistant", Content: text("Thought: wc counts lines.\n```bash\nwc -l /etc/hostname\n```")},
			{Role: "user", Content: text("Output:\n```\n1 /etc/hostname\n```\n\n")},
			{Role: "assistant", Content: text("Thought: done.\n```bash\nsubmit 1\n```")},
		},
		Injections: map[string][]core.Injection{
			"skills": {
				{EntryID: "skill/csv@1", Content: "CSV fields may contain commas inside quotes; use the csv module."},
				{EntryID: "skill/grep@2", Content: "grep -n prints line numbers; combine with head to keep output short."},
			},
			"hints": {{EntryID: "hint/42", Content: "The data files are small; print one whole before scripting."}},
		},
		GoalMessages:        []core.Message{{Role: "user", Content: text("Task: Which region had the highest total revenue in 2025?")}},
		ObservationTemplate: Template,
		MaxPromptChars:      &budget,
	}
	for i := range n {
		req.Steps = append(req.Steps, step(i, stepSize))
	}
	return req
}

// Typical is the 20-step ReAct request (about 12 KB).
func Typical() *core.Request { return React(20, 600) }

// Sized returns a ReAct request of at least size bytes on the wire, made of
// 1 KB steps.
func Sized(size int) *core.Request {
	req := React(0, 1024)
	base := len(core.EncodeRequest(req))
	n := (size - base + 1023) / 1024
	for i := range n {
		req.Steps = append(req.Steps, step(i, 1024))
	}
	for len(core.EncodeRequest(req)) < size {
		req.Steps = append(req.Steps, step(len(req.Steps), 1024))
	}
	return req
}

// Set is the named benchmark requests, in the order every table shows them.
func Set() []Named {
	return []Named{
		{"tiny", Tiny()},
		{"typical", Typical()},
		{"1MB", Sized(1 << 20)},
		{"16MB", Sized(16 << 20)},
	}
}

// Named is a benchmark request with its name.
type Named struct {
	Name    string
	Request *core.Request
}

// JSONText is r as JSON text indented by two spaces, as the preview's editor
// holds a request (the JSON-text benchmarks of assemble_json).
func JSONText(r *core.Request) []byte {
	compact, _, err := wirejson.FromMsgpack(nil, core.EncodeRequest(r))
	if err != nil {
		panic("benchreq: " + err.Error()) // an encoded request is always valid msgpack
	}
	var text bytes.Buffer
	if err := json.Indent(&text, compact, "", "  "); err != nil {
		panic("benchreq: " + err.Error())
	}
	return text.Bytes()
}
