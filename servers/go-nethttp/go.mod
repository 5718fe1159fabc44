module callbench/go-nethttp

go 1.24

require callbench/goshared v0.0.0

// The workloads and serving flags shared by the Go servers (servers/_go-shared).
replace callbench/goshared => ../_go-shared
