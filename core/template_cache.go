package core

import "sync/atomic"

// lastTemplate caches the most recently parsed template: an agent loop sends
// the same template with every request, and parsing costs more than
// assembling a small request (a Template is immutable, so sharing it is safe).
var lastTemplate atomic.Pointer[Template]

// parseTemplateCached is ParseTemplate with a one-entry cache for templates
// of at most maxCachedTemplate bytes (a larger one is parsed each time: the
// cache would hold a copy of it for the life of the process).
func parseTemplateCached(src string) (*Template, *Error) {
	if len(src) > maxCachedTemplate {
		return ParseTemplate(src)
	}
	if t := lastTemplate.Load(); t != nil && equalText(t.src, src) {
		return t, nil
	}
	// src may alias a request buffer (decoded strings are not copied), and
	// the template's literals are slices of its text: parse a copy.
	t, err := ParseTemplate(string([]byte(src)))
	if err == nil {
		lastTemplate.Store(t)
	}
	return t, err
}

const maxCachedTemplate = 1 << 16
