package limitreq

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// The CLI's over-limit streams (docs/SPEC.md §2.3): one request far over a
// limit between two ok ones, written as it goes (never held in memory), for
// a child process that must read past it in bounded memory.

// OKJSON is a valid request as JSON text.
const OKJSON = `{"observation_template": "{observation}"}`

// LongJSONLine writes a JSON line of a request whose raw_output is mib MiB
// and returns the line's length (without its newline).
func LongJSONLine(w io.Writer, mib int) (int64, error) {
	head, tail := `{"observation_template": "{observation}", "steps": [{"raw_output": "`, `", "observation": ""}]}`
	if _, err := io.WriteString(w, head); err != nil {
		return 0, err
	}
	chunk := bytes.Repeat([]byte{'a'}, 1<<20)
	for range mib {
		if _, err := w.Write(chunk); err != nil {
			return 0, err
		}
	}
	_, err := io.WriteString(w, tail+"\n")
	return int64(len(head) + mib<<20 + len(tail)), err
}

// LongMsgpackArray writes an array32 of n bin32 values of size bytes each
// and returns its length in bytes, size*n + 5*(n+1).
func LongMsgpackArray(w io.Writer, n, size int) (int64, error) {
	hdr := func(c byte, k int) []byte { return []byte{c, byte(k >> 24), byte(k >> 16), byte(k >> 8), byte(k)} }
	if _, err := w.Write(hdr(0xdd, n)); err != nil {
		return 0, err
	}
	payload := make([]byte, size)
	for range n {
		if _, err := w.Write(hdr(0xc6, size)); err != nil {
			return 0, err
		}
		if _, err := w.Write(payload); err != nil {
			return 0, err
		}
	}
	return int64(size*n + 5*(n+1)), nil
}

// GNUTime measures the peak RSS of the process it runs.
const GNUTime = "/usr/bin/time"

// Run is one run of RunBounded.
type Run struct {
	Code           int
	Stdout, Stderr string
	RSSKB          int64 // peak resident KB, 0 if unknown
	FeedErr        error // writing stdin failed (the child stopped reading)
}

// RunBounded runs argv, env added, with its stdin written by feed, under
// GNU time for its peak RSS and, if addressKB > 0, under ulimit -v addressKB.
func RunBounded(argv, env []string, addressKB int, feed func(io.Writer) error) (Run, error) {
	dir, err := os.MkdirTemp("", "limitreq")
	if err != nil {
		return Run{}, err
	}
	defer os.RemoveAll(dir)
	rss := filepath.Join(dir, "rss")
	argv = append([]string{GNUTime, "-f", "%M", "-o", rss}, argv...)
	if addressKB > 0 {
		argv = append([]string{"bash", "-c", `ulimit -v ` + strconv.Itoa(addressKB) + ` && exec "$@"`, "bash"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	w, err := cmd.StdinPipe()
	if err != nil {
		return Run{}, err
	}
	if err := cmd.Start(); err != nil {
		return Run{}, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	ferr := feed(bw)
	if ferr == nil {
		ferr = bw.Flush()
	}
	w.Close()
	var ee *exec.ExitError
	if err := cmd.Wait(); err != nil && !errors.As(err, &ee) {
		return Run{}, err
	}
	r := Run{Code: cmd.ProcessState.ExitCode(), Stdout: o.String(), Stderr: e.String(), FeedErr: ferr}
	b, _ := os.ReadFile(rss)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	r.RSSKB, _ = strconv.ParseInt(lines[len(lines)-1], 10, 64)
	return r, nil
}

// Crashed reports a run that died of the Go runtime (out of memory, a
// panic) rather than answering.
func (r Run) Crashed() bool {
	return strings.Contains(r.Stderr, "fatal error") || strings.Contains(r.Stderr, "goroutine ")
}

// String is the run in a line, for a test's log.
func (r Run) String() string {
	return fmt.Sprintf("exit %d, peak RSS %d MB", r.Code, r.RSSKB>>10)
}
