//go:build unix

package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/core/abi"
	"github.com/polyloop/assembly/internal/testing/benchreq"
)

// The cache's files and directories (docs/SPEC.md §7.4): only regular
// files are read, each read is bounded, and a directory or file that
// another user could write is never trusted. The fake engine's "module" is
// random bytes, so an answer from a planted file shows as a wrong module.

const strangeFileEnv = "POLYLOOP_ENGINE_STRANGE_FILE"

// fakeFiles is the cache layout of fakeEngine.cached under root.
func fakeFiles(root string) (dir, path string) {
	sum := sha256.Sum256([]byte("the module"))
	dir = filepath.Join(root, "fake-1")
	return dir, filepath.Join(dir, hex.EncodeToString(sum[:])+".cwasm")
}

// forged is a file a writer of the cache directory could plant: code of
// their own under a seal that verifies (the seal is unkeyed).
func forged() []byte {
	sum := sha256.Sum256([]byte("the module"))
	return Seal(SealBinding(hex.EncodeToString(sum[:]), "fake-1"), []byte("planted code"))
}

// strangeFiles: what is put at the .cwasm path (or its lock) before the
// first call, and a phrase the one notice line must carry.
var strangeFiles = map[string]struct {
	plant  func(t *testing.T, path string)
	notice string
}{
	"fifo":     {func(t *testing.T, path string) { mkfifo(t, path) }, "is a named pipe, not a regular file"},
	"dev-zero": {func(t *testing.T, path string) { symlink(t, "/dev/zero", path) }, "is a symbolic link"},
	"symlink-outside": {func(t *testing.T, path string) {
		outside := filepath.Join(t.TempDir(), "elsewhere.cwasm")
		os.WriteFile(outside, forged(), 0o600)
		symlink(t, outside, path)
	}, "is a symbolic link"},
	"too-large": {func(t *testing.T, path string) {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(abi.CacheFileLimit(len("the module")) + 1) // sparse: no disk used
		f.Close()
	}, "is larger than a compiled module of this module can be"},
	"lock-fifo": {func(t *testing.T, path string) { mkfifo(t, path+".lock") }, "its lock file"},
	"lock-symlink": {func(t *testing.T, path string) {
		symlink(t, filepath.Join(t.TempDir(), "elsewhere.lock"), path+".lock")
	}, "its lock file"},
}

func mkfifo(t *testing.T, path string) {
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, path string) {
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// TestCacheStrangeFiles runs each case of strangeFiles in a child process
// (TestCacheStrangeFileChild) with a timeout, so a read that waits for ever
// (a named pipe) or without end (/dev/zero) fails the case instead of the
// whole test binary: the child must answer with the compiled module,
// print one notice line, and not deserialize anything.
func TestCacheStrangeFiles(t *testing.T) {
	for name := range strangeFiles {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestCacheStrangeFileChild$", "-test.v")
			cmd.Env = append(os.Environ(), strangeFileEnv+"="+name)
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("the child still waited after 2 minutes (a hang):\n%s", out)
			}
			if err != nil || !bytes.Contains(out, []byte("--- PASS: TestCacheStrangeFileChild")) {
				t.Fatalf("the child failed (%v):\n%.3000s", err, out)
			}
			if _, notice, ok := strings.Cut(string(out), "notice: "); ok {
				t.Log(strings.SplitN(notice, "\n", 2)[0])
			}
		})
	}
}

// TestCacheStrangeFileChild is one case of TestCacheStrangeFiles, in the
// child process; its data segment is capped at 1 GiB, so a read without
// end fails in seconds rather than after taking the machine's memory.
func TestCacheStrangeFileChild(t *testing.T) {
	name := os.Getenv(strangeFileEnv)
	if name == "" {
		t.Skip("run by TestCacheStrangeFiles in a child process")
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: 1 << 30, Max: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	c := strangeFiles[name]
	root := t.TempDir()
	dir, path := fakeFiles(root)
	os.MkdirAll(dir, 0o755)
	c.plant(t, path)
	stderr := captureStderr(t)
	f := &fakeEngine{code: []byte("compiled code")}
	f.cached(t, root)
	if f.compiles != 1 || f.deserializes != 0 {
		t.Fatalf("%d compiles, %d deserializes: want the module compiled, nothing deserialized", f.compiles, f.deserializes)
	}
	got := stderr()
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, c.notice) {
		t.Fatalf("want one notice line saying %q, got:\n%s", c.notice, got)
	}
	fmt.Print("notice: ", got)
	if strings.HasPrefix(name, "lock-") {
		return // compiled in memory
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, Seal(SealBinding(filepath.Base(path[:len(path)-6]), "fake-1"), f.code)) {
		t.Fatalf("the file was not replaced by the sealed module (%v)", err)
	}
	f.cached(t, root) // and the next start uses it
	if f.compiles != 1 || f.deserializes != 1 {
		t.Fatalf("the replaced file is not used (%d compiles, %d deserializes)", f.compiles, f.deserializes)
	}
}

// plantedCache is a cache root whose fake-1 directory holds a planted file
// (forged), and the engine that must never deserialize it.
func plantedCache(t *testing.T) (root, dir, path string, f *fakeEngine) {
	root = t.TempDir()
	dir, path = fakeFiles(root)
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(path, forged(), 0o600); err != nil {
		t.Fatal(err)
	}
	return root, dir, path, &fakeEngine{code: []byte("compiled code")}
}

// needRoot skips a test that gives a file to another user.
func needRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user (chown) needs root; CI and the project's machines run the tests as root")
	}
}

// TestCacheUntrustedDirs: a cache directory (the root or wasmtime's) that
// another user owns or may write is neither read nor written, though a
// file planted in it carries a seal that verifies: the module is compiled
// in memory, with one notice line naming the directory and what to do,
// printed once however often the cache is opened.
func TestCacheUntrustedDirs(t *testing.T) {
	cases := []struct {
		name   string
		spoil  func(t *testing.T, root, dir string) string // returns the directory named
		notice string
	}{
		{"root world-writable", func(t *testing.T, root, dir string) string { os.Chmod(root, 0o777); return root }, "it is writable by other users (mode 0777)"},
		{"root sticky world-writable", func(t *testing.T, root, dir string) string { os.Chmod(root, 0o777|os.ModeSticky); return root }, "it is writable by other users (mode 1777)"},
		{"dir group-writable", func(t *testing.T, root, dir string) string { os.Chmod(dir, 0o775); return dir }, "it is writable by other users (mode 0775)"},
		{"root owned by another user", func(t *testing.T, root, dir string) string {
			needRoot(t)
			os.Chown(root, 65534, 65534)
			return root
		}, "it is owned by uid 65534, not by you (uid 0)"},
		{"dir owned by another user", func(t *testing.T, root, dir string) string {
			needRoot(t)
			os.Chown(dir, 65534, 65534)
			return dir
		}, "it is owned by uid 65534, not by you (uid 0)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, dir, path, f := plantedCache(t)
			named := c.spoil(t, root, dir)
			stderr := captureStderr(t)
			f.cached(t, root) // fails if the planted code is deserialized
			f.cached(t, root)
			if f.compiles != 2 || f.deserializes != 0 {
				t.Fatalf("%d compiles, %d deserializes: want compiled in memory each time", f.compiles, f.deserializes)
			}
			want := fmt.Sprintf("polyloop-assembly: not using the module cache %s: %s", named, c.notice)
			if got := stderr(); strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, want) || !strings.Contains(got, "POLYLOOP_ASSEMBLY_CACHE_DIR") {
				t.Fatalf("want one notice line %q..., got:\n%s", want, got)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, forged()) {
				t.Fatal("the untrusted directory was written")
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Fatalf("the untrusted directory was written: %v", entries)
			}
		})
	}
}

// TestCacheUntrustedFile: a .cwasm file in the cache that another user
// owns or may write is not read (its planted seal verifies) but compiled
// afresh and replaced: the directory is yours.
func TestCacheUntrustedFile(t *testing.T) {
	cases := []struct {
		name   string
		spoil  func(t *testing.T, path string)
		notice string
	}{
		{"world-writable", func(t *testing.T, path string) { os.Chmod(path, 0o666) }, "is writable by other users (mode 0666)"},
		{"owned by another user", func(t *testing.T, path string) { needRoot(t); os.Chown(path, 65534, 65534) }, "is owned by uid 65534, not by you (uid 0)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, _, path, f := plantedCache(t)
			c.spoil(t, path)
			stderr := captureStderr(t)
			f.cached(t, root)
			if got := stderr(); strings.Count(got, "\n") != 1 || !strings.Contains(got, path+" "+c.notice) || !strings.Contains(got, "replaced it") {
				t.Fatalf("want one notice line %q, got:\n%s", c.notice, got)
			}
			f.cached(t, root)
			if f.compiles != 1 || f.deserializes != 1 {
				t.Fatalf("%d compiles, %d deserializes: want one compile, then the replaced file used", f.compiles, f.deserializes)
			}
		})
	}
}

// TestWazeroUntrustedDirs: wazero is not handed a cache directory another
// user may write (the root, or wazero's own directory in it); it compiles
// in memory, says so once, and answers.
func TestWazeroUntrustedDirs(t *testing.T) {
	req := core.EncodeRequest(benchreq.Tiny())
	root := t.TempDir()
	open := func() {
		t.Helper()
		e, err := OpenWazero(Config{CacheDir: root})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		p := NewPool(e, Config{MaxInstances: 1})
		defer p.Close()
		if got, f := p.Call(abi.CallAssemble, req); f != nil || !bytes.Equal(got, core.AssembleBytes(req)) {
			t.Fatalf("wrong answer (%v)", f)
		}
	}
	stderr := captureStderr(t)
	os.Chmod(root, 0o777)
	open()
	if _, err := os.Stat(filepath.Join(root, "wazero")); err == nil {
		t.Fatal("wazero's cache was made in a world-writable root")
	}
	os.Chmod(root, 0o755)
	open() // fills root/wazero/<version>/
	versions, _ := os.ReadDir(filepath.Join(root, "wazero"))
	if len(versions) != 1 {
		t.Fatalf("wazero's directory holds %v", versions)
	}
	spoiled := filepath.Join(root, "wazero", versions[0].Name())
	os.Chmod(spoiled, 0o777)
	open()
	got := stderr()
	for _, dir := range []string{root, spoiled} {
		want := fmt.Sprintf("not using the module cache %s: it is writable by other users (mode 0777)", dir)
		if strings.Count(got, want) != 1 {
			t.Errorf("want one notice %q, got:\n%s", want, got)
		}
	}
	if strings.Count(got, "\n") != 2 {
		t.Errorf("want two notice lines, got:\n%s", got)
	}
}
