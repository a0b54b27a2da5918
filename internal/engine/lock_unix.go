//go:build unix

package engine

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on path (created if need be, 0600 so
// that no other user can open it and hold the lock), waiting while another
// process holds it. The path must be a regular file, not a symbolic link
// (O_NOFOLLOW) nor a named pipe (O_NONBLOCK: opening one does not wait);
// else the error is an *unusableFileError.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		if isSymlink(path) {
			return nil, &unusableFileError{path, symlinkProblem}
		}
		return nil, err
	}
	if _, problem := fileProblem(f); problem != "" {
		f.Close()
		return nil, &unusableFileError{path, problem}
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
