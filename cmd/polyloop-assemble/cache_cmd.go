package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
)

// The cache subcommand (docs/SPEC.md §7.12): a run's cache report.

const cacheUsage = `usage: polyloop-assemble cache [--engine E] [--wasm PATH] [--out json|text] [--usage FILE] [FILE]

Reports on the calls of a run (docs/SPEC.md §7.12): FILE (or stdin) holds its
requests in call order, JSON one per line or msgpack concatenated. Flags go
before or after FILE.

flags:
  --engine native|wazero|wasmtime   which build of the core runs (default native)
  --wasm PATH                       the module for wazero/wasmtime
  --out json|text                   the report as JSON (default) or as a table for people
  --usage FILE                      a JSONL file of the provider's recorded usage, one per
                                    request (null where none): each call gets its usage class

example: polyloop-assemble cache examples/caching/run.jsonl --usage examples/caching/usage.jsonl --out text

exit status: 0 ok, 1 an error answer, 2 usage or I/O error
`

func runCache(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("polyloop-assemble cache", flag.ContinueOnError)
	engineName := fs.String("engine", "native", "")
	wasmPath := fs.String("wasm", "", "")
	out := fs.String("out", "json", "")
	usagePath := fs.String("usage", "", "")
	if exit, ok := parseFlags(fs, args, cacheUsage, stdout, stderr); !ok {
		return exit
	}
	if *out != "json" && *out != "text" {
		return usageErrorOf(stderr, fs.Name(), cacheUsage, "--out must be json or text, not %q", *out)
	}
	if fs.NArg() > 1 {
		return usageErrorOf(stderr, fs.Name(), cacheUsage, "give one file of requests (or none for stdin), not %d", fs.NArg())
	}
	var a runArgs
	if err := readRunInputs(&a, fs.Arg(0), *usagePath, stdin); err != nil {
		fmt.Fprintf(stderr, "polyloop-assemble cache: %v\n", err)
		return 2
	}
	eng, err := openEngine(*engineName, *wasmPath, 1)
	if err != nil {
		fmt.Fprintf(stderr, "polyloop-assemble: %v\n", err)
		return 2
	}
	defer eng.Close()
	var ans []byte
	if a.tooLarge {
		ans = core.AppendCompareError(nil, tooLargeRequest(a.read))
	} else {
		reqs, usage := a.args()
		a.items, a.usage = nil, nil // held in reqs and usage now
		ans = a.patch(callArgs(eng, abi.CallCacheReport, reqs, usage))
	}
	if *out == "text" {
		return writeCacheText(stdout, ans)
	}
	fmt.Fprintf(stdout, "%s\n", ans)
	if bytes.HasPrefix(ans, []byte(`{"error"`)) {
		return 1
	}
	return 0
}

// readRunInputs reads the requests (path, or stdin) and the usage file
// (none when usagePath is ""), each request and usage line within the
// request limit (docs/SPEC.md §4).
func readRunInputs(a *runArgs, path, usagePath string, stdin io.Reader) error {
	r, _, closeFn, err := openInput(path, stdin)
	if err != nil {
		return err
	}
	defer closeFn()
	if err := a.readRequests(r, requestLimit); err != nil {
		return err
	}
	if usagePath == "" {
		return nil
	}
	u, _, closeUsage, err := openInput(usagePath, stdin)
	if err == nil {
		defer closeUsage()
		err = a.readUsage(u, requestLimit)
	}
	if err != nil {
		return fmt.Errorf("--usage %s: %v", usagePath, err)
	}
	return nil
}

// cacheText is the report as the text table reads it.
type cacheText struct {
	Calls []struct {
		Previous  *int            `json:"previous"`
		Extends   bool            `json:"extends"`
		Prompt    int64           `json:"prompt_chars"`
		Cacheable int64           `json:"cacheable_prefix_chars"`
		Share     json.Number     `json:"cacheable_share"`
		Break     *cacheTextBreak `json:"break"`
		Usage     *struct {
			Cached *int64                                `json:"cached_tokens"`
			Class  string                                `json:"class"`
			Error  *struct{ Code, Message, Path string } `json:"error"`
		} `json:"usage"`
		Error *struct{ Code, Message, Path string } `json:"error"`
	} `json:"calls"`
	Groups []struct{} `json:"groups"`
	Totals struct {
		Calls, Errors, Breaks int
		UsageErrors           int         `json:"usage_errors"`
		Prompt                int64       `json:"prompt_chars"`
		Cacheable             int64       `json:"cacheable_chars"`
		Volatile              int64       `json:"volatile_chars"`
		Share                 json.Number `json:"cacheable_share"`
	} `json:"totals"`
	Error *struct{ Code, Message, Path string } `json:"error"`
}

type cacheTextBreak struct {
	Segment, Cause  string
	Message, Char   int
	Step            *int
	ExcerptPrevious *string `json:"excerpt_previous"`
	ExcerptThis     *string `json:"excerpt_this"`
}

func writeCacheText(w io.Writer, ans []byte) int {
	var r cacheText
	if err := json.Unmarshal(ans, &r); err != nil {
		fmt.Fprintf(w, "%s\n", ans)
		return 2
	}
	if e := r.Error; e != nil {
		fmt.Fprintf(w, "error: %s at %q: %s\n", e.Code, e.Path, e.Message)
		return 1
	}
	fmt.Fprintf(w, "%5s  %-7s  %12s  %12s  %6s  %13s  %s\n", "call", "extends", "prompt chars", "cacheable", "share", "cached tokens", "break; usage class")
	for i, c := range r.Calls {
		if e := c.Error; e != nil {
			fmt.Fprintf(w, "%5d  error: %s at %q: %s\n", i, e.Code, e.Path, e.Message)
			continue
		}
		ext := "yes"
		switch {
		case c.Previous == nil:
			ext = "first"
		case !c.Extends:
			ext = "no"
		}
		note := ""
		if b := c.Break; b != nil {
			note = fmt.Sprintf("%s: %s at message %d, char %d", b.Segment, b.Cause, b.Message, b.Char)
			if b.Step != nil {
				note += " (step " + strconv.Itoa(*b.Step) + ")"
			}
			note += ": " + quoteVisible(b.ExcerptPrevious) + " → " + quoteVisible(b.ExcerptThis)
		}
		cached := "" // no usage recorded for the run
		if u := c.Usage; u != nil {
			cached = "-" // none for this call, or unreadable
			if u.Cached != nil {
				cached = group(*u.Cached)
			}
			class := u.Class
			if e := u.Error; e != nil {
				class += fmt.Sprintf(" (%s at %q: %s)", e.Code, e.Path, e.Message)
			}
			note = strings.TrimPrefix(note+"; usage: "+class, "; ")
		}
		row := fmt.Sprintf("%5d  %-7s  %12s  %12s  %6s  %13s  %s", i, ext, group(c.Prompt), group(c.Cacheable), c.Share, cached, note)
		fmt.Fprintln(w, strings.TrimRight(row, " "))
	}
	t := r.Totals
	fmt.Fprintf(w, "%d call%s (%d error%s), %d break%s, %d stable prefix%s: %s of %s prompt chars cacheable (share %s), %s volatile",
		t.Calls, plural(t.Calls), t.Errors, plural(t.Errors), t.Breaks, plural(t.Breaks), len(r.Groups), pluralES(len(r.Groups)),
		group(t.Cacheable), group(t.Prompt), t.Share, group(t.Volatile))
	if t.UsageErrors > 0 {
		fmt.Fprintf(w, ", %d unreadable usage%s", t.UsageErrors, plural(t.UsageErrors))
	}
	fmt.Fprintln(w)
	return 0
}

func pluralES(n int) string {
	if n == 1 {
		return ""
	}
	return "es"
}
