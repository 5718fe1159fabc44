package workloads

import "strconv"

// The records workload, for the streaming calls: an upload answered once with
// the summary of its records, and a download of `count` records made by the
// contract's rule. Records are echo's and are checked as echo checks them.

// UploadSummary is the answer to an upload (REST JSON: lowerCamelCase, 64-bit integers as numbers).
type UploadSummary struct {
	Count       int64 `json:"count"`
	ActiveCount int64 `json:"activeCount"`
	FirstID     int64 `json:"firstId"`
	LastID      int64 `json:"lastId"`
	SampleCount int64 `json:"sampleCount"`
}

// Add counts the next record of the upload, given by its fields, after echo's
// check (CheckRecord, the record's index being the count so far): the gRPC
// server calls it with its protobuf record's fields.
func (s *UploadSummary) Add(id int64, active bool, samples int, kind Kind, score, latitude, longitude float64) error {
	if err := CheckRecord(int(s.Count), kind, score, latitude, longitude); err != nil {
		return err
	}
	if s.Count == 0 {
		s.FirstID = id
	}
	s.Count++
	if active {
		s.ActiveCount++
	}
	s.LastID = id
	s.SampleCount += int64(samples)
	return nil
}

// AddRecord is Add for a record in its REST shape.
func (s *UploadSummary) AddRecord(r *Record) error {
	lat, lon := r.Location.coordinates()
	return s.Add(r.ID, r.Active, len(r.Samples), r.Kind, r.Score, lat, lon)
}

// CheckDownload checks a download's count: 0..MaxDownload.
func CheckDownload(count int64) error {
	if count < 0 || count > MaxDownload {
		return invalid("count must be in 0..%d, got %d", MaxDownload, count)
	}
	return nil
}

// Downloaded is record i (from 0) of a download: id i + 1, name "record-" and
// i as six digits or more, score i / 2, active when i is even, kind 1 + i % 3,
// Springfield, tags alpha and beta, samples i, i + 1, i + 2.
func Downloaded(i int) Record {
	n := int64(i)
	return Record{
		ID:       n + 1,
		Name:     downloadName(i),
		Score:    float64(i) / 2,
		Active:   i%2 == 0,
		Kind:     Kind(1 + i%3),
		Location: &Location{City: "Springfield", Latitude: 39.78, Longitude: -89.65},
		Tags:     []string{"alpha", "beta"},
		Samples:  []int64{n, n + 1, n + 2},
	}
}

// downloadName is "record-" and i zero-padded to six digits (more when i needs them).
func downloadName(i int) string {
	digits := strconv.Itoa(i)
	if len(digits) < 6 {
		digits = "000000"[len(digits):] + digits
	}
	return "record-" + digits
}
