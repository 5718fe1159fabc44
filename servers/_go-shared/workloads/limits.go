// Package workloads holds the callbench workloads (auth, students, cars, life,
// echo, records) as plain functions shared by the Go reference servers: a port of
// crates/workloads/src. The types are the contract's REST JSON shapes; the gRPC
// server converts its protobuf messages to them where a workload needs it.
package workloads

// The documented limits of the contract (contract/README.md). Every server in
// every language enforces the same numbers.
const (
	// MaxBodyBytes is the largest accepted request body (REST) or message (gRPC): 4 MiB.
	MaxBodyBytes = 4 * 1024 * 1024

	// Users are 1..UserCount.
	UserCount        = 10_000
	MaxPasswordBytes = 1024

	MaxStringBytes = 256
	MinCarYear     = 1886
	MaxCarYear     = 2100
	MaxMileage     = 10_000_000

	MinNtimes     = 1
	MaxNtimes     = 1000
	MaxBoardCells = 10_000
	MaxCoordinate = 1_000_000_000
	// MaxPopulation bounds a step's cost: it fails once the population grows past it.
	MaxPopulation = 50_000

	// MaxDownload is the most records one download may ask for.
	MaxDownload = 100_000
	// MaxUploadBytes bounds a streamed (NDJSON) upload as a whole; each of its
	// lines is bounded by MaxBodyBytes.
	MaxUploadBytes = 64 * 1024 * 1024
)
