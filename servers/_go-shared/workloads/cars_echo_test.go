package workloads

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func seedCar() *CarMessage {
	return &CarMessage{
		Car:    &Car{Make: "toyota", Model: "corolla", Trim: "4DR Sedan", Color: "gray", Year: 2012, Mileage: 120000},
		Driver: &Driver{Firstname: "John", Lastname: "Smith", DriverID: "someId"},
	}
}

func TestCarsAcceptsTheSeedMessageAndRejectsWhatTheContractRejects(t *testing.T) {
	if err := ValidateCar(seedCar()); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(m *CarMessage){
		"year 1885":  func(m *CarMessage) { m.Car.Year = 1885 },
		"year 2101":  func(m *CarMessage) { m.Car.Year = 2101 },
		"no driver":  func(m *CarMessage) { m.Driver = nil },
		"no car":     func(m *CarMessage) { m.Car = nil },
		"empty make": func(m *CarMessage) { m.Car.Make = "" },
		"long make":  func(m *CarMessage) { m.Car.Make = strings.Repeat("x", MaxStringBytes+1) },
		"long id":    func(m *CarMessage) { m.Driver.DriverID = strings.Repeat("é", 129) },
		"mileage":    func(m *CarMessage) { m.Car.Mileage = MaxMileage + 1 },
	}
	for name, change := range bad {
		m := seedCar()
		change(m)
		if err := ValidateCar(m); KindOf(err) != InvalidArgument {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestEchoRejectsNonFiniteNumbersAndUnknownKinds(t *testing.T) {
	ok := &EchoMessage{Records: []Record{{Score: 1.5, Kind: KindLarge, Location: &Location{Latitude: 1}}, {}}}
	if err := Echo(ok); err != nil {
		t.Fatal(err)
	}
	for _, r := range []Record{{Score: math.NaN()}, {Location: &Location{Longitude: math.Inf(-1)}}, {Kind: 4}, {Kind: -1}} {
		if err := Echo(&EchoMessage{Records: []Record{r}}); KindOf(err) != InvalidArgument {
			t.Errorf("%+v: %v", r, err)
		}
	}
}

func TestKindsAreNamesInJSON(t *testing.T) {
	out, _ := json.Marshal(Record{Kind: KindSmall})
	if !strings.Contains(string(out), `"kind":"KIND_SMALL"`) {
		t.Errorf("%s", out)
	}
	var m EchoMessage
	for _, bad := range []string{`"KIND_HUGE"`, `1`, `"kind_small"`} {
		if err := json.Unmarshal([]byte(`{"records":[{"kind":`+bad+`}]}`), &m); err == nil {
			t.Errorf("kind %s decoded", bad)
		}
	}
}
