package workloads

import (
	"fmt"
	"strconv"
)

// UsersJSON is the deterministic users.json of seed 000, byte for byte what
// `callbench gen-users` writes: a JSON array of UserCount users {id, hash},
// one a line, a user's hash being the SHA-512 hex of "password-<id>". Tests use it.
func UsersJSON() []byte {
	out := make([]byte, 0, UserCount*152)
	out = append(out, "[\n"...)
	for id := 1; id <= UserCount; id++ {
		out = fmt.Appendf(out, `{"id":%d,"hash":"%s"}`, id, SHA512Hex("password-"+strconv.Itoa(id)))
		if id < UserCount {
			out = append(out, ",\n"...)
		} else {
			out = append(out, '\n')
		}
	}
	return append(out, "]\n"...)
}
