//! Seed 004's Game of Life (B3/S23) on an unbounded plane of live cells.

use crate::error::{Result, WorkloadError};
use crate::limits::{MAX_BOARD_CELLS, MAX_COORDINATE, MAX_NTIMES, MAX_POPULATION, MIN_NTIMES};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

/// A live cell; in JSON the pair `[x, y]`, as in the seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, Serialize)]
pub struct Cell(pub i64, pub i64);

/// REST body of `POST /life/step`.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct StepRequest {
    pub ntimes: u32,
    pub board: Vec<Cell>,
}

/// Live cells sorted by x then y, without duplicates.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct Board {
    pub board: Vec<Cell>,
}

/// The acorn: 7 cells that take 5206 generations to settle.
pub fn setup() -> Board {
    let acorn = [(1, 0), (3, 1), (0, 2), (1, 2), (4, 2), (5, 2), (6, 2)];
    let mut board: Vec<Cell> = acorn.iter().map(|&(x, y)| Cell(x, y)).collect();
    board.sort_unstable();
    Board { board }
}

/// Generations seed 004's step rows run through: 10,000, as 10000/ntimes calls of `step(board, ntimes)`.
pub const RUN_GENERATIONS: u32 = 10_000;

/// The calls of one such run: 10000/ntimes (at least one).
pub fn run_calls(ntimes: u32) -> u32 {
    (RUN_GENERATIONS / ntimes.max(1)).max(1)
}

/// The boards one run of `run_calls(ntimes)` calls passes through, advancing the acorn `ntimes`
/// generations a call: the board at generation 0, ntimes, 2·ntimes… and, last, the run's end. Call
/// `i` of the run steps board `i` and answers board `i + 1`, the work seed 004's Python caller did
/// at that call (it advanced one board through the whole run).
pub fn run_boards(ntimes: u32) -> Result<Vec<Vec<Cell>>> {
    let mut boards = vec![setup().board];
    for _ in 0..run_calls(ntimes) {
        let next = step(boards.last().expect("the acorn is first"), ntimes)?.board;
        boards.push(next);
    }
    Ok(boards)
}

/// Advances `board` by `ntimes` generations, within the contract's limits.
pub fn step(board: &[Cell], ntimes: u32) -> Result<Board> {
    if !(MIN_NTIMES..=MAX_NTIMES).contains(&ntimes) {
        return Err(WorkloadError::invalid(format!("ntimes must be in {MIN_NTIMES}..{MAX_NTIMES}")));
    }
    if board.len() > MAX_BOARD_CELLS {
        return Err(WorkloadError::invalid(format!("board is limited to {MAX_BOARD_CELLS} cells")));
    }
    if board.iter().any(|c| c.0.abs() > MAX_COORDINATE || c.1.abs() > MAX_COORDINATE) {
        return Err(WorkloadError::invalid(format!("coordinates are limited to +-{MAX_COORDINATE}")));
    }
    let mut live: FxHashSet<Cell> = board.iter().copied().collect();
    for _ in 0..ntimes {
        live = next_generation(&live);
        if live.len() > MAX_POPULATION {
            return Err(WorkloadError::invalid(format!("population grew past {MAX_POPULATION} cells")));
        }
    }
    let mut cells: Vec<Cell> = live.into_iter().collect();
    cells.sort_unstable();
    Ok(Board { board: cells })
}

fn next_generation(live: &FxHashSet<Cell>) -> FxHashSet<Cell> {
    let mut neighbours: FxHashMap<Cell, u8> = FxHashMap::default();
    neighbours.reserve(live.len() * 4);
    for &Cell(x, y) in live {
        for dx in -1..=1 {
            for dy in -1..=1 {
                if dx != 0 || dy != 0 {
                    *neighbours.entry(Cell(x + dx, y + dy)).or_insert(0) += 1;
                }
            }
        }
    }
    neighbours
        .into_iter()
        .filter(|(cell, n)| *n == 3 || (*n == 2 && live.contains(cell)))
        .map(|(cell, _)| cell)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(pairs: &[(i64, i64)]) -> Vec<Cell> {
        let mut v: Vec<Cell> = pairs.iter().map(|&(x, y)| Cell(x, y)).collect();
        v.sort();
        v
    }

    #[test]
    fn blinker_oscillates_with_period_two() {
        let horizontal = cells(&[(0, 1), (1, 1), (2, 1)]);
        let vertical = cells(&[(1, 0), (1, 1), (1, 2)]);
        assert_eq!(step(&horizontal, 1).unwrap().board, vertical);
        assert_eq!(step(&horizontal, 2).unwrap().board, horizontal);
    }

    #[test]
    fn glider_moves_one_cell_diagonally_every_four_generations() {
        let glider = cells(&[(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]);
        let moved: Vec<Cell> = glider.iter().map(|c| Cell(c.0 + 1, c.1 + 1)).collect();
        assert_eq!(step(&glider, 4).unwrap().board, moved);
    }

    #[test]
    fn acorn_population_follows_the_known_sequence() {
        // The acorn settles at generation 5206 with 633 live cells (13 of them in escaped gliders).
        let mut board = setup().board;
        let mut generation = 0;
        while generation < 5206 {
            let n = (5206 - generation).min(MAX_NTIMES);
            board = step(&board, n).unwrap().board;
            generation += n;
        }
        assert_eq!(board.len(), 633);
    }

    #[test]
    fn a_runs_boards_are_those_one_board_meets_advanced_call_by_call() {
        let boards = run_boards(1000).unwrap();
        assert_eq!((boards.len(), run_calls(1000), run_calls(1), run_calls(20_000)), (11, 10, 10_000, 1));
        assert_eq!(boards[0], setup().board);
        let mut board = setup().board;
        for (i, want) in boards.iter().enumerate().skip(1) {
            board = step(&board, 1000).unwrap().board;
            assert_eq!(&board, want, "generation {}", i * 1000);
        }
        assert!(run_boards(0).is_err());
    }

    #[test]
    fn limits_are_enforced() {
        let acorn = setup().board;
        assert!(step(&acorn, 0).is_err());
        assert!(step(&acorn, MAX_NTIMES + 1).is_err());
        assert!(step(&[Cell(MAX_COORDINATE + 1, 0)], 1).is_err());
        let big: Vec<Cell> = (0..=MAX_BOARD_CELLS as i64).map(|i| Cell(i * 3, 0)).collect();
        assert!(step(&big, 1).is_err());
    }

    #[test]
    fn duplicate_cells_count_once() {
        let blinker = cells(&[(0, 1), (1, 1), (2, 1), (2, 1)]);
        assert_eq!(step(&blinker, 2).unwrap().board, cells(&[(0, 1), (1, 1), (2, 1)]));
    }

    #[test]
    fn cells_are_pairs_in_json() {
        let json = serde_json::to_string(&setup()).unwrap();
        assert!(json.starts_with(r#"{"board":[[0,2],[1,0],[1,2],[3,1]"#), "{json}");
        assert!(serde_json::from_str::<StepRequest>(r#"{"ntimes":1,"board":[[1,2,3]]}"#).is_err());
        assert!(serde_json::from_str::<StepRequest>(r#"{"ntimes":1,"board":[[1]]}"#).is_err());
    }
}
