package core_test

import (
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/hostvec"
	"github.com/polyloop/assembly/internal/testing/vectors"
)

// The prompt vectors (testdata/prompt-vectors) on the native core.Prompt.
func TestPromptVectors(t *testing.T) {
	cases, err := vectors.LoadPrompts("../testdata/prompt-vectors/prompts.json")
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for _, c := range cases {
		if err := hostvec.RunPrompt(c, core.NewPrompt); err != nil {
			t.Error(err)
		}
		steps += len(c.Steps)
	}
	t.Logf("%d prompt vectors, %d steps", len(cases), steps)
}
