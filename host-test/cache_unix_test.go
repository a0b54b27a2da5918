//go:build unix

package hosttest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/polyloop/assembly/core"
	plumbing "github.com/polyloop/assembly/internal/engine"
	"github.com/polyloop/assembly/wasmhost/wasmtime"
)

// TestCacheStrangeFilesCLI: the CLI on a cache holding what it never
// writes, or one another user could write. Each run has a timeout (a named
// pipe used to hang it for ever) and, under wasmtime, a 4 GiB data limit
// (a symbolic link to /dev/zero used to be read until the machine's memory
// was gone), and
// must answer the vector fields-unknown-block as native Go does (its answer
// carries "unknown_field"; the planted module's, "unknown_fielX") with one
// notice line on stderr.
func TestCacheStrangeFilesCLI(t *testing.T) {
	bin := buildCLI(t)
	reqs, err := integrityRequests()
	if err != nil {
		t.Fatal(err)
	}
	req, want := reqs[0], core.AssembleBytes(reqs[0])
	if !bytes.Contains(want, []byte("unknown_field")) {
		t.Fatal("the true answer does not carry the string the planted module changes")
	}
	wasm, err := plumbing.LoadModule(plumbing.Config{})
	if err != nil {
		t.Fatal(err)
	}
	key := fmt.Sprintf("%x", sha256.Sum256(wasm))
	wtDir := "wasmtime-" + wasmtime.Version
	cli := func(t *testing.T, engine, root string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		args := []string{bin, "--engine", engine, "--in", "msgpack", "--out", "msgpack"}
		if engine == "wasmtime" { // wazero reserves its memories writable: they count
			args = append([]string{"sh", "-c", `ulimit -d 4194304 && exec "$@"`, "sh"}, args...)
		}
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "POLYLOOP_ASSEMBLY_CACHE_DIR="+root)
		cmd.Stdin = bytes.NewReader(req)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if ctx.Err() != nil {
			t.Fatalf("%s: no answer after 3 minutes (a hang); stderr:\n%s", engine, stderr.String())
		}
		if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) { // 1: an assembly error, as wanted
			t.Fatalf("%s: the CLI failed (%v); stderr:\n%.2000s", engine, err, stderr.String())
		}
		if !bytes.Equal(out, want) {
			t.Fatalf("%s: wrong answer (planted code run?): %.200q", engine, out)
		}
		return stderr.String()
	}
	oneNotice := func(t *testing.T, stderr, want string) {
		t.Helper()
		if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
			t.Fatalf("want one notice line with %q, got:\n%s", want, stderr)
		}
	}

	// A good sealed file, and a planted one: a string of its code changed,
	// under a seal that verifies (the seal is unkeyed).
	good := filepath.Join(t.TempDir(), "cache")
	cli(t, "wasmtime", good)
	sealed, err := os.ReadFile(filepath.Join(good, wtDir, key+".cwasm"))
	if err != nil {
		t.Fatal(err)
	}
	binding := plumbing.SealBinding(key, wtDir)
	payload, problem := plumbing.Unseal(binding, sealed)
	if problem != "" || !bytes.Contains(payload, []byte("unknown_field")) {
		t.Fatalf("the cold start wrote no usable file (%s)", problem)
	}
	planted := plumbing.Seal(binding, bytes.Replace(payload, []byte("unknown_field"), []byte("unknown_fielX"), 1))

	// newRoot is a cache root holding file at the .cwasm path (made by put).
	newRoot := func(t *testing.T, put func(path string) error) (root, path string) {
		root = filepath.Join(t.TempDir(), "cache")
		path = filepath.Join(root, wtDir, key+".cwasm")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := put(path); err != nil {
			t.Fatal(err)
		}
		return root, path
	}
	plant := func(path string) error { return os.WriteFile(path, planted, 0o600) }

	t.Run("fifo", func(t *testing.T) {
		root, path := newRoot(t, func(path string) error { return mkfifo(path) })
		oneNotice(t, cli(t, "wasmtime", root), path+" is a named pipe, not a regular file: compiled it afresh and replaced it")
		if got := cli(t, "wasmtime", root); got != "" {
			t.Fatalf("the replaced file does not serve silently: %s", got)
		}
	})
	t.Run("dev-zero", func(t *testing.T) {
		root, path := newRoot(t, func(path string) error { return os.Symlink("/dev/zero", path) })
		oneNotice(t, cli(t, "wasmtime", root), path+" is a symbolic link, not a file this cache wrote: compiled it afresh and replaced it")
	})
	t.Run("planted in a world-writable root", func(t *testing.T) {
		root, path := newRoot(t, plant)
		os.Chmod(root, 0o777)
		for _, engine := range []string{"wasmtime", "wazero"} {
			oneNotice(t, cli(t, engine, root), "not using the module cache "+root+": it is writable by other users (mode 0777)")
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, planted) {
			t.Fatal("the untrusted cache was written")
		}
		if _, err := os.Stat(filepath.Join(root, "wazero")); err == nil {
			t.Fatal("wazero's cache was made in the untrusted root")
		}
	})
	t.Run("planted in a root another user owns", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("giving a directory to another user (chown) needs root; CI and the project's machines run the tests as root")
		}
		root, _ := newRoot(t, plant)
		os.Chown(root, 65534, 65534)
		oneNotice(t, cli(t, "wasmtime", root), "not using the module cache "+root+": it is owned by uid 65534, not by you (uid 0)")
	})
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
