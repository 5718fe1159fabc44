package workloads

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func cells(pairs ...[2]int64) []Cell {
	out := make([]Cell, len(pairs))
	for i, p := range pairs {
		out[i] = Cell{p[0], p[1]}
	}
	sortCells(out)
	return out
}

func step(t *testing.T, board []Cell, n uint32) []Cell {
	t.Helper()
	b, err := LifeStep(board, n)
	if err != nil {
		t.Fatal(err)
	}
	return b.Board
}

func TestBlinkerOscillatesWithPeriodTwo(t *testing.T) {
	horizontal := cells([2]int64{0, 1}, [2]int64{1, 1}, [2]int64{2, 1})
	vertical := cells([2]int64{1, 0}, [2]int64{1, 1}, [2]int64{1, 2})
	if got := step(t, horizontal, 1); !slices.Equal(got, vertical) {
		t.Errorf("1 step: %v", got)
	}
	if got := step(t, horizontal, 2); !slices.Equal(got, horizontal) {
		t.Errorf("2 steps: %v", got)
	}
}

func TestGliderMovesOneCellDiagonallyEveryFourGenerations(t *testing.T) {
	glider := cells([2]int64{1, 0}, [2]int64{2, 1}, [2]int64{0, 2}, [2]int64{1, 2}, [2]int64{2, 2})
	moved := make([]Cell, len(glider))
	for i, c := range glider {
		moved[i] = Cell{c.X + 1, c.Y + 1}
	}
	if got := step(t, glider, 4); !slices.Equal(got, moved) {
		t.Errorf("got %v", got)
	}
}

func TestAcornPopulationFollowsTheKnownSequence(t *testing.T) {
	// The acorn settles at generation 5206 with 633 live cells.
	board := LifeSetup().Board
	for generation := uint32(0); generation < 5206; {
		n := min(5206-generation, MaxNtimes)
		board = step(t, board, n)
		generation += n
	}
	if len(board) != 633 {
		t.Errorf("%d cells", len(board))
	}
}

func TestLimitsAreEnforced(t *testing.T) {
	acorn := LifeSetup().Board
	big := make([]Cell, MaxBoardCells+1)
	for i := range big {
		big[i] = Cell{int64(i) * 3, 0}
	}
	cases := map[string]func() error{
		"ntimes 0":        func() error { _, err := LifeStep(acorn, 0); return err },
		"ntimes 1001":     func() error { _, err := LifeStep(acorn, MaxNtimes+1); return err },
		"coordinate":      func() error { _, err := LifeStep([]Cell{{MaxCoordinate + 1, 0}}, 1); return err },
		"min int64":       func() error { _, err := LifeStep([]Cell{{0, -1 << 63}}, 1); return err },
		"10001 cells":     func() error { _, err := LifeStep(big, 1); return err },
		"population 50k+": func() error { _, err := LifeStep(line(10_000), 32); return err },
	}
	for name, f := range cases {
		if err := f(); KindOf(err) != InvalidArgument {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := LifeStep([]Cell{{MaxCoordinate, -MaxCoordinate}}, 1); err != nil {
		t.Errorf("at the limit: %v", err)
	}
}

func line(n int) []Cell {
	out := make([]Cell, n)
	for i := range out {
		out[i] = Cell{int64(i), 0}
	}
	return out
}

func TestDuplicateCellsCountOnce(t *testing.T) {
	blinker := cells([2]int64{0, 1}, [2]int64{1, 1}, [2]int64{2, 1}, [2]int64{2, 1})
	if got := step(t, blinker, 2); !slices.Equal(got, cells([2]int64{0, 1}, [2]int64{1, 1}, [2]int64{2, 1})) {
		t.Errorf("got %v", got)
	}
}

func TestCellsArePairsInJSON(t *testing.T) {
	out, err := json.Marshal(LifeSetup())
	if err != nil || !strings.HasPrefix(string(out), `{"board":[[0,2],[1,0],[1,2],[3,1]`) {
		t.Errorf("%s %v", out, err)
	}
	var c Cell
	if err := json.Unmarshal([]byte(" [ -3 ,\n 9223372036854775807 ] "), &c); err != nil || c != (Cell{-3, 1<<63 - 1}) {
		t.Errorf("%v %v", c, err)
	}
	for _, bad := range []string{`[1,2,3]`, `[1]`, `[]`, `["1",2]`, `[1.5,2]`, `[1e3,2]`, `[[1,2],3]`, `null`, `{"x":1}`, `[1,9223372036854775808]`} {
		var b struct{ Board []Cell }
		if err := json.Unmarshal([]byte(`{"board":[`+bad+`]}`), &b); err == nil {
			t.Errorf("%s decoded as %v", bad, b.Board)
		}
	}
}

func TestCellsPackIntoKeysAndBack(t *testing.T) {
	far := int64(MaxCoordinate + MaxNtimes)
	for _, c := range []Cell{{0, 0}, {-1, 1}, {far, -far}, {-far, far}, {far, far}, {-far, -far}} {
		if got := keyOf(c).cell(); got != c {
			t.Errorf("%v came back as %v", c, got)
		}
	}
}
