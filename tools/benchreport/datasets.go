package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// The data-set figures of issue 34 (docs/DATASETS.md), from one run of
// bindings/python/bench/data_bench.py --json and bindings/js/bench/messages.mjs
// --json: each data-set way at 40,000 rows between two runs of the serial binding
// doing the same work, the engines' identity pipelines, runs into rows
// against rendering the same calls, and the reads of a prompt's messages
// after each of 4,000 steps. make bench.quick measures the ways at 5,000
// rows without datasets and Ray (their start-up alone exceeds its minute).

// DataSets is what data_bench.py --json writes, with the Node reads beside.
type DataSets struct {
	Quick         bool                 `json:"quick"`
	Rows          int                  `json:"rows"`
	Ways          []DataWay            `json:"ways"`
	Identity      map[string]DataFloor `json:"identity"`
	Skipped       map[string]string    `json:"skipped"`
	Versions      map[string]string    `json:"versions"`
	ControlBefore *DataControl         `json:"control_before"`
	ControlAfter  *DataControl         `json:"control_after"`
	RayInit       float64              `json:"ray_init_seconds,omitempty"`
	Runs          *DataRuns            `json:"runs"`
	Messages      *MessageReads        `json:"messages"`
	NodeMessages  *MessageReads        `json:"node_messages,omitempty"`
	LoadAvg       []float64            `json:"loadavg"`
	Failed        map[string]string    `json:"failed,omitempty"` // a script that did not run: why
}

// DataWay is one way at Rows rows, and its serial pair: the faster of two
// runs, right before the way and right after it.
type DataWay struct {
	Way          string  `json:"way"`
	Cores        int     `json:"cores"`
	Serial       string  `json:"serial"`
	Rows         int     `json:"rows"`
	Seconds      float64 `json:"seconds"`
	CPUSeconds   float64 `json:"cpu_seconds"`
	SerialSecs   float64 `json:"serial_seconds"`
	SerialCPUSec float64 `json:"serial_cpu_seconds"`
}

// DataFloor is an engine's pipeline passing its batches through.
type DataFloor struct {
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
}

// DataControl is plain CPU work in 2 processes against 1: what the machine lent.
type DataControl struct {
	One  float64 `json:"one_s"`
	Two  float64 `json:"two_s"`
	Gain float64 `json:"gain"`
}

// DataRuns is runs into rows against rendering the same calls, round by round.
type DataRuns struct {
	Runs    int       `json:"runs"`
	Calls   int       `json:"calls"`
	Rows    int       `json:"rows"`
	Render  []float64 `json:"render_s"`
	RunRows []float64 `json:"run_rows_s"`
	// RunRowsBatch is RunRows on all the calls as one batch of columns.
	RunRowsBatch []float64 `json:"run_rows_batch_s"`
}

// MessageReads is the read of a prompt's messages after each step, per
// round: the median over the first Window steps and over the last.
type MessageReads struct {
	Steps  int       `json:"steps"`
	Window int       `json:"window"`
	At10   []float64 `json:"step_10_s"`
	AtN    []float64 `json:"step_n_s"`
}

// rowsPerS is the way's rows per second and its serial pair's.
func (w DataWay) rowsPerS() (way, serial float64) {
	return float64(w.Rows) / w.Seconds, float64(w.Rows) / w.SerialSecs
}

// measureDataSets runs the two scripts and adds the goals of issue 34's
// data-set figures; a script that cannot run leaves its lines "not measured".
func measureDataSets(rep *Report, p plan, python, node string) {
	d := &DataSets{Failed: map[string]string{}}
	if python == "" {
		d.Failed["Python"] = "no -python interpreter given"
	} else {
		fmt.Fprintln(os.Stderr, "benchreport: data sets (bindings/python/bench/data_bench.py --json)")
		args := []string{"bindings/python/bench/data_bench.py", "--json"}
		if err := runJSON(python, args, p.Quick, d); err != nil {
			d.Failed["Python"] = err.Error()
		}
	}
	if node == "" {
		d.Failed["Node"] = "no -node executable given"
	} else {
		fmt.Fprintln(os.Stderr, "benchreport: prompt.messages reads (bindings/js/bench/messages.mjs --json)")
		rounds := "9"
		if p.Quick {
			rounds = "5"
		}
		var m MessageReads
		if err := runJSON(node, []string{"bindings/js/bench/messages.mjs", "--rounds", rounds, "--json"}, false, &m); err != nil {
			d.Failed["Node"] = err.Error()
		} else {
			d.NodeMessages = &m
		}
	}
	d.Quick = p.Quick
	rep.DataSets = d
	for k, v := range d.Failed {
		rep.Skipped["data sets, "+k] = v
	}
	dataSetGoals(rep)
}

// runJSON runs exe with args and a temporary file's path after them
// (then --quick if quick), and reads that file's JSON into v.
func runJSON(exe string, args []string, quick bool, v any) error {
	f, err := os.CreateTemp("", "benchreport-data-*.json")
	if err != nil {
		return err
	}
	f.Close()
	defer os.Remove(f.Name())
	args = append(args, f.Name())
	if quick {
		args = append(args, "--quick")
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s failed: %v", exe, strings.Join(args, " "), err)
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s wrote unreadable JSON: %v", args[0], err)
	}
	return nil
}

// dataWays are the ways of the goal, in order: the prefix of the way's
// name, its label, the key of data_bench.py's skipped map that says why it
// may be missing, and its goal (rows/s over its serial pair's).
var dataWays = []struct {
	prefix, label, skipKey string
	goal                   float64
}{
	{"assemble_json_many", "assemble_json_many, 2 workers", "", 1},
	{"assemble_bytes_many", "assemble_bytes_many, 2 workers (msgpack)", "", 1},
	{"datasets map(RenderBatch), num_proc=1", "datasets map(RenderBatch), num_proc=1", "datasets", 0.8},
	{"datasets map(RenderBatch), num_proc=2", "datasets map(RenderBatch), num_proc=2", "datasets", 1},
	{"Ray map_batches(RenderBatch)", "Ray map_batches(RenderBatch), 2 actors × 0.5 CPU", "Ray", 1},
}

// dataSetGoals adds the goal lines: each way against its serial pair, runs
// into rows, and the reads of the messages in Python and Node.
func dataSetGoals(rep *Report) {
	d := rep.DataSets
	g := goalTable{rep}
	for _, dw := range dataWays {
		var w *DataWay
		for i := range d.Ways {
			if strings.HasPrefix(d.Ways[i].Way, dw.prefix) {
				w = &d.Ways[i]
			}
		}
		figure := fmt.Sprintf("data set, %s rows: %s vs the serial binding", groupInt(max(d.Rows, 40000)), dw.label)
		goal := "≥ 1× the serial rows/s (2 cores)"
		if dw.goal != 1 {
			goal = fmt.Sprintf("≥ %.1f× the serial rows/s (1 process)", dw.goal)
		}
		if w == nil || w.Seconds <= 0 || w.SerialSecs <= 0 {
			g.add(figure, goal, true, func() string { return "not measured: " + d.why(dw.skipKey) }, false)
			continue
		}
		figure = fmt.Sprintf("data set, %s rows: %s vs the serial binding", groupInt(w.Rows), dw.label)
		way, serial := w.rowsPerS()
		g.add(figure, goal, true, func() string { return d.reached(w, dw.skipKey) }, way >= dw.goal*serial)
	}
	for _, way := range []struct {
		name string
		of   func(*DataRuns) []float64
	}{
		{"data.run_rows", func(r *DataRuns) []float64 { return r.RunRows }},
		{"RunRows, one batch of columns → Arrow", func(r *DataRuns) []float64 { return r.RunRowsBatch }},
	} {
		runsGoal(g, d.Runs, way.name, way.of)
	}
	for _, h := range []struct {
		host, what string
		m          *MessageReads
	}{{"Python", "Prompt.messages", d.Messages}, {"Node", "prompt.messages", d.NodeMessages}} {
		m := h.m
		ok := m != nil && len(m.At10) > 0 && len(m.At10) == len(m.AtN)
		var r [3]float64
		if ok {
			r[0], r[1], r[2], ok = paired(m.AtN, m.At10)
		}
		n := "4,000"
		if m != nil {
			n = groupInt(m.Steps)
		}
		g.add(fmt.Sprintf("%s read after each of %s steps, step %s / step 10, %s", h.what, n, n, h.host), "≤ 1.2", ok, func() string {
			return fmt.Sprintf("%.2f (rounds %.2f – %.2f; %.2f µs vs %.2f µs, medians of steps 1–%d and the last %d)",
				r[0], r[1], r[2], median(m.AtN)*1e6, median(m.At10)*1e6, m.Window, m.Window)
		}, ok && r[0] <= 1.2)
	}
}

// runsGoal is the line of one way of turning runs into rows against
// rendering the same calls, round by round.
func runsGoal(g goalTable, runs *DataRuns, name string, of func(*DataRuns) []float64) {
	figure := fmt.Sprintf("runs → rows (%s) vs rendering the same calls, Python", name)
	var times []float64
	if runs != nil {
		times = of(runs)
		figure = fmt.Sprintf("runs → rows (%s), %s calls of %s runs → %s rows, vs rendering the same calls, Python",
			name, groupInt(runs.Calls), groupInt(runs.Runs), groupInt(runs.Rows))
	}
	var rate [3]float64 // render time / the way's: its calls/s over rendering's, by round
	ok := runs != nil && len(times) > 0
	if ok {
		rate[0], rate[1], rate[2], ok = paired(runs.Render, times)
	}
	g.add(figure, "≥ 0.5×", ok, func() string {
		return fmt.Sprintf("%.2f× (rounds %.2f – %.2f; %s calls/s vs %s)", rate[0], rate[1], rate[2],
			groupInt(int(float64(runs.Calls)/median(times))), groupInt(int(float64(runs.Calls)/median(runs.Render))))
	}, ok && rate[0] >= 0.5)
}

// why a way is missing: data_bench.py's reason, or the script's failure.
func (d *DataSets) why(key string) string {
	if d.Quick && key != "" {
		if s, ok := d.Skipped["datasets and Ray"]; ok {
			return s
		}
	}
	if s, ok := d.Skipped[key]; ok && key != "" {
		return s
	}
	if s, ok := d.Failed["Python"]; ok {
		return s
	}
	return "no figure from bindings/python/bench/data_bench.py --json"
}

// reached is a way's line: its rows/s over its serial pair's, per core,
// per CPU-second, what the machine lent, and the engine's floor.
func (d *DataSets) reached(w *DataWay, engine string) string {
	way, serial := w.rowsPerS()
	s := fmt.Sprintf("%.2f× (%s rows/s vs %s, %s); per core %.2f×, per CPU-second %.2f×", way/serial,
		groupInt(int(way)), groupInt(int(serial)), w.Serial, way/serial/float64(w.Cores), w.SerialCPUSec/w.CPUSeconds)
	if w.Cores > 1 && d.ControlBefore != nil && d.ControlAfter != nil {
		s += fmt.Sprintf("; plain CPU work gained %.2f× / %.2f× in 2 processes (start / end of the run)", d.ControlBefore.Gain, d.ControlAfter.Gain)
	}
	if f, ok := d.Identity[engine]; ok && f.Seconds > 0 && w.Cores > 1 { // the floor of 2 processes
		floor := float64(w.Rows) / f.Seconds
		s += fmt.Sprintf("; the engine's floor, the same pipeline passing batches through: %s rows/s (%.2f× serial)", groupInt(int(floor)), floor/serial)
		if engine == "Ray" && d.RayInit > 0 {
			s += fmt.Sprintf(", ray.init %.1f s not counted", d.RayInit)
		}
	}
	return s
}

// median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// mdDataSets is the data-set ways side by side, if measured.
func mdDataSets(w mdWriter, rep *Report) {
	d := rep.DataSets
	if d == nil || len(d.Ways) == 0 {
		return
	}
	w("## Data sets (Python, %s rows)\n\n", groupInt(d.Rows))
	w("The generated trajectories of examples/datasets/trajectories.py (0–12 steps, ~2.1 KB of JSON a line, one in eight invalid), one run of bindings/python/bench/data_bench.py --json. Each way runs between two runs of its serial pair (the serial binding doing the same work: the same call with 1 worker, or data.render_columns for the rows RenderBatch writes), the faster of the two counting, so that both meet the same load and a burst on the serial side does not flatter the way; the datasets and Ray ways read the JSON-lines file and write Parquet as examples/datasets/render.py does, the serial pair renders the lines held in memory. Per core is rows/s ÷ cores ÷ the serial pair's; per CPU-second counts the CPU time of every process of the way. The identity pipeline is the same pipeline passing its batches through: the engine's floor.\n\n")
	w("| way | cores | rows/s | serial pair | serial rows/s | × serial | per core | per CPU-second |\n|---|---|---|---|---|---|---|---|\n")
	for _, x := range d.Ways {
		if x.Seconds <= 0 || x.SerialSecs <= 0 || x.CPUSeconds <= 0 {
			continue
		}
		way, serial := x.rowsPerS()
		w("| %s | %d | %s | %s | %s | %.2f× | %.2f× | %.2f× |\n", x.Way, x.Cores, groupInt(int(way)), x.Serial, groupInt(int(serial)),
			way/serial, way/serial/float64(x.Cores), x.SerialCPUSec/x.CPUSeconds)
	}
	for _, k := range []string{"datasets", "Ray"} {
		if f, ok := d.Identity[k]; ok && f.Seconds > 0 {
			w("| %s identity pipeline (the floor) | 2 | %s | — | — | — | — | — |\n", k, groupInt(int(float64(d.Rows)/f.Seconds)))
		}
	}
	w("\n")
	if d.ControlBefore != nil && d.ControlAfter != nil {
		w("Control: plain CPU work in 2 processes gained %.2f× over 1 at the start of the run, %.2f× at its end (2.00 on two idle cores).", d.ControlBefore.Gain, d.ControlAfter.Gain)
	}
	if d.RayInit > 0 {
		w(" ray.init: %.1f s, not counted.", d.RayInit)
	}
	if len(d.LoadAvg) > 0 {
		w(" Load average at the end: %.2f.", d.LoadAvg[0])
	}
	w("\n\n")
}
