package core

// AssembleBytes is the wire function of SPEC §2-6: it decodes a msgpack request,
// assembles it and returns the canonical msgpack response, ok or error. It never
// panics and never writes to stdout.
func AssembleBytes(request []byte) []byte {
	return nil // PLACEHOLDER: being written
}

// InternalErrorResponse returns the canonical error response with code
// internal and the given message. Hosts use it for failures outside the core.
func InternalErrorResponse(msg string) []byte {
	return nil // PLACEHOLDER
}
