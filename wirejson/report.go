package wirejson

import "github.com/polyloop/assembly/core"

// AppendCacheReport answers a cache_report request (docs/SPEC.md §7.12):
// core.AppendCacheReportBytes, a request written as JSON text judged by
// Request, as assemble_json judges it.
func AppendCacheReport(dst, request []byte) []byte {
	return core.AppendCacheReportBytes(dst, request, fromJSON)
}

// AppendExport answers an export request (docs/SPEC.md §7.13):
// core.AppendExportBytes, the request as JSON text judged by Request.
func AppendExport(dst, request []byte) []byte {
	return core.AppendExportBytes(dst, request, fromJSON)
}

// AppendCacheCall answers a cache_call request (docs/SPEC.md §7.15):
// core.AppendCacheCallBytes, its JSON text judged by Request.
func AppendCacheCall(dst, request []byte) []byte {
	return core.AppendCacheCallBytes(dst, request, fromJSON)
}

func fromJSON(text []byte) ([]byte, *core.Error) { return Request(nil, text) }
