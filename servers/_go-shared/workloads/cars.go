package workloads

// Car is the car of seed 003's message.
type Car struct {
	Make    string `json:"make"`
	Model   string `json:"model"`
	Trim    string `json:"trim"`
	Color   string `json:"color"`
	Year    uint32 `json:"year"`
	Mileage uint32 `json:"mileage"`
}

// Driver is the driver of seed 003's message.
type Driver struct {
	Firstname string `json:"firstname"`
	Lastname  string `json:"lastname"`
	DriverID  string `json:"driverId"`
}

// CarMessage is the car + driver message; the cars call validates it and echoes it.
type CarMessage struct {
	Car    *Car    `json:"car,omitempty"`
	Driver *Driver `json:"driver,omitempty"`
}

// ValidateCar is the cars call's check: car and driver present, make and model
// non-empty, every string at most MaxStringBytes, year and mileage in range.
func ValidateCar(m *CarMessage) error {
	car, driver := m.Car, m.Driver
	if car == nil {
		return invalid("car is required")
	}
	if driver == nil {
		return invalid("driver is required")
	}
	if car.Make == "" || car.Model == "" {
		return invalid("car.make and car.model are required")
	}
	for _, s := range [...]string{car.Make, car.Model, car.Trim, car.Color, driver.Firstname, driver.Lastname, driver.DriverID} {
		if len(s) > MaxStringBytes {
			return invalid("strings are limited to %d bytes", MaxStringBytes)
		}
	}
	if car.Year < MinCarYear || car.Year > MaxCarYear {
		return invalid("car.year must be in %d..%d", MinCarYear, MaxCarYear)
	}
	if car.Mileage > MaxMileage {
		return invalid("car.mileage must be at most %d", MaxMileage)
	}
	return nil
}
