package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/wirejson"
)

// The cache and export subcommands (docs/SPEC.md §7.12, §7.13): a run's
// cache report, and the provider's request body of one request.

const cacheUsage = `usage: polyloop-assemble cache [--engine E] [--wasm PATH] [--out json|text] [--usage FILE] [FILE]

Reports on the calls of a run (docs/SPEC.md §7.12): FILE (or stdin) holds its
requests in call order, JSON one per line or msgpack concatenated. --usage
names a JSONL file of the provider's recorded usage, one per request (null
where none). Exit status: 0 ok, 2 usage or I/O error.

       polyloop-assemble export --provider anthropic|openai-chat|openai-responses
              [--ttl 5m|1h] [--max-breakpoints N] [--lookback N] [--body FILE] [FILE]

Writes the provider's request body for a request (docs/SPEC.md §7.13), JSON or
msgpack in FILE or stdin; --body names a JSON file of the provider's other
fields (model, max_tokens, tools…). Exit status: 0 ok, 1 error, 2 usage or I/O.
`

func runCache(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("polyloop-assemble cache", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	engineName := fs.String("engine", "native", "")
	wasmPath := fs.String("wasm", "", "")
	out := fs.String("out", "json", "")
	usagePath := fs.String("usage", "", "")
	if err := fs.Parse(args); err != nil {
		return usageError(stderr, "%v\n\n%s", err, cacheUsage)
	}
	if *out != "json" && *out != "text" {
		return usageError(stderr, "cache: --out must be json or text, not %q", *out)
	}
	if fs.NArg() > 1 {
		return usageError(stderr, "cache: give one file of requests (or none for stdin)")
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
		ans = a.patch(eng.AppendCall(abi.CallCacheReport, nil, a.args()))
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
			Class string `json:"class"`
		} `json:"usage"`
		Error *struct{ Code, Message, Path string } `json:"error"`
	} `json:"calls"`
	Groups []struct{} `json:"groups"`
	Totals struct {
		Calls, Errors, Breaks int
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
	fmt.Fprintf(w, "%5s  %-7s  %12s  %12s  %6s  %s\n", "call", "extends", "prompt chars", "cacheable", "share", "break (or usage)")
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
		if u := c.Usage; u != nil {
			note = strings.TrimPrefix(note+"; usage: "+u.Class, "; ")
		}
		fmt.Fprintf(w, "%5d  %-7s  %12s  %12s  %6s  %s\n", i, ext, group(c.Prompt), group(c.Cacheable), c.Share, note)
	}
	t := r.Totals
	fmt.Fprintf(w, "%d calls (%d errors), %d breaks, %d stable prefixes: %s of %s prompt chars cacheable (share %s), %s volatile\n",
		t.Calls, t.Errors, t.Breaks, len(r.Groups), group(t.Cacheable), group(t.Prompt), t.Share, group(t.Volatile))
	return 0
}

// exportOptions packs the export's options map from its flags (-1: not
// given); the body file's JSON goes as it is, its keys in their order.
func exportOptions(ttl string, maxBP, lookback int, bodyPath string) ([]byte, error) {
	var body []byte
	if bodyPath != "" {
		data, err := readLimited(bodyPath, nil, requestLimit)
		if err == nil {
			body, err = wirejson.ToMsgpack(nil, data)
		}
		if err != nil {
			return nil, fmt.Errorf("--body %s: %w", bodyPath, err)
		}
	}
	n := 0
	for _, given := range []bool{ttl != "", maxBP >= 0, lookback >= 0, body != nil} {
		if given {
			n++
		}
	}
	b := msgp.AppendMapHeader(nil, uint32(n))
	if ttl != "" {
		b = msgp.AppendString(msgp.AppendString(b, "ttl"), ttl)
	}
	if maxBP >= 0 {
		b = msgp.AppendInt(msgp.AppendString(b, "max_breakpoints"), maxBP)
	}
	if lookback >= 0 {
		b = msgp.AppendInt(msgp.AppendString(b, "lookback"), lookback)
	}
	if body != nil {
		b = append(msgp.AppendString(b, "body"), body...)
	}
	return b, nil
}

func runExport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("polyloop-assemble export", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	engineName := fs.String("engine", "native", "")
	wasmPath := fs.String("wasm", "", "")
	provider := fs.String("provider", "", "")
	ttl := fs.String("ttl", "", "")
	maxBP := fs.Int("max-breakpoints", -1, "")
	lookback := fs.Int("lookback", -1, "")
	bodyPath := fs.String("body", "", "")
	if err := fs.Parse(args); err != nil {
		return usageError(stderr, "%v\n\n%s", err, cacheUsage)
	}
	if *provider == "" || fs.NArg() > 1 {
		return usageError(stderr, "export: give --provider anthropic, openai-chat or openai-responses, and one request file (or none for stdin)\n\n%s", cacheUsage)
	}
	var req []byte
	var err error
	if fs.NArg() == 1 && fs.Arg(0) != "-" {
		req, err = readSide(fs.Arg(0))
	} else {
		var data []byte
		if data, err = readLimited("", stdin, requestLimit); err == nil {
			req = sideOf(data)
		}
	}
	var over overLimitError
	var tooLarge *core.Error // an input over the limit: the answer, the engine not asked
	if errors.As(err, &over) {
		tooLarge, err = tooLargeRequest(over.size), nil
	}
	if err != nil {
		fmt.Fprintf(stderr, "polyloop-assemble export: %v\n", err)
		return 2
	}
	o, err := exportOptions(*ttl, *maxBP, *lookback, *bodyPath)
	if errors.As(err, &over) && tooLarge == nil {
		tooLarge, err = &core.Error{Code: core.CodeTooLarge, Path: "options.body", Offset: -1,
			Message: fmt.Sprintf("the body is %d bytes, over the 1 GiB request limit; give the provider's other fields only", over.size)}, nil
	}
	if err != nil && tooLarge == nil {
		fmt.Fprintf(stderr, "polyloop-assemble export: %v\n", err)
		return 2
	}
	eng, err := openEngine(*engineName, *wasmPath, 1)
	if err != nil {
		fmt.Fprintf(stderr, "polyloop-assemble: %v\n", err)
		return 2
	}
	defer eng.Close()
	var ans []byte
	if tooLarge != nil {
		ans = core.AppendErrorAnswer(nil, abi.CallExport, tooLarge)
	} else {
		ans = eng.AppendCall(abi.CallExport, nil, core.AppendArgs(nil, abi.CallExport, req, msgp.AppendString(nil, *provider), o))
	}
	if ans, err = exportText(ans); err != nil {
		fmt.Fprintf(stderr, "polyloop-assemble export: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "%s\n", ans)
	if bytes.HasPrefix(ans, []byte(`{"error"`)) {
		return 1
	}
	return 0
}

// exportText is the export's answer (a msgpack map) as the JSON text the
// provider takes (wirejson.FromMsgpack).
func exportText(answer []byte) ([]byte, error) {
	text, rest, err := wirejson.FromMsgpack(nil, answer)
	if err != nil || len(rest) != 0 {
		return nil, fmt.Errorf("the engine's export answer is not one msgpack map JSON can hold (%v); is the module from this release?", err)
	}
	return text, nil
}
