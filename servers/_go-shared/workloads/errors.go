package workloads

import (
	"errors"
	"fmt"
)

// ErrorKind is what went wrong, with its REST status and gRPC code.
type ErrorKind int

const (
	// InvalidArgument is 400 / INVALID_ARGUMENT.
	InvalidArgument ErrorKind = iota + 1
	// NotFound is 404 / NOT_FOUND.
	NotFound
	// Internal is 500 / INTERNAL (e.g. the users file cannot be read in per-request mode).
	Internal
)

// HTTPStatus is the kind's REST status.
func (k ErrorKind) HTTPStatus() int {
	switch k {
	case InvalidArgument:
		return 400
	case NotFound:
		return 404
	default:
		return 500
	}
}

// GRPCCode is the kind's numeric gRPC status code.
func (k ErrorKind) GRPCCode() uint32 {
	switch k {
	case InvalidArgument:
		return 3
	case NotFound:
		return 5
	default:
		return 13
	}
}

// Name is the gRPC code's name, also the `error.code` of REST error bodies.
func (k ErrorKind) Name() string {
	switch k {
	case InvalidArgument:
		return "INVALID_ARGUMENT"
	case NotFound:
		return "NOT_FOUND"
	default:
		return "INTERNAL"
	}
}

// Error is the error every workload function returns.
type Error struct {
	Kind    ErrorKind
	Message string
}

func (e *Error) Error() string { return e.Kind.Name() + ": " + e.Message }

// KindOf is the kind of a workload error; Internal for any other error.
func KindOf(err error) ErrorKind {
	var werr *Error
	if errors.As(err, &werr) {
		return werr.Kind
	}
	return Internal
}

// MessageOf is the message of a workload error, else the error's text.
func MessageOf(err error) string {
	var werr *Error
	if errors.As(err, &werr) {
		return werr.Message
	}
	return err.Error()
}

func invalid(format string, args ...any) error {
	return &Error{Kind: InvalidArgument, Message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &Error{Kind: NotFound, Message: fmt.Sprintf(format, args...)}
}

func internal(format string, args ...any) error {
	return &Error{Kind: Internal, Message: fmt.Sprintf(format, args...)}
}
