package workloads

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestASummaryCountsAndRemembersTheEnds(t *testing.T) {
	var s UploadSummary
	for i := range 5 {
		r := Downloaded(i)
		if err := s.AddRecord(&r); err != nil {
			t.Fatal(err)
		}
	}
	if want := (UploadSummary{Count: 5, ActiveCount: 3, FirstID: 1, LastID: 5, SampleCount: 15}); s != want {
		t.Errorf("%+v, expected %+v", s, want)
	}
	bad := []Record{{Score: math.Inf(1)}, {Location: &Location{Latitude: math.NaN()}}, {Kind: 9}, {Kind: -1}}
	for _, r := range bad {
		s := UploadSummary{Count: 1, FirstID: 7, LastID: 7}
		err := s.AddRecord(&r)
		if KindOf(err) != InvalidArgument || !strings.Contains(MessageOf(err), "records[1]") {
			t.Errorf("%+v: %v", r, err)
		}
		if s.Count != 1 || s.LastID != 7 {
			t.Errorf("a refused record was counted: %+v", s)
		}
	}
}

func TestDownloadsFollowTheContractsRule(t *testing.T) {
	out, _ := json.Marshal(Downloaded(3))
	want := `{"id":4,"name":"record-000003","score":1.5,"active":false,"kind":"KIND_SMALL",` +
		`"location":{"city":"Springfield","latitude":39.78,"longitude":-89.65},"tags":["alpha","beta"],"samples":[3,4,5]}`
	if string(out) != want {
		t.Errorf("%s\nexpected %s", out, want)
	}
	for i, name := range map[int]string{0: "record-000000", 999_999: "record-999999", 1_000_000: "record-1000000"} {
		if got := Downloaded(i).Name; got != name {
			t.Errorf("%d: %s", i, got)
		}
	}
	if r := Downloaded(0); r.Kind != KindSmall || !r.Active || r.Score != 0 {
		t.Errorf("%+v", r)
	}
	if r := Downloaded(5); r.Kind != KindLarge || r.Active || r.Score != 2.5 {
		t.Errorf("%+v", r)
	}
	for _, count := range []int64{-1, MaxDownload + 1, math.MinInt64} {
		if KindOf(CheckDownload(count)) != InvalidArgument {
			t.Errorf("count %d passed", count)
		}
	}
	if CheckDownload(0) != nil || CheckDownload(MaxDownload) != nil {
		t.Error("0 or the most was refused")
	}
}

func TestSummariesAreCamelCaseJSON(t *testing.T) {
	out, _ := json.Marshal(UploadSummary{Count: 2, ActiveCount: 1, FirstID: 7, LastID: 8})
	if want := `{"count":2,"activeCount":1,"firstId":7,"lastId":8,"sampleCount":0}`; string(out) != want {
		t.Errorf("%s", out)
	}
}
