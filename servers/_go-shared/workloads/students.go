package workloads

// Address is a student's postal address.
type Address struct {
	Street     string `json:"street"`
	City       string `json:"city"`
	State      string `json:"state"`
	PostalCode string `json:"postalCode"`
	Country    string `json:"country"`
}

// Student is one record of seed 002.
type Student struct {
	ID             int64    `json:"id"`
	FirstName      string   `json:"firstName"`
	LastName       string   `json:"lastName"`
	Email          string   `json:"email"`
	Age            int32    `json:"age"`
	GPA            float64  `json:"gpa"`
	Enrolled       bool     `json:"enrolled"`
	Major          string   `json:"major"`
	Courses        []string `json:"courses"`
	Address        *Address `json:"address,omitempty"`
	EnrollmentDate string   `json:"enrollmentDate"`
	Phone          string   `json:"phone"`
}

// ListStudentsResponse is the reply of the students call.
type ListStudentsResponse struct {
	Students []Student `json:"students"`
}

// ListStudents returns the two records (contract/vectors/students.json), built
// on every call as a handler returning fresh data would.
func ListStudents() *ListStudentsResponse {
	return &ListStudentsResponse{Students: []Student{
		{
			ID:        1,
			FirstName: "Emily",
			LastName:  "Johnson",
			Email:     "emily.johnson@example.edu",
			Age:       20,
			GPA:       3.8,
			Enrolled:  true,
			Major:     "Computer Science",
			Courses:   []string{"Data Structures", "Operating Systems", "Linear Algebra", "Databases"},
			Address: &Address{
				Street:     "1420 Maple Avenue",
				City:       "Springfield",
				State:      "IL",
				PostalCode: "62704",
				Country:    "USA",
			},
			EnrollmentDate: "2023-09-01",
			Phone:          "+1-217-555-0142",
		},
		{
			ID:        2,
			FirstName: "Michael",
			LastName:  "Chen",
			Email:     "michael.chen@example.edu",
			Age:       22,
			GPA:       3.45,
			Enrolled:  true,
			Major:     "Mechanical Engineering",
			Courses:   []string{"Thermodynamics", "Fluid Mechanics", "Materials Science", "Calculus III"},
			Address: &Address{
				Street:     "87 Oak Street, Apt 3B",
				City:       "Madison",
				State:      "WI",
				PostalCode: "53703",
				Country:    "USA",
			},
			EnrollmentDate: "2021-09-01",
			Phone:          "+1-608-555-0187",
		},
	}}
}
