// Command gen writes the requests of package limitreq as msgpack files
// (NAME.msgpack) into DIR, at scale SIZE bytes, and a manifest
// (cases.json: name, file, expected code and path, the native response's
// size and SHA-256) for the Python and
// JavaScript limits tests. SIZE "full" is the full sizes.
//
//	go run ./internal/testing/limitreq/gen DIR SIZE|full
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/limitreq"
)

// entry is one case of cases.json. The expected response is the native
// core's (every host must answer the same bytes): its size and SHA-256.
type entry struct {
	Name          string `json:"name"`
	Description   string `json:"description"`
	File          string `json:"file"`
	Bytes         int    `json:"bytes"`
	Code          string `json:"code"`
	Path          string `json:"path"`
	ResponseBytes int    `json:"response_bytes"`
	ResponseSHA   string `json:"response_sha256"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/testing/limitreq/gen DIR SIZE")
		os.Exit(2)
	}
	dir := os.Args[1]
	n, tb := limitreq.FullSize, limitreq.FullTemplateBytes
	if os.Args[2] != "full" {
		var err error
		n, err = strconv.Atoi(os.Args[2])
		if err != nil || n < 64 || n > limitreq.FullTemplateBytes {
			fmt.Fprintln(os.Stderr, "SIZE must be full or a byte count from 64 to 1 GiB − 64")
			os.Exit(2)
		}
		tb = n
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var manifest []entry
	for _, c := range limitreq.Cases(n, tb) {
		file := c.Name + ".msgpack"
		if err := os.WriteFile(filepath.Join(dir, file), c.Request, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		resp := core.AssembleBytes(c.Request)
		sum := sha256.Sum256(resp)
		manifest = append(manifest, entry{c.Name, c.Description, file, len(c.Request), string(c.Code), c.Path, len(resp), hex.EncodeToString(sum[:])})
	}
	b, _ := json.MarshalIndent(manifest, "", " ")
	if err := os.WriteFile(filepath.Join(dir, "cases.json"), append(b, '\n'), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
