package engine

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSealBinding: a sealed file verifies only for the module and engine
// it was sealed for.
func TestSealBinding(t *testing.T) {
	payload := []byte("serialized code")
	file := Seal(SealBinding("aa", "wasmtime-1.0.0"), payload)
	if len(file) != len(payload)+SealSize {
		t.Fatalf("sealed size %d", len(file))
	}
	if got, problem := Unseal(SealBinding("aa", "wasmtime-1.0.0"), file); problem != "" || !bytes.Equal(got, payload) {
		t.Fatalf("a good file: %q %q", got, problem)
	}
	for _, b := range []string{SealBinding("ab", "wasmtime-1.0.0"), SealBinding("aa", "wasmtime-1.0.1")} {
		if _, problem := Unseal(b, file); !strings.Contains(problem, "failed its integrity check") {
			t.Fatalf("another binding verified: %q", problem)
		}
	}
	for _, short := range [][]byte{nil, file[:SealSize-1], payload} {
		if _, problem := Unseal(SealBinding("aa", "wasmtime-1.0.0"), short); !strings.Contains(problem, "no integrity digest") {
			t.Fatalf("%d bytes: %q", len(short), problem)
		}
	}
}

// fakeEngine stands for wasmtime: its "serialized module" is random bytes
// and deserializing returns them as a string, so a deserialize of altered
// bytes would show as a wrong module.
type fakeEngine struct {
	code                   []byte
	compiles, deserializes int
}

func (f *fakeEngine) cached(t *testing.T, root string) string {
	t.Helper()
	m, err := Cached(root, "fake-1", []byte("the module"),
		func(b []byte) (string, error) { f.deserializes++; return string(b), nil },
		func() (string, []byte, error) { f.compiles++; return string(f.code), f.code, nil })
	if err != nil || m != string(f.code) {
		t.Fatalf("Cached gave a wrong module (err %v)", err)
	}
	return m
}

// TestSealRandomBitFlips flips 100 random bits (seeded) of a cache file,
// one at a time, and truncates it: each is rejected before deserializing,
// compiled afresh, rewritten and noticed on stderr with one line.
func TestSealRandomBitFlips(t *testing.T) {
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(20250701, 100))
	f := &fakeEngine{code: make([]byte, 1<<16)}
	for i := range f.code {
		f.code[i] = byte(rng.Uint32())
	}
	f.cached(t, root)
	paths, _ := filepath.Glob(filepath.Join(root, "fake-1", "*.cwasm"))
	if len(paths) != 1 {
		t.Fatalf("cache files %v", paths)
	}
	good, _ := os.ReadFile(paths[0])
	stderr := captureStderr(t)
	var bads [][]byte
	for range 100 {
		bit := rng.IntN(len(good) * 8)
		bad := bytes.Clone(good)
		bad[bit/8] ^= 1 << (bit % 8)
		bads = append(bads, bad)
	}
	for _, n := range []int{0, 1, SealSize, len(good) - SealSize, len(good) - 1} {
		bads = append(bads, good[:n])
	}
	for i, bad := range bads {
		os.WriteFile(paths[0], bad, 0o644)
		f.cached(t, root)
		if got, _ := os.ReadFile(paths[0]); !bytes.Equal(got, good) {
			t.Fatalf("corruption %d: the file was not rewritten", i)
		}
	}
	if f.deserializes != 0 || f.compiles != 1+len(bads) {
		t.Fatalf("%d deserializes of corrupt files, %d compiles for %d corruptions", f.deserializes, f.compiles, len(bads))
	}
	if lines := strings.Count(stderr(), "compiled it afresh and replaced it\n"); lines != len(bads) {
		t.Fatalf("%d notice lines for %d corruptions", lines, len(bads))
	}
	f.cached(t, root)
	if f.deserializes != 1 || f.compiles != 1+len(bads) {
		t.Fatal("the rewritten file is not used")
	}
}

// captureStderr sends os.Stderr to a file until the test ends; the
// returned func reads what was written.
func captureStderr(t *testing.T) func() string {
	file, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = file
	t.Cleanup(func() { os.Stderr = saved; file.Close() })
	return func() string {
		b, _ := os.ReadFile(file.Name())
		return string(b)
	}
}
