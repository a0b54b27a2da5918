package core_test

import (
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/randreq"
	"github.com/polyloop/assembly/internal/testing/vectors"
)

// TestPythonWords: with the python vocabulary, no message of any vector's
// error, nor of 3,000 random requests', says a wire word (msgpack, map,
// array, nil, bin, ext); with the default one, the same requests give the
// same codes and paths, only other words.
func TestPythonWords(t *testing.T) {
	cases, err := vectors.Load("../testdata/vectors")
	if err != nil {
		t.Fatal(err)
	}
	reqs := make([][]byte, 0, len(cases)+3000)
	for _, c := range cases {
		reqs = append(reqs, c.Request)
	}
	r := rand.New(rand.NewPCG(34, 4))
	for range 3000 {
		reqs = append(reqs, randreq.Bytes(r))
	}
	wire := regexp.MustCompile(`msgpack|\bmaps?\b|\barrays?\b|\bnil\b|\bbin\b|\bext\b`)
	if !core.SetWords("python") {
		t.Fatal("no python vocabulary")
	}
	defer core.SetWords("wire")
	said, errs := 0, 0
	var python []*core.Error
	for _, req := range reqs {
		_, err := core.DecodeResponse(core.AssembleBytes(req))
		e, _ := err.(*core.Error)
		python = append(python, e)
		if e == nil {
			continue
		}
		errs++
		if wire.MatchString(e.Message) {
			t.Errorf("a Python user reads %q", e.Message)
		}
		if regexp.MustCompile(`\bdict\b|\blist\b|\bNone\b`).MatchString(e.Message) {
			said++
		}
	}
	if errs < 500 || said < 50 {
		t.Fatalf("%d errors, %d in Python words: the test compares too little", errs, said)
	}
	core.SetWords("wire")
	for i, req := range reqs {
		_, err := core.DecodeResponse(core.AssembleBytes(req))
		e, _ := err.(*core.Error)
		if (e == nil) != (python[i] == nil) || e != nil && (e.Code != python[i].Code || e.Path != python[i].Path) {
			t.Fatalf("request %d: the vocabulary changed the verdict: %v / %v", i, e, python[i])
		}
	}
	core.SetWords("js")
	for i, req := range reqs {
		_, err := core.DecodeResponse(core.AssembleBytes(req))
		if e, _ := err.(*core.Error); e != nil && regexp.MustCompile(`msgpack|\bmaps?\b|\bnil\b|\bbin\b|\bext\b|\bdict\b|\bNone\b|\bstr\b([^.]|$)`).MatchString(e.Message) {
			t.Errorf("request %d: a JavaScript user reads %q", i, e.Message)
		}
	}
	core.SetWords("wire")
	if core.SetWords("klingon") {
		t.Error("an unknown vocabulary was taken")
	}
}
