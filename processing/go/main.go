// Seed 000's processing step in Go: read user.json, decode all of it with encoding/json into a
// []User, find the user by id with a loop, SHA-512 hex of the password. Timed per iteration with
// time.Now/time.Since (monotonic).
package main

import (
	"bufio"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

const usage = "usage: auth --users PATH --id N --password P [--iterations K] [--warmup W]"

type User struct {
	ID   int64  `json:"id"`
	Hash string `json:"hash"`
}

var errNotFound = errors.New("user not found")

// authenticate is one iteration, the article's steps: the file is read and decoded on every call.
func authenticate(usersPath string, inputID int64, inputPassword string) (*User, string, error) {
	content, err := os.ReadFile(usersPath)
	if err != nil {
		return nil, "", err
	}
	var users []User
	if err := json.Unmarshal(content, &users); err != nil {
		return nil, "", fmt.Errorf("cannot parse %s: %w", usersPath, err)
	}
	var user *User
	for i := range users {
		if users[i].ID == inputID {
			user = &users[i]
			break
		}
	}
	if user == nil {
		return nil, "", errNotFound
	}
	sum := sha512.Sum512([]byte(inputPassword))
	return user, hex.EncodeToString(sum[:]), nil
}

type args struct {
	users, password    string
	id                 int64
	iterations, warmup int64
	haveID             bool
}

func parseArgs(argv []string) (args, error) {
	a := args{iterations: 1}
	haveUsers, havePassword := false, false
	for i := 0; i < len(argv); i += 2 {
		flag := argv[i]
		if i+1 >= len(argv) {
			return a, fmt.Errorf("%s needs a value", flag)
		}
		value := argv[i+1]
		var err error
		switch flag {
		case "--users":
			a.users, haveUsers = value, true
		case "--id":
			a.id, err = integer(flag, value, -1<<63)
			a.haveID = true
		case "--password":
			a.password, havePassword = value, true
		case "--iterations":
			a.iterations, err = integer(flag, value, 1)
		case "--warmup":
			a.warmup, err = integer(flag, value, 0)
		default:
			err = fmt.Errorf("unknown argument %s", flag)
		}
		if err != nil {
			return a, err
		}
	}
	switch {
	case !haveUsers:
		return a, errors.New("--users is required")
	case !a.haveID:
		return a, errors.New("--id is required")
	case !havePassword:
		return a, errors.New("--password is required")
	}
	return a, nil
}

func integer(flag, text string, min int64) (int64, error) {
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: not an integer: %s", flag, text)
	}
	if n < min {
		return 0, fmt.Errorf("%s: must be >= %d: %s", flag, min, text)
	}
	return n, nil
}

func run() int {
	a, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "error %v; %s\n", err, usage)
		return 2
	}
	times := make([]time.Duration, 0, a.iterations)
	last := ""
	for i := int64(0); i < a.warmup+a.iterations; i++ {
		start := time.Now()
		user, hash, err := authenticate(a.users, a.id, a.password)
		elapsed := time.Since(start)
		// Checked outside the timed part: every result is used.
		if errors.Is(err, errNotFound) {
			fmt.Fprintf(os.Stderr, "error user %d not found\n", a.id)
			return 2
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "error %v\n", err)
			return 1
		}
		if user.ID != a.id || (last != "" && hash != last) {
			fmt.Fprintln(os.Stderr, "error inconsistent result")
			return 1
		}
		last = hash
		if i >= a.warmup {
			times = append(times, elapsed)
		}
	}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(out, "hash %s\n", last)
	for _, t := range times {
		fmt.Fprintf(out, "ns %d\n", t.Nanoseconds())
	}
	if err := out.Flush(); err != nil {
		return 1
	}
	return 0
}

func main() {
	os.Exit(run())
}
