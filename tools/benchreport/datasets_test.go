package main

import (
	"strings"
	"testing"
)

// The data-set goal lines from hand-made figures, each verdict worked out
// here by hand: rows/s = rows / seconds, a way against its serial pair.
func TestDataSetGoals(t *testing.T) {
	rep := &Report{Skipped: map[string]string{}}
	rep.DataSets = &DataSets{
		Rows: 40000,
		Ways: []DataWay{
			// 10,000 rows/s against 8,000: 1.25×, met.
			{Way: "assemble_json_many, workers=2", Cores: 2, Serial: "assemble_json_many, workers=1", Rows: 40000, Seconds: 4, CPUSeconds: 4, SerialSecs: 5, SerialCPUSec: 5},
			// 4,444 rows/s against 5,000: 0.89×, one process, goal 0.8×: met.
			{Way: "datasets map(RenderBatch), num_proc=1 (x)", Cores: 1, Serial: "render_columns", Rows: 40000, Seconds: 9, CPUSeconds: 9, SerialSecs: 8, SerialCPUSec: 8},
			// 4,000 rows/s against 8,000: 0.50×, missed.
			{Way: "datasets map(RenderBatch), num_proc=2 (x)", Cores: 2, Serial: "render_columns", Rows: 40000, Seconds: 10, CPUSeconds: 16, SerialSecs: 5, SerialCPUSec: 8},
		},
		Identity: map[string]DataFloor{"datasets": {Seconds: 2}},
		Skipped:  map[string]string{"Ray": "failed: RaySystemError: x"},
		Runs:     &DataRuns{Runs: 10, Calls: 300, Rows: 11, Render: []float64{1, 1, 1}, RunRows: []float64{3, 3, 3}, RunRowsBatch: []float64{0.5, 1, 2}},
		Messages: &MessageReads{Steps: 4000, Window: 20, At10: []float64{1e-6, 2e-6}, AtN: []float64{1.1e-6, 2.2e-6}},
	}
	dataSetGoals(rep)
	want := []struct {
		prefix, reached string
		met             bool
	}{
		{"data set, 40,000 rows: assemble_json_many", "1.25× (10,000 rows/s vs 8,000", true},
		{"data set, 40,000 rows: assemble_bytes_many", "not measured: no figure from", false},
		{"data set, 40,000 rows: datasets map(RenderBatch), num_proc=1", "0.89× (4,444 rows/s vs 5,000", true},
		{"data set, 40,000 rows: datasets map(RenderBatch), num_proc=2", "0.50× (4,000 rows/s vs 8,000, render_columns); per core 0.25×, per CPU-second 0.50×", false},
		{"data set, 40,000 rows: Ray", "not measured: failed: RaySystemError: x", false},
		{"runs → rows (data.run_rows), 300 calls of 10 runs → 11 rows", "0.33× (rounds 0.33 – 0.33; 100 calls/s vs 300)", false},
		// by round 1/0.5, 1/1, 1/2: median 1.00×, rounds 0.50 – 2.00
		{"runs → rows (RunRows, one batch of columns → Arrow), 300 calls", "1.00× (rounds 0.50 – 2.00; 300 calls/s vs 300)", true},
		{"Prompt.messages read after each of 4,000 steps", "1.10 (rounds 1.10 – 1.10", true},
		{"prompt.messages read after each of 4,000 steps", "not measured", false},
	}
	if len(rep.Goals) != len(want) {
		t.Fatalf("%d goal lines, want %d: %+v", len(rep.Goals), len(want), rep.Goals)
	}
	for i, w := range want {
		g := rep.Goals[i]
		if !strings.HasPrefix(g.Figure, w.prefix) || !strings.HasPrefix(g.Reached, w.reached) || g.Met != w.met {
			t.Errorf("line %d: %q %q met=%v, want %q… %q… met=%v", i, g.Figure, g.Reached, g.Met, w.prefix, w.reached, w.met)
		}
	}
	if !strings.Contains(rep.Goals[3].Reached, "the engine's floor, the same pipeline passing batches through: 20,000 rows/s (2.50× serial)") {
		t.Errorf("the datasets line gives no floor: %q", rep.Goals[3].Reached)
	}
}
