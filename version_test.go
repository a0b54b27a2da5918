package assembly

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestVersionIsTheVersionFile(t *testing.T) {
	b, err := os.ReadFile("VERSION")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(b))
	if Version() != want {
		t.Fatalf("Version() = %q, VERSION holds %q", Version(), want)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(Version()) {
		t.Fatalf("Version() = %q is not a semantic version", Version())
	}
}
