module callbench/goshared

go 1.24
