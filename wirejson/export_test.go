package wirejson

// SetMaxTextBytes lowers the longest text ToMsgpack reads, for a test of
// the over-4-GiB answer without 4 GiB of text; it returns the undo.
func SetMaxTextBytes(n int) (restore func()) {
	old := maxTextBytes
	maxTextBytes = n
	return func() { maxTextBytes = old }
}

// SetFullDepth sets the deepest level ToMsgpack writes as it is (fullDepth)
// until restore.
func SetFullDepth(n int) (restore func()) {
	old := fullDepth
	fullDepth = n
	return func() { fullDepth = old }
}

// FullDepth is fullDepth.
func FullDepth() int { return fullDepth }

// AppendStandIn is appendStandIn.
var AppendStandIn = appendStandIn

// ToMsgpackPadded is ToMsgpack writing every stand-in at its value's size,
// as ToMsgpack does for a request over the core's limit.
func ToMsgpackPadded(dst, src []byte) ([]byte, error) {
	p := parser{src: src, out: dst, pad: true}
	if err := p.run(); err != nil {
		return nil, err
	}
	return p.widen(), nil
}
