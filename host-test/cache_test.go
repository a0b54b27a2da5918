package hosttest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polyloop/assembly/core"
	plumbing "github.com/polyloop/assembly/internal/engine"
	"github.com/polyloop/assembly/internal/testing/benchreq"
	"github.com/polyloop/assembly/internal/testing/vectors"
	"github.com/polyloop/assembly/wasmhost"
	"github.com/polyloop/assembly/wasmhost/wasmtime"
)

// TestCorruptCache fills a cache directory, overwrites every cached file
// with garbage, and checks that both engines still compile and answer.
func TestCorruptCache(t *testing.T) {
	req := core.EncodeRequest(benchreq.Tiny())
	want := core.AssembleBytes(req)
	for _, k := range runnerKinds {
		dir := t.TempDir()
		r, err := k.new(wasmhost.Options{CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		var files []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return nil
		})
		if len(files) == 0 {
			t.Fatalf("%s: nothing was cached in %s", k.name, dir)
		}
		for _, f := range files {
			if err := os.WriteFile(f, bytes.Repeat([]byte{0xA5}, 4096), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r, err = k.new(wasmhost.Options{CacheDir: dir})
		if err != nil {
			t.Fatalf("%s: a corrupt cache is not recompiled: %v", k.name, err)
		}
		if got := r.AssembleBytes(req); !bytes.Equal(got, want) {
			t.Fatalf("%s: wrong answer after a corrupt cache", k.name)
		}
		r.Close()
		t.Logf("%s: %d corrupt cache files, recompiled and answered", k.name, len(files))
	}
}

// TestUnwritableCache points the cache at a file: engines must still work.
func TestUnwritableCache(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, []byte("x"), 0o644)
	req := core.EncodeRequest(benchreq.Tiny())
	for _, k := range runnerKinds {
		r, err := k.new(wasmhost.Options{CacheDir: blocker})
		if err != nil {
			t.Fatalf("%s: an unusable cache directory is fatal: %v", k.name, err)
		}
		if !bytes.Equal(r.AssembleBytes(req), core.AssembleBytes(req)) {
			t.Fatalf("%s: wrong answer", k.name)
		}
		r.Close()
	}
}

const compileOnceEnv = "POLYLOOP_HOSTTEST_COMPILE_ONCE"

// compileOnceChild opens a wasmtime runner on the cache directory dir and
// prints how many times this process compiled the module.
func compileOnceChild(dir string) {
	r, err := wasmtime.New(wasmhost.Options{CacheDir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	req := core.EncodeRequest(benchreq.Tiny())
	if !bytes.Equal(r.AssembleBytes(req), core.AssembleBytes(req)) {
		fmt.Fprintln(os.Stderr, "wrong answer")
		os.Exit(1)
	}
	r.Close()
	fmt.Println(plumbing.Compiles.Load())
	os.Exit(0)
}

// TestColdCacheCompilesOnce starts two processes at once on an empty cache
// directory: the compile lock makes one compile and the other wait and load
// what it wrote.
func TestColdCacheCompilesOnce(t *testing.T) {
	dir := t.TempDir()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run", "^$")
		cmd.Env = append(os.Environ(), compileOnceEnv+"="+dir)
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	total := 0
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i])
		}
		n, err := strconv.Atoi(strings.TrimSpace(outs[i].String()))
		if err != nil {
			t.Fatalf("process %d printed %q", i, outs[i])
		}
		total += n
	}
	if total != 1 {
		t.Fatalf("two processes on a cold cache compiled %d times, want once", total)
	}
}

// TestCacheLayout checks the shared layout: <dir>/wazero/ and
// <dir>/wasmtime-<version>/<module sha256>.cwasm, and that eviction keeps
// the 4 newest serialized modules.
func TestCacheLayout(t *testing.T) {
	dir := t.TempDir()
	wasm, err := plumbing.LoadModule(plumbing.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	wtDir := filepath.Join(dir, "wasmtime-"+wasmtime.Version)
	os.MkdirAll(wtDir, 0o755)
	old := time.Now().Add(-time.Hour)
	for i := range 6 {
		p := filepath.Join(wtDir, fmt.Sprintf("%064d.cwasm", i))
		os.WriteFile(p, []byte("stale"), 0o644)
		os.Chtimes(p, old.Add(time.Duration(i)*time.Minute), old.Add(time.Duration(i)*time.Minute))
	}
	for _, k := range runnerKinds {
		r, err := k.new(wasmhost.Options{CacheDir: dir, Module: wasm})
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	if entries, err := os.ReadDir(filepath.Join(dir, "wazero")); err != nil || len(entries) == 0 {
		t.Fatalf("nothing in %s/wazero (%v)", dir, err)
	}
	mine := filepath.Join(wtDir, fmt.Sprintf("%x.cwasm", sum))
	if _, err := os.Stat(mine); err != nil {
		t.Fatalf("the serialized module is not at %s: %v", mine, err)
	}
	kept, _ := filepath.Glob(filepath.Join(wtDir, "*.cwasm"))
	if len(kept) != 4 {
		t.Fatalf("%d .cwasm files kept, want 4: %v", len(kept), kept)
	}
	for i := 3; i < 6; i++ { // the three newest stale ones stay
		if _, err := os.Stat(filepath.Join(wtDir, fmt.Sprintf("%064d.cwasm", i))); err != nil {
			t.Errorf("eviction removed a newer file: %v", err)
		}
	}
}

// The integrity of the wasmtime cache (docs/SPEC.md §7.4): a cached file
// that was altered in any way is never executed. Each case corrupts the
// file, then a NEW process (the corruption is read at start-up) answers
// requests whose true answers native Go gives: it must answer them exactly,
// print one notice line and leave the good file in place.

const cacheCallEnv = "POLYLOOP_HOSTTEST_CACHE_CALL"

// integrityRequests are what a child answers: the vector
// fields-unknown-block (its answer carries the string "unknown_field") and
// the tiny request (its answer carries "assistant").
func integrityRequests() ([][]byte, error) {
	cases, err := vectors.Load("../testdata/vectors")
	if err != nil {
		return nil, err
	}
	for _, c := range cases {
		if c.Name == "fields-unknown-block" {
			return [][]byte{c.Request, core.EncodeRequest(benchreq.Tiny())}, nil
		}
	}
	return nil, errors.New("no vector fields-unknown-block")
}

// cacheCallChild opens a wasmtime runner on the cache directory dir and
// prints the hex of its answer to each integrity request, one a line.
func cacheCallChild(dir string) {
	reqs, err := integrityRequests()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	r, err := wasmtime.New(wasmhost.Options{CacheDir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, req := range reqs {
		fmt.Printf("%x\n", r.AssembleBytes(req))
	}
	r.Close()
	os.Exit(0)
}

// integrityCache is a cache directory holding the good compiled module.
type integrityCache struct {
	dir, path string
	good      []byte // the file as a cold start wrote it
	want      string // the true answers, as cacheCallChild prints them
}

func newIntegrityCache(t *testing.T) *integrityCache {
	t.Helper()
	reqs, err := integrityRequests()
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, req := range reqs {
		fmt.Fprintf(&want, "%x\n", core.AssembleBytes(req))
	}
	if !strings.Contains(want.String(), fmt.Sprintf("%x", "unknown_field")) || !strings.Contains(want.String(), fmt.Sprintf("%x", "assistant")) {
		t.Fatal("the true answers do not carry the strings the tampering tests change")
	}
	c := &integrityCache{dir: t.TempDir(), want: want.String()}
	wasm, err := plumbing.LoadModule(plumbing.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c.path = filepath.Join(c.dir, "wasmtime-"+wasmtime.Version, fmt.Sprintf("%x.cwasm", sha256.Sum256(wasm)))
	c.call(t, "cold start", false)
	if c.good, err = os.ReadFile(c.path); err != nil {
		t.Fatal(err)
	}
	return c
}

// call runs a child on the cache; noticed says whether it must print the
// one notice line about the corrupt file (else nothing on stderr).
func (c *integrityCache) call(t *testing.T, label string, noticed bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), cacheCallEnv+"="+c.dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: the process failed (%v); stderr:\n%s", label, err, stderr.String())
	}
	if stdout.String() != c.want {
		t.Fatalf("%s: wrong answers from the cached module:\n got %.200s\nwant %.200s", label, stdout.String(), c.want)
	}
	lines := strings.Count(stderr.String(), "\n")
	if noticed && (lines != 1 || !strings.Contains(stderr.String(), c.path) || !strings.Contains(stderr.String(), "compiled it afresh")) {
		t.Fatalf("%s: want one notice line about %s, got:\n%s", label, c.path, stderr.String())
	}
	if !noticed && stderr.Len() != 0 {
		t.Fatalf("%s: unexpected stderr:\n%s", label, stderr.String())
	}
}

// corrupt writes bad as the cache file, runs a child that must recover,
// and checks the good file was written back.
func (c *integrityCache) corrupt(t *testing.T, label string, bad []byte) {
	t.Helper()
	if err := os.WriteFile(c.path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	c.call(t, label, true)
	if got, err := os.ReadFile(c.path); err != nil || !bytes.Equal(got, c.good) {
		t.Fatalf("%s: the corrupt file was not rewritten (%v)", label, err)
	}
}

// TestCacheTamperedString edits one string of the compiled code (the kind
// of change wasmtime's own header check lets through), truncates the file,
// and empties it.
func TestCacheTamperedString(t *testing.T) {
	c := newIntegrityCache(t)
	for _, edit := range [][2]string{{"unknown_field", "unknown_fielX"}, {"assistant", "assistanX"}} {
		if !bytes.Contains(c.good, []byte(edit[0])) {
			t.Fatalf("%q is not in the compiled module", edit[0])
		}
		c.corrupt(t, edit[0]+"→"+edit[1], bytes.Replace(c.good, []byte(edit[0]), []byte(edit[1]), 1))
	}
	c.corrupt(t, "truncated by one byte", c.good[:len(c.good)-1])
	c.corrupt(t, "truncated to half", c.good[:len(c.good)/2])
	c.call(t, "a later process", false) // and the rewritten file serves silently
}

// integrityFlips is how many random single-bit flips
// TestCacheRandomBitFlips tries, each in a fresh process that recompiles
// (about 2 s each); internal/engine's TestSealRandomBitFlips flips 100 bits
// against the check itself.
const integrityFlips = 10

// TestCacheRandomBitFlips flips one random bit (seeded) of the cache file
// at a time.
func TestCacheRandomBitFlips(t *testing.T) {
	c := newIntegrityCache(t)
	rng := rand.New(rand.NewPCG(20250701, 7))
	for i := range integrityFlips {
		bit := rng.IntN(len(c.good) * 8)
		bad := bytes.Clone(c.good)
		bad[bit/8] ^= 1 << (bit % 8)
		c.corrupt(t, fmt.Sprintf("flip %d (bit %d)", i, bit), bad)
	}
}
