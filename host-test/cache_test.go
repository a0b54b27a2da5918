package hosttest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/benchreq"
	"github.com/polyloop/assembly/wasmhost"
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
