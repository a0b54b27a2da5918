package core

import (
	"testing"
)

// A request over 1 GiB is refused before decoding.
func TestTooLargeRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping a 1 GiB allocation")
	}
	big := make([]byte, MaxRequestBytes+1)
	_, err := DecodeResponse(AssembleBytes(big))
	e, ok := err.(*Error)
	if !ok || e.Code != CodeTooLarge || e.Path != "" {
		t.Fatalf("a request of 1 GiB + 1 byte: got %v, want too_large at \"\"", err)
	}
}

// A small request whose response would pass 1.5 GiB (a field of width
// 1,048,576 over 2,000 steps) is too_large, found before anything is
// allocated for the response.
func TestTooLargeResponse(t *testing.T) {
	steps := make([]Step, 2000)
	req := EncodeRequest(&Request{ObservationTemplate: "{observation:1048576}", Steps: steps})
	if len(req) > 64<<10 {
		t.Fatalf("the request should be small, it is %d bytes", len(req))
	}
	allocs := testing.AllocsPerRun(1, func() {
		_, err := DecodeResponse(AssembleBytes(req))
		e, ok := err.(*Error)
		if !ok || e.Code != CodeTooLarge {
			t.Fatalf("got %v, want too_large", err)
		}
	})
	if allocs > 200 {
		t.Fatalf("%v allocations: the response was built before the limit was checked", allocs)
	}
	// Just under the limit the same template is answered.
	steps = steps[:10]
	if _, err := DecodeResponse(AssembleBytes(EncodeRequest(&Request{ObservationTemplate: "{observation:1048576}", Steps: steps}))); err != nil {
		t.Fatalf("10 wide steps: %v", err)
	}
}

// InternalErrorResponse is a canonical error response with code internal.
func TestInternalErrorResponse(t *testing.T) {
	resp := InternalErrorResponse("boom")
	if err := checkCanonicalResponse(resp); err != nil {
		t.Fatal(err)
	}
	_, err := DecodeResponse(resp)
	if e, ok := err.(*Error); !ok || e.Code != CodeInternal || e.Message != "boom" || e.Path != "" {
		t.Fatalf("got %v", err)
	}
}
