package main

import (
	"fmt"
	"os"
	"slices"
)

// The pool's lines (issue 44): threads sharing a Python Assembler of one
// instance, by bindings/python/bench/pool_bench.py. Each round runs 1, 2 and
// 8 threads one right after the other, on this pool and on the pool before
// it served waiting threads in turn (read from git): the throughput of N
// threads is taken over the old pool's with N threads in the same round
// (the issue: "throughput no lower than today's").

// poolFigures is pool_bench.py's JSON: per thread count, one value per round.
type poolFigures struct {
	Threads []struct {
		Threads            int       `json:"threads"`
		SlowestOverFastest []float64 `json:"slowest_over_fastest"`
		LongestCall        []float64 `json:"longest_call_s"`
		OverBefore         []float64 `json:"over_before"`
	} `json:"threads"`
	Before string `json:"before"`
}

// rounds3 is [min, median, max] of a round's values.
func rounds3(v []float64) [3]float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return [3]float64{s[0], s[len(s)/2], s[len(s)-1]}
}

// measurePool adds the pool's goals for Python.
func measurePool(rep *Report, p plan, python string) {
	var f poolFigures
	fmt.Fprintln(os.Stderr, "benchreport: the pool's turns (bindings/python/bench/pool_bench.py)")
	ok := python != ""
	if !ok {
		rep.Skipped["pool, Python"] = "no interpreter given"
	} else if err := runJSON(python, []string{"bindings/python/bench/pool_bench.py", "--json"}, p.Quick, &f); err != nil {
		rep.Skipped["pool, Python"] = err.Error()
		ok = false
	}
	g := goalTable{rep}
	for _, t := range f.Threads {
		if t.Threads == 1 || len(t.SlowestOverFastest) == 0 {
			continue
		}
		fair, worst := rounds3(t.SlowestOverFastest), rounds3(t.LongestCall)
		who := fmt.Sprintf("Python, %d threads sharing 1 instance", t.Threads)
		g.add(who+": calls of the slowest thread / the fastest's", "≥ 0.25 in every round", ok,
			func() string { return fmt.Sprintf("%.2f (rounds %.2f – %.2f)", fair[1], fair[0], fair[2]) }, fair[0] >= 0.25)
		g.add(who+": the longest call, its wait included", "≤ 1 s in every round", ok,
			func() string { return fmt.Sprintf("%.3f s (rounds %.3f – %.3f)", worst[1], worst[0], worst[2]) }, worst[2] <= 1)
		has := ok && len(t.OverBefore) > 0
		rate := [3]float64{}
		if has {
			rate = rounds3(t.OverBefore)
		} else if ok {
			rep.Skipped["pool, Python, before the turns"] = "pool_bench.py found no git history (the pool at 2b3d9af^)"
		}
		g.add(who+": calls/s vs the pool before the turns ("+f.Before+"), same round", "≥ 0.95× (no lower, within noise)", has,
			func() string { return fmt.Sprintf("%.2f× (rounds %.2f – %.2f)", rate[1], rate[0], rate[2]) }, rate[1] >= 0.95)
	}
	if ok && len(f.Threads) == 0 {
		rep.Skipped["pool, Python"] = "pool_bench.py wrote no rows"
	}
}
