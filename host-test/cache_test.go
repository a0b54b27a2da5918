package hosttest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
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
