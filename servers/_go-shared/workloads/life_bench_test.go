package workloads

import "testing"

func BenchmarkPopulationLimit(b *testing.B) {
	board := line(10_000)
	for b.Loop() {
		if _, err := LifeStep(board, 32); err == nil {
			b.Fatal("no error")
		}
	}
}

func BenchmarkAcorn1000(b *testing.B) {
	board := LifeSetup().Board
	for b.Loop() {
		if _, err := LifeStep(board, 1000); err != nil {
			b.Fatal(err)
		}
	}
}
