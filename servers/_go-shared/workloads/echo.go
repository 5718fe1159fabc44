package workloads

import (
	"fmt"
	"math"
)

// Kind is the echo records' enum; in JSON its name, e.g. "KIND_SMALL".
type Kind int32

const (
	KindUnspecified Kind = 0
	KindSmall       Kind = 1
	KindMedium      Kind = 2
	KindLarge       Kind = 3
)

var kindNames = [...]string{"KIND_UNSPECIFIED", "KIND_SMALL", "KIND_MEDIUM", "KIND_LARGE"}

// Known tells whether the number is one of the enum's values.
func (k Kind) Known() bool { return k >= 0 && int(k) < len(kindNames) }

// MarshalText writes the kind's name.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.Known() {
		return nil, fmt.Errorf("unknown kind %d", int32(k))
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText reads a kind's name; anything else (another name, a number) is an error.
func (k *Kind) UnmarshalText(text []byte) error {
	for i, name := range kindNames {
		if string(text) == name {
			*k = Kind(i)
			return nil
		}
	}
	return fmt.Errorf("unknown kind %q", text)
}

// Location is a record's place.
type Location struct {
	City      string  `json:"city"`
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
}

// coordinates are the latitude and longitude; 0, 0 for an absent location.
func (l *Location) coordinates() (latitude, longitude float64) {
	if l == nil {
		return 0, 0
	}
	return l.Latitude, l.Longitude
}

// Record is one echo record: mixed field types, like grpc_bench's complex_proto.
type Record struct {
	ID       int64     `json:"id"`
	Name     string    `json:"name"`
	Score    float64   `json:"score"`
	Active   bool      `json:"active"`
	Kind     Kind      `json:"kind"`
	Location *Location `json:"location,omitempty"`
	Tags     []string  `json:"tags,omitempty"`
	Samples  []int64   `json:"samples,omitempty"`
}

// EchoMessage is the echo call's request and reply.
type EchoMessage struct {
	Records []Record `json:"records"`
}

// CheckRecord is echo's rule for records[i]: a known kind and every number
// (score, latitude, longitude) finite.
func CheckRecord(i int, kind Kind, numbers ...float64) error {
	if !kind.Known() {
		return invalid("records[%d]: unknown kind %d", i, int32(kind))
	}
	for _, n := range numbers {
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return invalid("records[%d]: numbers must be finite", i)
		}
	}
	return nil
}

// Echo checks the message, which is then returned unchanged.
func Echo(m *EchoMessage) error {
	for i := range m.Records {
		r := &m.Records[i]
		lat, lon := r.Location.coordinates()
		if err := CheckRecord(i, r.Kind, r.Score, lat, lon); err != nil {
			return err
		}
	}
	return nil
}
