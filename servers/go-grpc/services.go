package main

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"callbench/go-grpc/internal/pb"
	"callbench/goshared/workloads"
)

// The contract's services. grpc-go runs each call on its own goroutine and the
// workload runs inline there (per-request auth's file read too): GOMAXPROCS
// bounds the threads. Undecodable messages and invalid UTF-8 never get here:
// grpc-go answers them INTERNAL.

type authService struct {
	pb.UnimplementedAuthServer
	users *workloads.UserStore
}

func (s *authService) Test(_ context.Context, req *pb.AuthRequest) (*pb.AuthResponse, error) {
	reply, err := s.users.Test(req.GetId(), req.GetPassword())
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.AuthResponse{Hash: reply.Hash}, nil
}

type studentsService struct {
	pb.UnimplementedStudentsServer
}

func (studentsService) List(context.Context, *pb.ListStudentsRequest) (*pb.ListStudentsResponse, error) {
	return studentsToPB(workloads.ListStudents()), nil
}

type carsService struct {
	pb.UnimplementedCarsServer
}

// Send validates the message and answers it unchanged.
func (carsService) Send(_ context.Context, m *pb.CarMessage) (*pb.CarMessage, error) {
	if err := workloads.ValidateCar(carFromPB(m)); err != nil {
		return nil, toStatus(err)
	}
	return m, nil
}

type lifeService struct {
	pb.UnimplementedLifeServer
}

func (lifeService) Setup(context.Context, *pb.SetupRequest) (*pb.Board, error) {
	return boardToPB(workloads.LifeSetup()), nil
}

func (lifeService) Step(_ context.Context, req *pb.StepRequest) (*pb.Board, error) {
	board, err := workloads.LifeStep(cellsFromPB(req.GetBoard()), req.GetNtimes())
	if err != nil {
		return nil, toStatus(err)
	}
	return boardToPB(board), nil
}

type echoService struct {
	pb.UnimplementedEchoServer
}

// Echo checks the message and answers it unchanged. Protobuf enums are open,
// so an unknown kind number arrives here and is refused by the check.
func (echoService) Echo(_ context.Context, m *pb.EchoMessage) (*pb.EchoMessage, error) {
	if err := checkEcho(m); err != nil {
		return nil, toStatus(err)
	}
	return m, nil
}

// checkEcho is echo's check of every record (Records/Converse checks its messages with it too).
func checkEcho(m *pb.EchoMessage) error {
	for i, r := range m.GetRecords() {
		loc := r.GetLocation() // nil-safe getters: an absent location reads as 0, 0
		err := workloads.CheckRecord(i, workloads.Kind(r.GetKind()), r.GetScore(), loc.GetLatitude(), loc.GetLongitude())
		if err != nil {
			return err
		}
	}
	return nil
}

// toStatus is a workload error as a gRPC status, its code from the workload's kind.
func toStatus(err error) error {
	kind := workloads.KindOf(err)
	return status.Error(codes.Code(kind.GRPCCode()), workloads.MessageOf(err))
}
