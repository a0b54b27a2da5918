// Command gen writes the benchmark requests of package benchreq as msgpack
// files (tiny.msgpack, typical.msgpack, 1MB.msgpack, 16MB.msgpack) into the
// directory given, for the Python and JavaScript benchmarks.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/benchreq"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/testing/benchreq/gen DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, n := range benchreq.Set() {
		b := core.EncodeRequest(n.Request)
		if err := os.WriteFile(filepath.Join(dir, n.Name+".msgpack"), b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%s/%s.msgpack: %d bytes\n", dir, n.Name, len(b))
	}
}
