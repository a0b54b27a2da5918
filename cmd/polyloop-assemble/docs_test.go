package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The documented commands run as written (issue 45): every command of a
// ```sh, ```bash, ```shell or ```console block (there, the lines after
// "$ ") of README.md, docs/*.md and the binding READMEs that invokes the
// CLI, `polyloop-assemble ...` or `go run ./cmd/polyloop-assemble ...`, is
// run from the repository root by sh against the command built from this
// checkout and must exit 0, or the status a trailing "# exit N" comment on
// it gives. A block that cannot run here (the network, say) has the line
// <!-- docs-test: skip (why) --> just before its fence; the test lists
// every command skipped and why. A line of a block that names the CLI but
// is not an invocation of it must be in a skipped block too, so nothing is
// left out unseen.

// docFiles are the Markdown files whose commands are run, from the
// repository root.
func docFiles(t *testing.T, root string) []string {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v (%d files)", err, len(docs))
	}
	files := []string{"README.md"}
	for _, d := range docs {
		files = append(files, filepath.Join("docs", filepath.Base(d)))
	}
	return append(files, "bindings/python/README.md", "bindings/js/README.md")
}

// docCommand is one command of a doc's shell block.
type docCommand struct {
	file string
	line int    // of its first line
	text string // continuation lines joined
	exit int    // the exit status it is to have
	skip string // why it is not run; "" if it is
}

var (
	skipMarker = regexp.MustCompile(`^<!--\s*docs-test:\s*skip\s*\((.+)\)\s*-->$`)
	anyMarker  = regexp.MustCompile(`docs-test:`)
	// A Python block run where a package is installed (bindings/python/tests/test_docs.py).
	needsMarker = regexp.MustCompile(`^<!--\s*docs-test:\s*needs\s+[A-Za-z0-9_]+\s*\((.+)\)\s*-->$`)
	fence       = regexp.MustCompile("^\\s*```\\s*([A-Za-z0-9_-]*)")
	cliCommand  = regexp.MustCompile(`^(go run \./cmd/polyloop-assemble|polyloop-assemble)(\s|$)`)
	exitMarker  = regexp.MustCompile(`#\s*exit (\d+)\b`)
	shellLangs  = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}
)

// docCommands reads the CLI commands of one Markdown file; a line that
// names the CLI outside a skipped block and is not a command is an error,
// and so is a marker it cannot read.
func docCommands(root, file string) ([]docCommand, []error) {
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, []error{err}
	}
	var errs []error
	var cmds []docCommand
	var inBlock, run bool
	var lang, skip, prev string
	var pending *docCommand // a command continued on the next line (\)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !inBlock {
			trimmed := strings.TrimSpace(line)
			if m := fence.FindStringSubmatch(line); m != nil {
				inBlock, lang, skip = true, m[1], ""
				run = shellLangs[lang]
				if s := skipMarker.FindStringSubmatch(prev); s != nil {
					skip = s[1]
				} else if anyMarker.MatchString(prev) && !(lang == "python" && needsMarker.MatchString(prev)) {
					errs = append(errs, fmt.Errorf("%s: a docs-test marker before line %d reads <!-- docs-test: skip (why) -->, not %q", file, n, prev))
				}
			}
			if trimmed != "" {
				prev = trimmed
			}
			continue
		}
		if fence.MatchString(line) && strings.TrimSpace(line) == "```" {
			inBlock, pending = false, nil
			continue
		}
		if !run {
			continue
		}
		text := strings.TrimSpace(line)
		if lang == "console" && pending == nil {
			if !strings.HasPrefix(text, "$ ") {
				continue // output
			}
			text = strings.TrimSpace(text[2:])
		}
		if pending != nil {
			pending.text += " " + strings.TrimSuffix(text, "\\")
		} else if text != "" && !strings.HasPrefix(text, "#") {
			cmds = append(cmds, docCommand{file: file, line: n, text: strings.TrimSuffix(text, "\\"), skip: skip})
			pending = &cmds[len(cmds)-1]
		}
		if !strings.HasSuffix(text, "\\") {
			pending = nil
		}
	}
	var out []docCommand
	for _, c := range cmds {
		c.text = strings.TrimSpace(c.text)
		switch {
		case !strings.Contains(c.text, "polyloop-assemble"):
			continue // another tool's command (make, pip, npm)
		case c.skip == "" && !cliCommand.MatchString(c.text):
			errs = append(errs, fmt.Errorf("%s:%d: %q names the CLI but does not start with polyloop-assemble or go run ./cmd/polyloop-assemble; mark its block <!-- docs-test: skip (why) --> or fix it", c.file, c.line, c.text))
			continue
		}
		if m := exitMarker.FindStringSubmatch(c.text); m != nil {
			c.exit, _ = strconv.Atoi(m[1])
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	return out, errs
}

// docsRoot makes the directory the commands run in: the repository root's
// entries as symbolic links, so that a command's output files land in a
// temporary directory, not in the checkout; and bin/polyloop-assemble, the
// command ($POLYLOOP_CLI, the built one, else this test binary as the
// command, TestMain).
func docsRoot(t *testing.T, root string) (dir, bin string) {
	dir = t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	bin = t.TempDir()
	cli := os.Getenv("POLYLOOP_CLI")
	script := "#!/bin/sh\nexec " + strconv.Quote(cli) + " \"$@\"\n"
	if cli == "" {
		self, err := filepath.Abs(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		script = "#!/bin/sh\nPOLYLOOP_CLI_AS_COMMAND=1 exec " + strconv.Quote(self) + " \"$@\"\n"
	}
	if err := os.WriteFile(filepath.Join(bin, "polyloop-assemble"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, bin
}

func TestDocumentedCommandsRun(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []docCommand
	for _, f := range docFiles(t, root) {
		c, errs := docCommands(root, f)
		for _, err := range errs {
			t.Error(err) // and run the rest
		}
		cmds = append(cmds, c...)
	}
	dir, bin := docsRoot(t, root)
	ran, skipped := 0, 0
	for _, c := range cmds {
		where := c.file + ":" + strconv.Itoa(c.line)
		if c.skip != "" {
			skipped++
			t.Logf("skipped %s: %s (%s)", where, c.text, c.skip)
			continue
		}
		ran++
		text := strings.Replace(c.text, "go run ./cmd/polyloop-assemble", "polyloop-assemble", 1)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, "sh", "-c", text)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "POLYLOOP_CLI_AS_COMMAND=")
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = nil, &stderr
		err := cmd.Run()
		cancel()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Errorf("%s: %s: %v", where, c.text, err)
			continue
		}
		t.Logf("ran %s: %s: exit %d", where, c.text, code)
		if code != c.exit {
			t.Errorf("%s: %s\nexit %d, want %d (a trailing \"# exit N\" gives another); stderr:\n%.2000s", where, c.text, code, c.exit, stderr.String())
		}
	}
	t.Logf("documented commands: %d run, %d skipped", ran, skipped)
	if ran == 0 {
		t.Fatal("no documented command found")
	}
}
