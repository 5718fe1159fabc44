package workloads

import (
	"bytes"
	"cmp"
	"errors"
	"slices"
	"strconv"
)

// Cell is a live cell; in JSON the pair [x, y], as in seed 004.
type Cell struct {
	X, Y int64
}

// Board is the life calls' reply: live cells sorted by x then y, without duplicates.
type Board struct {
	Board []Cell `json:"board"`
}

// acorn: 7 cells that take 5206 generations to settle.
var acorn = [...]Cell{{1, 0}, {3, 1}, {0, 2}, {1, 2}, {4, 2}, {5, 2}, {6, 2}}

// LifeSetup returns the acorn, sorted.
func LifeSetup() *Board {
	cells := slices.Clone(acorn[:])
	sortCells(cells)
	return &Board{Board: cells}
}

// LifeStep advances the board by ntimes generations of B3/S23 on an unbounded
// plane, within the contract's limits. Duplicated input cells count once.
func LifeStep(board []Cell, ntimes uint32) (*Board, error) {
	if ntimes < MinNtimes || ntimes > MaxNtimes {
		return nil, invalid("ntimes must be in %d..%d", MinNtimes, MaxNtimes)
	}
	if len(board) > MaxBoardCells {
		return nil, invalid("board is limited to %d cells", MaxBoardCells)
	}
	for _, c := range board {
		if !inRange(c.X) || !inRange(c.Y) {
			return nil, invalid("coordinates are limited to +-%d", MaxCoordinate)
		}
	}
	live := make(map[key]struct{}, len(board))
	for _, c := range board {
		live[keyOf(c)] = struct{}{}
	}
	// Three maps for the whole call, cleared (which keeps their memory) rather
	// than made anew every generation.
	next := make(map[key]struct{}, len(live))
	neighbours := make(map[key]uint8, len(live)*4)
	for range ntimes {
		nextGeneration(live, next, neighbours)
		live, next = next, live
		if len(live) > MaxPopulation {
			return nil, invalid("population grew past %d cells", MaxPopulation)
		}
	}
	cells := make([]Cell, 0, len(live))
	for k := range live {
		cells = append(cells, k.cell())
	}
	sortCells(cells)
	return &Board{Board: cells}, nil
}

// key is a cell packed in 64 bits, x high and y low, as the maps' key: Go's
// maps have a fast path for 64-bit keys that a two-field struct misses
// (measured: 2 to 3 times faster steps). It fits: the input is within
// +-MaxCoordinate and each generation grows the pattern by at most one cell,
// so after MaxNtimes generations a coordinate is still far inside int32.
type key uint64

func keyOf(c Cell) key {
	return key(uint64(uint32(int32(c.X)))<<32 | uint64(uint32(int32(c.Y))))
}

func (k key) cell() Cell {
	return Cell{X: int64(int32(uint32(k >> 32))), Y: int64(int32(uint32(k)))}
}

// nextGeneration writes into next (emptied first) the generation after live.
func nextGeneration(live, next map[key]struct{}, neighbours map[key]uint8) {
	clear(neighbours)
	for k := range live {
		c := k.cell()
		for dx := int64(-1); dx <= 1; dx++ {
			for dy := int64(-1); dy <= 1; dy++ {
				if dx != 0 || dy != 0 {
					neighbours[keyOf(Cell{c.X + dx, c.Y + dy})]++
				}
			}
		}
	}
	clear(next)
	for k, n := range neighbours {
		if n == 3 {
			next[k] = struct{}{}
		} else if n == 2 {
			if _, alive := live[k]; alive {
				next[k] = struct{}{}
			}
		}
	}
}

func sortCells(cells []Cell) {
	slices.SortFunc(cells, func(a, b Cell) int {
		return cmp.Or(cmp.Compare(a.X, b.X), cmp.Compare(a.Y, b.Y))
	})
}

// inRange compares both bounds: an absolute value would overflow for math.MinInt64.
func inRange(v int64) bool {
	return v >= -MaxCoordinate && v <= MaxCoordinate
}

// MarshalJSON writes the cell as [x,y].
func (c Cell) MarshalJSON() ([]byte, error) {
	out := make([]byte, 0, 24)
	out = append(out, '[')
	out = strconv.AppendInt(out, c.X, 10)
	out = append(out, ',')
	out = strconv.AppendInt(out, c.Y, 10)
	return append(out, ']'), nil
}

var errCell = errors.New("a cell must be a pair of integers [x, y]")

// UnmarshalJSON reads exactly [x, y], two integers: a pair is strict where
// encoding/json's arrays are not (it would zero-fill [x] and drop a third item).
func (c *Cell) UnmarshalJSON(data []byte) error {
	// encoding/json has checked the syntax: data is one valid JSON value.
	inner, ok := bytes.CutPrefix(bytes.TrimSpace(data), []byte("["))
	if !ok {
		return errCell
	}
	inner, _ = bytes.CutSuffix(inner, []byte("]"))
	first, second, ok := bytes.Cut(inner, []byte(","))
	if !ok {
		return errCell
	}
	x, err := parseInt(first)
	if err != nil {
		return errCell
	}
	y, err := parseInt(second)
	if err != nil {
		return errCell
	}
	c.X, c.Y = x, y
	return nil
}

// parseInt reads a JSON integer: strconv alone would take "+1" or "0x1" (not
// JSON), but encoding/json has already refused those, so only floats and
// non-numbers ("1.5", "1e3", "\"1\"", "[1]", "1,2") are left to refuse here.
func parseInt(b []byte) (int64, error) {
	return strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
}
