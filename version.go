// Package assembly is the root of the polyloop-assembly module. It holds the
// project's version; the assembler itself is in core (native), wasmhost (the
// WebAssembly module under wazero) and wasmhost/wasmtime (under wasmtime).
package assembly

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var version string

// Version is the project's version (the VERSION file at the repository root,
// the one place it is written): the Go module, the Python and npm packages,
// the command-line tool and the module all report it.
func Version() string { return strings.TrimSpace(version) }
