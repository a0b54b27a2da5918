package abi

// The compiled-module cache, shared by the Go hosts and the Python binding
// (docs/SPEC.md §7.4):
//
//	<root>/wazero/                                   wazero's own cache (Go only)
//	<root>/wasmtime-<version>/<module sha256>.cwasm  a serialized wasmtime module, sealed
//	<root>/wasmtime-<version>/<...>.cwasm.lock       the cross-process compile lock
//
// <root> is $CacheDirEnv, else the user cache directory (Go's
// os.UserCacheDir) joined with CacheDirName; CacheDisabled as the variable
// (or as a host's cache_dir option) turns the disk cache off.
const (
	CacheDirEnv   = "POLYLOOP_ASSEMBLY_CACHE_DIR"
	CacheDirName  = "polyloop-assembly"
	CacheDisabled = "-"
	// CacheFileSuffix ends a cached module's file name (its module's sha256,
	// hex), CacheLockSuffix the name of its lock file after that.
	CacheFileSuffix = ".cwasm"
	CacheLockSuffix = ".lock"
	// CacheKeep is how many cached modules each wasmtime-<version>
	// directory keeps: the newest by modification time (a hit touches its
	// file).
	CacheKeep = 4
)

// A .cwasm file is the engine's serialized module followed by its seal: the
// trailer CacheSealMagic, then SHA-256(binding || serialized module), where
// the binding is CacheSealBindingFormat of the module's sha256 (hex) and the
// engine with its version (the directory's name, "wasmtime-<version>"). A
// file whose seal does not verify is never handed to the engine.
const (
	CacheSealMagic         = "polyloop-cwasm-1"
	CacheSealBindingFormat = "polyloop-assembly cwasm v1\n%s\n%s\n"
)

// CacheFileLimit is the size past which a .cwasm file of a module of
// moduleSize bytes is not read ("larger than ... can be"):
// CacheFileLimitModules times the module, plus CacheFileLimitExtraBytes.
// wasmtime's serialized code is about 3.2 times the module, so no file the
// cache wrote comes near it, and a read is bounded even if a file grows
// without end.
func CacheFileLimit(moduleSize int) int64 {
	return CacheFileLimitModules*int64(moduleSize) + CacheFileLimitExtraBytes
}

// The terms of CacheFileLimit.
const (
	CacheFileLimitModules    = 16
	CacheFileLimitExtraBytes = 16 << 20
)
