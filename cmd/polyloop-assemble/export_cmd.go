package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tinylib/msgp/msgp"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/wirejson"
)

// The export subcommand (docs/SPEC.md §7.13): the provider's request body
// of one request.

// exportUsage names the providers from core.Providers, the one list.
var exportUsage = `usage: polyloop-assemble export --provider ` + strings.Join(core.Providers, "|") + `
              [--ttl 5m|1h] [--max-breakpoints N] [--lookback N] [--explicit-breakpoints]
              [--cached-content NAME] [--body FILE] [--engine E] [--wasm PATH] [FILE]

Writes the provider's request body for a request (docs/SPEC.md §7.13), JSON or
msgpack in FILE or stdin. Flags go before or after FILE.

flags:
  --provider P             ` + core.ProviderList() + ` (required)
  --ttl 5m|1h              Anthropic: the cache_control TTL (default: the provider's, 5m)
  --max-breakpoints N      Anthropic: at most N cache breakpoints, 0 to 4 (default 4)
  --lookback N             Anthropic: a breakpoint N blocks below a wider history gap
                           (default 20; 0 for none)
  --explicit-breakpoints   openai-chat, openai-responses: OpenAI's prompt_cache_breakpoint at those blocks
  --cached-content NAME    gemini: the call naming the cache (cachedContents/…) that gemini-cache's body made
  --body FILE              a JSON file of the provider's other fields (model, max_tokens, tools…)
  --engine native|wazero|wasmtime, --wasm PATH   as for the main command

example: polyloop-assemble export examples/react.json --provider anthropic

exit status: 0 ok, 1 an error answer, 2 usage or I/O error
`

// exportOptions packs the export's options map from its flags (-1: not
// given); the body file's JSON goes as it is, its keys in their order.
func exportOptions(ttl string, maxBP, lookback int, explicit bool, cached, bodyPath string) ([]byte, error) {
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
	for _, given := range []bool{ttl != "", maxBP >= 0, lookback >= 0, explicit, cached != "", body != nil} {
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
	if explicit {
		b = msgp.AppendBool(msgp.AppendString(b, "explicit_breakpoints"), true)
	}
	if cached != "" {
		b = msgp.AppendString(msgp.AppendString(b, "cached_content"), cached)
	}
	if body != nil {
		b = append(msgp.AppendString(b, "body"), body...)
	}
	return b, nil
}

// readExportInputs reads the export's request (the operand, or stdin) and
// options within the request limit: tooLarge is the answer when one of them
// is over it (the engine is then not asked).
func readExportInputs(fs *flag.FlagSet, stdin io.Reader, ttl string, maxBP, lookback int, explicit bool, cached, bodyPath string) (req, o []byte, tooLarge *core.Error, err error) {
	if fs.NArg() == 1 && fs.Arg(0) != "-" {
		req, err = readSide(fs.Arg(0))
	} else {
		var data []byte
		if data, err = readLimited("", stdin, requestLimit); err == nil {
			req = sideOf(data)
		}
	}
	var over overLimitError
	if errors.As(err, &over) {
		tooLarge, err = tooLargeRequest(over.size), nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	o, err = exportOptions(ttl, maxBP, lookback, explicit, cached, bodyPath)
	if errors.As(err, &over) && tooLarge == nil {
		tooLarge, err = &core.Error{Code: core.CodeTooLarge, Path: "options.body", Offset: -1,
			Message: fmt.Sprintf("the body is %s, over the 1 GiB request limit; give the provider's other fields only", sizeOf(over.size))}, nil
	}
	if err != nil && tooLarge == nil {
		return nil, nil, nil, err
	}
	return req, o, tooLarge, nil
}

func runExport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("polyloop-assemble export", flag.ContinueOnError)
	engineName := fs.String("engine", "native", "")
	wasmPath := fs.String("wasm", "", "")
	provider := fs.String("provider", "", "")
	ttl := fs.String("ttl", "", "")
	maxBP := fs.Int("max-breakpoints", -1, "")
	lookback := fs.Int("lookback", -1, "")
	bodyPath := fs.String("body", "", "")
	explicit := fs.Bool("explicit-breakpoints", false, "")
	cached := fs.String("cached-content", "", "")
	if exit, ok := parseFlags(fs, args, exportUsage, stdout, stderr); !ok {
		return exit
	}
	if *provider == "" {
		return usageErrorOf(stderr, fs.Name(), exportUsage, "give --provider %s", core.ProviderList())
	}
	if fs.NArg() > 1 {
		return usageErrorOf(stderr, fs.Name(), exportUsage, "give one request file (or none for stdin), not %d", fs.NArg())
	}
	req, o, tooLarge, err := readExportInputs(fs, stdin, *ttl, *maxBP, *lookback, *explicit, *cached, *bodyPath)
	if err != nil {
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
		ans = callArgs(eng, abi.CallExport, req, msgp.AppendString(nil, *provider), o)
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
