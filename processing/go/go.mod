module callbench/processing/go

go 1.22
