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
