package core

// SetLimits lowers the request and response limits (MaxRequestBytes,
// MaxResponseBytes) for a test of package core_test, until restore.
func SetLimits(request, response int) (restore func()) {
	oldReq, oldResp := maxRequest, maxResponse
	maxRequest, maxResponse = request, response
	return func() { maxRequest, maxResponse = oldReq, oldResp }
}

// RequestSize is requestSize (reqsize.go).
var RequestSize = requestSize

// BedrockShapeStrings are bedrockShape's msgpack strings, in order: the
// system and messages keys, the two message heads, the block head, the
// three cache points.
func BedrockShapeStrings() []string {
	s := &bedrockShape
	return []string{s.sysKey, s.listKey, s.heads[0], s.heads[1], s.blocks[0][0], s.marks[0], s.marks[1], s.marks[2]}
}
