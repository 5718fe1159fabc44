'use strict';
// Seed 004's Game of Life (B3/S23) on an unbounded plane of live cells (crates/workloads/src/life.rs).
// A cell is the pair [x, y] of numbers, as in REST JSON.

const { invalid } = require('./errors');
const { MAX_BOARD_CELLS, MAX_COORDINATE, MAX_NTIMES, MAX_POPULATION, MIN_NTIMES } = require('./limits');

/** The acorn: 7 cells that take 5206 generations to settle. */
const ACORN = [[1, 0], [3, 1], [0, 2], [1, 2], [4, 2], [5, 2], [6, 2]];

function setup() {
  return { board: sortCells(ACORN.map(([x, y]) => [x, y])) };
}

/** Advances `board` by `ntimes` generations, within the contract's limits; the result is sorted by x then y. */
function step(board, ntimes) {
  if (!(ntimes >= MIN_NTIMES && ntimes <= MAX_NTIMES)) {
    throw invalid(`ntimes must be in ${MIN_NTIMES}..${MAX_NTIMES}`);
  }
  if (board.length > MAX_BOARD_CELLS) {
    throw invalid(`board is limited to ${MAX_BOARD_CELLS} cells`);
  }
  if (board.some(([x, y]) => Math.abs(x) > MAX_COORDINATE || Math.abs(y) > MAX_COORDINATE)) {
    throw invalid(`coordinates are limited to +-${MAX_COORDINATE}`);
  }
  if (board.length === 0) {
    return { board: [] };
  }
  const grid = gridFor(board, ntimes);
  let live = new Set(board.map(([x, y]) => grid.key(x, y))); // duplicates count once
  const around = new Array(8);
  for (let i = 0; i < ntimes; i++) {
    live = nextGeneration(live, grid, around);
    if (live.size > MAX_POPULATION) {
      throw invalid(`population grew past ${MAX_POPULATION} cells`);
    }
  }
  return { board: grid.sortedCells(live) };
}

function nextGeneration(live, grid, around) {
  const neighbours = new Map();
  for (const cell of live) {
    grid.neighbours(cell, around);
    for (let i = 0; i < 8; i++) {
      const n = around[i];
      neighbours.set(n, (neighbours.get(n) ?? 0) + 1);
    }
  }
  const next = new Set();
  for (const [cell, n] of neighbours) {
    if (n === 3 || (n === 2 && live.has(cell))) {
      next.add(cell);
    }
  }
  return next;
}

/**
 * JavaScript has no 64-bit integer keys, and a pair cannot key a Set by value. A board grows by at most one
 * cell per generation on each side, so every cell of the step fits a frame around the board: a cell is then
 * one number, (x - x0) * width + (y - y0), ordered by x then y. A board spread so wide that the frame has
 * more than 2^53 cells uses "x,y" strings instead.
 */
function gridFor(board, ntimes) {
  let [minX, minY] = board[0];
  let [maxX, maxY] = board[0];
  for (const [x, y] of board) {
    minX = Math.min(minX, x);
    maxX = Math.max(maxX, x);
    minY = Math.min(minY, y);
    maxY = Math.max(maxY, y);
  }
  const margin = ntimes + 1;
  const width = maxY - minY + 2 * margin + 1;
  const height = maxX - minX + 2 * margin + 1;
  return width * height <= Number.MAX_SAFE_INTEGER
    ? new NumberGrid(minX - margin, minY - margin, width)
    : new StringGrid();
}

class NumberGrid {
  constructor(x0, y0, width) {
    this.x0 = x0;
    this.y0 = y0;
    this.width = width;
    this.offsets = [-width - 1, -width, -width + 1, -1, 1, width - 1, width, width + 1];
  }

  key(x, y) {
    return (x - this.x0) * this.width + (y - this.y0);
  }

  neighbours(cell, out) {
    for (let i = 0; i < 8; i++) {
      out[i] = cell + this.offsets[i];
    }
  }

  sortedCells(live) {
    const keys = Float64Array.from(live).sort();
    return Array.from(keys, (k) => [Math.floor(k / this.width) + this.x0, (k % this.width) + this.y0]);
  }
}

class StringGrid {
  key(x, y) {
    return `${x},${y}`;
  }

  neighbours(cell, out) {
    const [x, y] = parseKey(cell);
    let i = 0;
    for (let dx = -1; dx <= 1; dx++) {
      for (let dy = -1; dy <= 1; dy++) {
        if (dx !== 0 || dy !== 0) {
          out[i++] = `${x + dx},${y + dy}`;
        }
      }
    }
  }

  sortedCells(live) {
    return sortCells(Array.from(live, parseKey));
  }
}

function parseKey(key) {
  const comma = key.indexOf(',');
  return [Number(key.slice(0, comma)), Number(key.slice(comma + 1))];
}

function sortCells(cells) {
  return cells.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

module.exports = { setup, step };
