package core

// PLACEHOLDER: the template engine is being written (see issue 2, item 3).

// Template is a parsed, validated observation template.
type Template struct {
	src string
}

// ParseTemplate validates t as a CPython str.format template whose only field
// is observation. On failure the error has CodeInvalidTemplate, an empty Path
// and the code-point Offset of the problem.
func ParseTemplate(t string) (*Template, *Error) {
	return &Template{src: t}, nil
}

// RenderSize returns the UTF-8 byte length and code-point count of
// t.format(observation=obs). obs must be valid UTF-8.
func (t *Template) RenderSize(obs string) (nbytes int, nchars int64) {
	return 0, 0
}

// AppendRender appends t.format(observation=obs) to dst.
func (t *Template) AppendRender(dst []byte, obs string) []byte {
	return dst
}

// Render returns t.format(observation=obs).
func (t *Template) Render(obs string) string {
	return string(t.AppendRender(nil, obs))
}
