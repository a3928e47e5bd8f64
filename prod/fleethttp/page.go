package fleethttp

// Pagination: the page size, fleet's nextPageToken (keyset, not offset) and one page of
// sorted items. Separate because the list handlers of units, machines and states share
// it.

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"sort"
)

func (s *Server) pageSize() int {
	if s.PageSize <= 0 || s.PageSize > 65535 {
		return DefaultPageSize
	}
	return s.PageSize
}

// Pagination: a token is base64url(limit uint16 LE | last key). Keyset, not offset.

func encodeToken(limit int, last string) string {
	b := make([]byte, 2, 2+len(last))
	binary.LittleEndian.PutUint16(b, uint16(limit))
	return base64.URLEncoding.EncodeToString(append(b, last...))
}

func (s *Server) pageStart(r *http.Request) (after string, err error) {
	q := r.URL.Query()["nextPageToken"]
	if len(q) == 0 {
		return "", nil
	}
	if len(q) > 1 {
		return "", errors.New("nextPageToken repeated")
	}
	b, err := base64.URLEncoding.DecodeString(q[0])
	if err != nil || len(b) < 3 {
		return "", errors.New("invalid nextPageToken")
	}
	if l := int(binary.LittleEndian.Uint16(b)); l != s.pageSize() {
		return "", fmt.Errorf("token limit must be %d", s.pageSize())
	}
	return string(b[2:]), nil
}

// page returns the items of sorted keys after `after`, at most one page, and the next token.
func page[T any](s *Server, items []T, key func(T) string, after string) ([]T, string) {
	i := sort.Search(len(items), func(i int) bool { return key(items[i]) > after })
	if after == "" {
		i = 0
	}
	end := min(i+s.pageSize(), len(items))
	out := items[i:end]
	if end < len(items) && len(out) > 0 {
		return out, encodeToken(s.pageSize(), key(out[len(out)-1]))
	}
	return out, ""
}
