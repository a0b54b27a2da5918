package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// PreviewRow is one request of the prompt preview's Chromium benchmark
// (preview/bench/preview.mjs): a one-character edit in the editor until
// its result is painted, and the longest main-thread task meanwhile.
type PreviewRow struct {
	Name         string    `json:"name"`
	Bytes        int       `json:"bytes"`
	EditMs       []float64 `json:"edit_ms"`
	MedianMs     float64   `json:"median_ms"`
	LongestTask  float64   `json:"longest_task_ms"`
	LongTasks    int       `json:"long_tasks"`
	State        string    `json:"state"`
	WorkerMedian float64   `json:"worker_median_ms,omitempty"`
}

// Preview is what bench/preview.mjs --json writes.
type Preview struct {
	LoadStart float64      `json:"loadavg_start"`
	LoadEnd   float64      `json:"loadavg_end"`
	Sizes     []PreviewRow `json:"sizes"`
	Load      struct {
		Ms       []float64 `json:"ms"`
		MedianMs float64   `json:"median_ms"`
	} `json:"load"`
	Paths *PreviewPaths `json:"paths,omitempty"`
}

// PreviewFigure is one path of preview/bench/preview-paths.mjs: every sample, the
// median and the spread.
type PreviewFigure struct {
	Ms       []float64 `json:"ms"`
	MedianMs float64   `json:"median_ms"`
	MinMs    float64   `json:"min_ms"`
	MaxMs    float64   `json:"max_ms"`
	Elements int       `json:"elements,omitempty"`
	Workers  int       `json:"workers,omitempty"`
	// The main thread's long tasks (over 50 ms) seen while the path ran
	// (preview/bench/preview-longtasks.mjs), and the longest.
	LongTasks     int     `json:"long_tasks,omitempty"`
	LongTaskMaxMs float64 `json:"long_task_max_ms,omitempty"`
}

// PreviewPaths are the paths a person takes that the keystroke budget does
// not cover (preview/bench/preview-paths.mjs).
type PreviewPaths struct {
	OpenFile  *PreviewFigure `json:"open_file"`
	OpenJSONL *PreviewFigure `json:"open_jsonl"`
	Elements  *PreviewFigure `json:"elements"`
	ColdLoad  *PreviewFigure `json:"cold_load"`
	Search    *PreviewFigure `json:"search"`
	StepEdit  *PreviewFigure `json:"step_edit"`
	// Never frozen (preview/bench/preview-longtasks.mjs): with their long tasks.
	Keystroke5MB  *PreviewFigure `json:"keystroke_5mb"`
	OpenJSONL2000 *PreviewFigure `json:"open_jsonl_2000"`
	Report300     *PreviewFigure `json:"report_300"`
}

// pathGoals adds the budgets of the preview's paths (preview/bench/preview-paths.mjs)
// to the goals, each reached figure a median with its spread.
func pathGoals(rep *Report, goal func(figure, want, reached string, met bool)) {
	var p PreviewPaths
	if rep.Preview != nil && rep.Preview.Paths != nil {
		p = *rep.Preview.Paths
	}
	row := func(figure, want string, f *PreviewFigure, limit float64, extra func(*PreviewFigure) (string, bool)) {
		if f == nil || len(f.Ms) == 0 {
			goal(figure, want, "not measured", false)
			return
		}
		reached := fmt.Sprintf("%.0f ms (median of %d; spread %.0f–%.0f ms)", f.MedianMs, len(f.Ms), f.MinMs, f.MaxMs)
		met := f.MedianMs <= limit
		if extra != nil {
			note, ok := extra(f)
			reached += "; " + note
			met = met && ok
		}
		goal(figure, want, reached, met)
	}
	row("preview: open a 1,000-step × 1 KB file (file input) → painted", "≤ 100 ms", p.OpenFile, 100, nil)
	row("preview: cold page load (empty HTTP cache) → first prompt painted", "≤ 1 s", p.ColdLoad, 1000, nil)
	row("preview: open a 10,000-line JSONL → its list painted", "≤ 1 s", p.OpenJSONL, 1000, nil)
	row("preview: 100 elements on one page → all painted", "≤ 2 s, one worker", p.Elements, 2000, func(f *PreviewFigure) (string, bool) {
		return fmt.Sprintf("%d elements, %d worker(s)", f.Elements, f.Workers), f.Workers == 1
	})
	row("preview: search a 10,000-entry JSONL → list painted", "≤ 200 ms", p.Search, 200, nil)
	row("preview: edit in step mode, 1,000 steps × 1 KB → painted", "≤ 50 ms", p.StepEdit, 50, nil)
	// No main-thread task over 50 ms: Chromium reports a long task for each.
	noLong := func(f *PreviewFigure) (string, bool) {
		return fmt.Sprintf("%d long task(s), the longest %.0f ms", f.LongTasks, f.LongTaskMaxMs), f.LongTasks == 0
	}
	row("preview: keystroke with a 5 MB observation → painted in the editor", "≤ 50 ms, no task > 50 ms", p.Keystroke5MB, 50, noLong)
	row("preview: open a 2,000-line, 5 MB JSONL → its list painted", "≤ 1 s, no task > 50 ms while its report fills", p.OpenJSONL2000, 1000, noLong)
	row("preview: a 300-call run → its cache report filled and drawn", "≤ 1 s, no task > 50 ms", p.Report300, 1000, noLong)
}

// runPreview runs the preview benchmark in headless Chromium.
func runPreview(rep *Report, p plan, node string) error {
	var r Preview
	if err := runJSON(node, []string{"preview/bench/preview.mjs", "--json"}, p.Quick, &r); err != nil {
		return err
	}
	rep.Preview = &r
	return nil
}

// withPreview reads the report recorded in reportPath and puts the preview
// figures of previewPath (preview/bench/preview.mjs --json) in it, replacing any.
func withPreview(reportPath, previewPath string) (*Report, error) {
	var rep Report
	b, err := os.ReadFile(reportPath)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: %v", reportPath, err)
	}
	if b, err = os.ReadFile(previewPath); err != nil {
		return nil, err
	}
	var pr Preview
	if err := json.Unmarshal(b, &pr); err != nil {
		return nil, fmt.Errorf("%s: %v", previewPath, err)
	}
	rep.Preview = &pr
	goals := rep.Goals[:0]
	for _, g := range rep.Goals {
		if !strings.HasPrefix(g.Figure, "preview: ") {
			goals = append(goals, g)
		}
	}
	rep.Goals = goals
	delete(rep.Skipped, "Chromium preview")
	previewGoals(&rep)
	return &rep, nil
}

// previewGoals adds the prompt preview's budgets to the goals: edit →
// painted at 1,000 steps and at 16 MB, page load → first prompt painted.
func previewGoals(rep *Report) {
	row := func(prefix string) *PreviewRow {
		if rep.Preview == nil {
			return nil
		}
		for i := range rep.Preview.Sizes {
			if strings.HasPrefix(rep.Preview.Sizes[i].Name, prefix) {
				return &rep.Preview.Sizes[i]
			}
		}
		return nil
	}
	goal := func(figure, want, reached string, met bool) {
		rep.Goals = append(rep.Goals, Goal{figure, want, reached, met})
	}
	if r := row("1,000 steps"); r != nil {
		goal("preview: edit → painted, 1,000 steps × 1 KB", "≤ 50 ms", fmt.Sprintf("%.0f ms (median of %d)", r.MedianMs, len(r.EditMs)), r.MedianMs <= 50)
	} else {
		goal("preview: edit → painted, 1,000 steps × 1 KB", "≤ 50 ms", "not measured", false)
	}
	if r := row("16 MB"); r != nil {
		goal("preview: edit → painted, 16 MB request", "≤ 500 ms, no main-thread task over 50 ms",
			fmt.Sprintf("%.0f ms (median of %d); longest task %.0f ms, %d over 50 ms", r.MedianMs, len(r.EditMs), r.LongestTask, r.LongTasks),
			r.MedianMs <= 500 && r.LongTasks == 0)
	} else {
		goal("preview: edit → painted, 16 MB request", "≤ 500 ms, no main-thread task over 50 ms", "not measured", false)
	}
	if rep.Preview != nil && len(rep.Preview.Load.Ms) > 0 {
		l := rep.Preview.Load
		goal("preview: page load → first prompt painted (warm HTTP cache)", "≤ 300 ms", fmt.Sprintf("%.0f ms (median of %d)", l.MedianMs, len(l.Ms)), l.MedianMs <= 300)
	}
	pathGoals(rep, goal)
}

// previewMarkdown is the preview's section of BENCHMARKS.md.
func previewMarkdown(rep *Report) string {
	if rep.Preview == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Prompt preview in Chromium (preview/bench/preview.mjs)\n\n")
	b.WriteString("A one-character edit in the editor until its result is painted (assembly and decoding in the page's Web Worker); long tasks are main-thread tasks over 50 ms (PerformanceObserver `longtask`) during those edits.\n\n")
	b.WriteString("| request | JSON size | edit → painted, median | all edits | worker (median) | longest main-thread task | tasks over 50 ms |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rep.Preview.Sizes {
		all := make([]string, len(r.EditMs))
		for i, x := range r.EditMs {
			all[i] = fmt.Sprintf("%.0f", x)
		}
		fmt.Fprintf(&b, "| %s | %s | %.0f ms | %s | %.0f ms | %.0f ms | %d |\n", r.Name, kb(r.Bytes), r.MedianMs, strings.Join(all, ", "), r.WorkerMedian, r.LongestTask, r.LongTasks)
	}
	fmt.Fprintf(&b, "\nPage load → first assembled prompt painted, warm HTTP cache: median %.0f ms (loads: %v ms).\n", rep.Preview.Load.MedianMs, rounded(rep.Preview.Load.Ms))
	if p := rep.Preview.Paths; p != nil {
		b.WriteString("\nPaths a person takes (preview/bench/preview-paths.mjs): every sample, in ms.\n\n| path | median | spread | samples |\n|---|---|---|---|\n")
		for _, r := range []struct {
			name string
			f    *PreviewFigure
		}{
			{"open a 1,000-step × 1 KB file (file input) → prompt painted", p.OpenFile},
			{"open a 10,000-line JSONL (file input) → list painted", p.OpenJSONL},
			{"100 elements on one page → all painted", p.Elements},
			{"cold page load (empty HTTP cache) → first prompt painted", p.ColdLoad},
			{"search a 10,000-entry JSONL → list painted", p.Search},
			{"edit in step mode, 1,000 steps × 1 KB → painted", p.StepEdit},
		} {
			if r.f != nil && len(r.f.Ms) > 0 {
				fmt.Fprintf(&b, "| %s | %.0f ms | %.0f–%.0f ms | %v |\n", r.name, r.f.MedianMs, r.f.MinMs, r.f.MaxMs, rounded(r.f.Ms))
			}
		}
	}
	fmt.Fprintf(&b, "\nMachine load average (1 min) during this run: %.1f at the start, %.1f at the end (2 cores).\n", rep.Preview.LoadStart, rep.Preview.LoadEnd)
	return b.String()
}

func rounded(xs []float64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x + 0.5)
	}
	return out
}
