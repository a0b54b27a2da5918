package wirejson

// SetMaxTextBytes lowers the longest text ToMsgpack reads, for a test of
// the over-4-GiB answer without 4 GiB of text; it returns the undo.
func SetMaxTextBytes(n int) (restore func()) {
	old := maxTextBytes
	maxTextBytes = n
	return func() { maxTextBytes = old }
}
