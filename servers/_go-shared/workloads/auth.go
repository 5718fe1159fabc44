package workloads

import (
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
)

// Mode is how a UserStore finds users.
type Mode string

const (
	// Preloaded parses users.json once at start into a map (the default).
	Preloaded Mode = "preloaded"
	// PerRequest reads, parses and searches users.json linearly on every call: what seed 000 measured.
	PerRequest Mode = "per-request"
)

// ParseMode reads a --mode value.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case Preloaded, PerRequest:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown mode %q (expected preloaded or per-request)", s)
}

// User is one entry of users.json, as in the seed.
type User struct {
	ID   int64  `json:"id"`
	Hash string `json:"hash"`
}

// AuthResponse is the reply of the auth call.
type AuthResponse struct {
	Hash string `json:"hash"`
}

// UserStore answers the auth call from users.json in one of the two modes.
type UserStore struct {
	mode  Mode
	path  string
	users map[int64]string // preloaded mode only
}

// OpenUsers opens the store; in preloaded mode it reads and parses the file now.
// In per-request mode the file is read once too, to fail at start rather than on the first call.
func OpenUsers(path string, mode Mode) (*UserStore, error) {
	users, err := readUsers(path)
	if err != nil {
		return nil, err
	}
	store := &UserStore{mode: mode, path: path}
	if mode == Preloaded {
		store.users = make(map[int64]string, len(users))
		for _, u := range users {
			store.users[u.ID] = u.Hash
		}
	}
	return store, nil
}

// Mode is the store's mode.
func (s *UserStore) Mode() Mode { return s.mode }

// Test is the auth call: the SHA-512 hex of the password of an existing user.
// NotFound for an unknown id, InvalidArgument for an empty or too long password.
func (s *UserStore) Test(id int64, password string) (*AuthResponse, error) {
	if err := checkPassword(password); err != nil {
		return nil, err
	}
	found := false
	if s.mode == Preloaded {
		_, found = s.users[id]
	} else {
		users, err := readUsers(s.path)
		if err != nil {
			return nil, internal("cannot read users: %v", err)
		}
		for _, u := range users {
			if u.ID == id {
				found = true
				break
			}
		}
	}
	if !found {
		return nil, notFound("no user with id %d", id)
	}
	return &AuthResponse{Hash: SHA512Hex(password)}, nil
}

func readUsers(path string) ([]User, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var users []User
	if err := json.Unmarshal(data, &users); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return users, nil
}

func checkPassword(password string) error {
	if password == "" {
		return invalid("password must not be empty")
	}
	if len(password) > MaxPasswordBytes {
		return invalid("password is longer than %d bytes", MaxPasswordBytes)
	}
	return nil
}

// SHA512Hex is the lowercase hex SHA-512 of the text's UTF-8 bytes.
func SHA512Hex(text string) string {
	sum := sha512.Sum512([]byte(text))
	return hex.EncodeToString(sum[:])
}
