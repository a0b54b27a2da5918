//go:build !unix

package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// openCacheFile opens a cache file for reading unless it is a symbolic
// link; the caller checks what the opened file is (fileProblem). The file
// is nil when there is none; problem says why one cannot be used.
func openCacheFile(path string) (f *os.File, problem string) {
	before, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ""
	}
	if err == nil && before.Mode()&fs.ModeSymlink != 0 {
		return nil, symlinkProblem
	}
	if f, err = os.Open(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ""
		}
		return nil, fmt.Sprintf("could not be opened (%v)", errors.Unwrap(err))
	}
	if after, err := f.Stat(); err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, "changed while it was opened"
	}
	return f, ""
}

// untrusted: no owner or permission check on this platform (no uid; the
// mode bits Go reports are not the access control list).
func untrusted(fs.FileInfo) (problem, fix string) { return "", "" }
