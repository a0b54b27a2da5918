package core

import "testing"

// The one size rule of the wire function and of the typed check.
func TestCheckRequestSize(t *testing.T) {
	if err := checkRequestSize(MaxRequestBytes); err != nil {
		t.Fatalf("1 GiB exactly: %v", err)
	}
	if err := checkRequestSize(MaxRequestBytes + 1); err == nil || err.Code != CodeTooLarge || err.Path != "" {
		t.Fatalf("1 GiB + 1: %v, want too_large", err)
	}
}
