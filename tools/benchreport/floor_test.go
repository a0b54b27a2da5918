package main

import "testing"

// The floor beside a goal line, worked out here by hand: per round, the
// parts summed (a "-" part subtracted) over the base, then the median.
func TestFloor(t *testing.T) {
	row := func(engine string, samples ...float64) Row {
		return Row{Host: "Node", Engine: engine, Request: "1MB", Time: Stat{Samples: samples}}
	}
	rep := &Report{Assemble: []Row{
		row("Node, assembleBytes(Uint8Array)", 1, 2, 4),
		row("Node, floor part: a", 1, 1, 1),
		row("Node, floor part: b", 1, 2, 2),
		row("Node, floor part (subtracted): c", 0.5, 1, 1),
	}}
	g := goalTable{rep}
	base := g.find("Node", "assembleBytes", "1MB")
	// Rounds: (1+1-0.5)/1 = 1.5, (1+2-1)/2 = 1, (1+2-1)/4 = 0.5.
	got := g.floor(base, "Node", "1MB", "floor", "floor part: a", "floor part: b", "-floor part (subtracted): c")
	if want := "; floor: 1.00× (rounds 0.50 – 1.50)"; got != want {
		t.Errorf("floor = %q, want %q", got, want)
	}
	if got := g.floor(base, "Node", "1MB", "floor", "floor part: a", "floor part: missing"); got != "" {
		t.Errorf("a part not measured: %q, want none", got)
	}
	rep.Assemble[1].Time.Samples = []float64{1, 1}
	if got := g.floor(base, "Node", "1MB", "floor", "floor part: a"); got != "" {
		t.Errorf("rounds that do not pair: %q, want none", got)
	}
}
