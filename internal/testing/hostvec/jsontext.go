package hostvec

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/polyloop/assembly/core"
	"github.com/polyloop/assembly/internal/testing/vectors"
)

// CheckJSON reports whether resp, a host's answer to c.Text, is what the
// JSON-text case expects: the exact bytes of an ok case; for an error case a
// canonical error response with the case's code and path and a message
// (starting with vectors.SyntaxPrefix for a syntax error).
func CheckJSON(c vectors.JSONCase, resp []byte) error {
	if c.Response != nil {
		if !bytes.Equal(resp, c.Response) {
			return fmt.Errorf("the response differs from the expected %d bytes (got %d bytes: %.200q)", len(c.Response), len(resp), resp)
		}
		return nil
	}
	_, err := core.DecodeResponse(resp)
	var e *core.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("want error %s at %q, got a response that is not an error (%v)", c.Error.Code, c.Error.Path, err)
	}
	if string(e.Code) != c.Error.Code || e.Path != c.Error.Path {
		return fmt.Errorf("want %s at %q, got %s at %q: %s", c.Error.Code, c.Error.Path, e.Code, e.Path, e.Message)
	}
	if e.Message == "" || c.Syntax && !strings.HasPrefix(e.Message, vectors.SyntaxPrefix) {
		return fmt.Errorf("the message %q of a %s error does not start with %q", e.Message, e.Code, vectors.SyntaxPrefix)
	}
	if canon := core.ErrorResponse(e); !bytes.Equal(canon, resp) {
		return fmt.Errorf("the error response is not canonical:\n got  %x\n want %x", resp, canon)
	}
	return nil
}
