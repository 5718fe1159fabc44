package main

import (
	"callbench/go-grpc/internal/pb"
	"callbench/goshared/workloads"
)

// Moves between the protobuf messages and the workload types; strings are shared, not copied.

func studentsToPB(list *workloads.ListStudentsResponse) *pb.ListStudentsResponse {
	out := &pb.ListStudentsResponse{Students: make([]*pb.Student, len(list.Students))}
	for i, s := range list.Students {
		student := &pb.Student{
			Id:             s.ID,
			FirstName:      s.FirstName,
			LastName:       s.LastName,
			Email:          s.Email,
			Age:            s.Age,
			Gpa:            s.GPA,
			Enrolled:       s.Enrolled,
			Major:          s.Major,
			Courses:        s.Courses,
			EnrollmentDate: s.EnrollmentDate,
			Phone:          s.Phone,
		}
		if a := s.Address; a != nil {
			student.Address = &pb.Address{
				Street:     a.Street,
				City:       a.City,
				State:      a.State,
				PostalCode: a.PostalCode,
				Country:    a.Country,
			}
		}
		out.Students[i] = student
	}
	return out
}

func carFromPB(m *pb.CarMessage) *workloads.CarMessage {
	var out workloads.CarMessage
	if c := m.GetCar(); c != nil {
		out.Car = &workloads.Car{
			Make:    c.GetMake(),
			Model:   c.GetModel(),
			Trim:    c.GetTrim(),
			Color:   c.GetColor(),
			Year:    c.GetYear(),
			Mileage: c.GetMileage(),
		}
	}
	if d := m.GetDriver(); d != nil {
		out.Driver = &workloads.Driver{Firstname: d.GetFirstname(), Lastname: d.GetLastname(), DriverID: d.GetDriverId()}
	}
	return &out
}

func cellsFromPB(cells []*pb.Cell) []workloads.Cell {
	out := make([]workloads.Cell, len(cells))
	for i, c := range cells {
		out[i] = workloads.Cell{X: c.GetX(), Y: c.GetY()}
	}
	return out
}

func boardToPB(board *workloads.Board) *pb.Board {
	// One allocation for all the cells rather than one per cell.
	cells := make([]pb.Cell, len(board.Board))
	out := &pb.Board{Board: make([]*pb.Cell, len(board.Board))}
	for i, c := range board.Board {
		cells[i].X, cells[i].Y = c.X, c.Y
		out.Board[i] = &cells[i]
	}
	return out
}

func recordToPB(r *workloads.Record) *pb.Record {
	out := &pb.Record{
		Id:      r.ID,
		Name:    r.Name,
		Score:   r.Score,
		Active:  r.Active,
		Kind:    pb.Kind(r.Kind),
		Tags:    r.Tags,
		Samples: r.Samples,
	}
	if l := r.Location; l != nil {
		out.Location = &pb.Location{City: l.City, Latitude: l.Latitude, Longitude: l.Longitude}
	}
	return out
}
