//go:build unix

package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openCacheFile opens a cache file for reading without following a
// symbolic link (O_NOFOLLOW) or waiting for a writer of a named pipe
// (O_NONBLOCK); the caller checks what the descriptor is (fileProblem).
// The file is nil when there is none; problem says why one cannot be used.
func openCacheFile(path string) (f *os.File, problem string) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err == nil {
		return f, ""
	}
	return nil, openProblem(path, err)
}

// untrusted says why a cache directory or file must not be trusted, and
// what to do about it: it is not owned by this process's effective user
// (nor by root, who can replace any of your files anyway), or its group or
// others may write it; "" if it may be trusted. As ssh treats its keys:
// whoever can write the cache can seal code of their own, since the seal is
// unkeyed (docs/SPEC.md §7.4).
func untrusted(fi fs.FileInfo) (problem, fix string) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", ""
	}
	if euid := os.Geteuid(); int(st.Uid) != euid && st.Uid != 0 {
		return fmt.Sprintf("owned by uid %d, not by you (uid %d)", st.Uid, euid), "chown it to yourself or remove it"
	}
	if st.Mode&0o022 != 0 {
		return fmt.Sprintf("writable by other users (mode %04o)", st.Mode&0o7777), "chmod go-w it"
	}
	return "", ""
}

// openProblem is why opening path failed, as a phrase for a notice; ""
// when there is no file.
func openProblem(path string, err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if isSymlink(path) {
		return symlinkProblem
	}
	return fmt.Sprintf("could not be opened (%v)", errors.Unwrap(err))
}
