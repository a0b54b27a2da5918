package core

// Code is a machine-readable error code of the wire format.
type Code string

// The error codes of docs/SPEC.md §6.
const (
	CodeMalformedRequest   Code = "malformed_request"
	CodeUnsupportedVersion Code = "unsupported_version"
	CodeUnknownField       Code = "unknown_field"
	CodeMissingField       Code = "missing_field"
	CodeDuplicateKey       Code = "duplicate_key"
	CodeInvalidUTF8        Code = "invalid_utf8"
	CodeInvalidRole        Code = "invalid_role"
	CodeUnknownBlockType   Code = "unknown_block_type"
	CodeInvalidEntryID     Code = "invalid_entry_id"
	CodeInvalidBudget      Code = "invalid_budget"
	CodeInvalidTemplate    Code = "invalid_template"
	CodeTooLarge           Code = "too_large"
	CodeInternal           Code = "internal"
)

// Codes returns every error code, in the order of the const block above
// (docs/SPEC.md §6): the bindings' ERROR_CODES, generated from it by
// tools/genconsts. TestCodesListsEveryCode keeps the two in step.
func Codes() []Code {
	return []Code{
		CodeMalformedRequest, CodeUnsupportedVersion, CodeUnknownField, CodeMissingField,
		CodeDuplicateKey, CodeInvalidUTF8, CodeInvalidRole, CodeUnknownBlockType,
		CodeInvalidEntryID, CodeInvalidBudget, CodeInvalidTemplate, CodeTooLarge, CodeInternal,
	}
}

// Error is the one error type of this package. Path names the offending value
// (for example `steps[3].observation`; empty for the whole request). For
// template errors Offset is the code-point offset in the template where the
// problem is; it is -1 otherwise.
type Error struct {
	Code    Code
	Path    string
	Message string
	Offset  int
	Detail  string // a host's own account of an internal error (trap text, module stderr): never on the wire
}

func (e *Error) Error() string {
	if e.Path != "" {
		return string(e.Code) + " at " + e.Path + ": " + e.Message
	}
	return string(e.Code) + ": " + e.Message
}

func newError(code Code, path, msg string) *Error {
	return &Error{Code: code, Path: path, Message: msg, Offset: -1}
}

// ErrorResponse returns the canonical wire response for e. Hosts use it to
// answer in the wire format for problems found before the core runs (a JSON
// syntax error in the command-line tool, say).
func ErrorResponse(e *Error) []byte {
	return encodeError(e)
}
