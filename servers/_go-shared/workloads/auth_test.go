package workloads

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeUsers(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(path, UsersJSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUsersJSONIsTheContractsFile(t *testing.T) {
	// The digest is in contract/README.md: every generator, in every language, must match it.
	data := UsersJSON()
	if sum := sha256.Sum256(data); len(data) != 1_508_897 || hex.EncodeToString(sum[:]) != "f05aecc030315eb68cf1d208d42bb96f787b020f19f1fbbb9c803191401dc05c" {
		t.Fatalf("%d bytes, SHA-256 %x", len(data), sum)
	}
}

func TestSHA512MatchesTheFIPS180Vector(t *testing.T) {
	want := "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
	if got := SHA512Hex("abc"); got != want {
		t.Fatalf("got %s", got)
	}
}

func TestBothModesAgree(t *testing.T) {
	path := writeUsers(t)
	for _, mode := range []Mode{Preloaded, PerRequest} {
		s, err := OpenUsers(path, mode)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := s.Test(9999, "abc"); err != nil || r.Hash != SHA512Hex("abc") {
			t.Errorf("%s: %v %v", mode, r, err)
		}
		cases := []struct {
			id       int64
			password string
			kind     ErrorKind
		}{
			{0, "abc", NotFound},
			{10_001, "abc", NotFound},
			{-5, "abc", NotFound},
			{1, "", InvalidArgument},
			{1, strings.Repeat("x", MaxPasswordBytes+1), InvalidArgument},
		}
		for _, c := range cases {
			if _, err := s.Test(c.id, c.password); KindOf(err) != c.kind {
				t.Errorf("%s: Test(%d, %d bytes) = %v, want %s", mode, c.id, len(c.password), err, c.kind.Name())
			}
		}
	}
	if _, err := OpenUsers(filepath.Join(t.TempDir(), "nope.json"), Preloaded); err == nil {
		t.Error("a missing users file opened")
	}
}
