<?php
// Seed 004's Game of Life (B3/S23) on an unbounded plane: GET /life/setup, POST /life/step.
declare(strict_types=1);

namespace Callbench\Workloads;

use Callbench\Http\HttpError;
use Callbench\Http\JsonFields as F;
use Callbench\Http\Request;

final class Life
{
    private const MIN_NTIMES = 1;
    private const MAX_NTIMES = 1000;
    private const MAX_BOARD_CELLS = 10_000;
    private const MAX_COORDINATE = 1_000_000_000;
    private const MAX_POPULATION = 50_000;

    /**
     * A cell is one int key, (x + OFFSET) * ROW + (y + OFFSET): PHP arrays with int keys are the fastest sets PHP
     * has. Cells drift at most 1000 cells past +-10^9, so both terms are in 0..ROW and the key, below 2^63,
     * orders cells by x, then y. ROW is odd: PHP hashes an int key by its low bits, and a power of two would
     * leave x out of them (a horizontal line of cells would all collide).
     */
    private const OFFSET = 1_100_000_000;
    private const ROW = 2 * self::OFFSET + 1;

    public static function setup(): array
    {
        return ['board' => [[0, 2], [1, 0], [1, 2], [3, 1], [4, 2], [5, 2], [6, 2]]];
    }

    public static function step(Request $request): array
    {
        $body = $request->json();
        $ntimes = F::int($body, 'ntimes', required: true);
        $board = F::list($body, 'board', required: true);
        foreach ($board as $cell) {
            if (!is_array($cell) || count($cell) !== 2 || !is_int($cell[0]) || !is_int($cell[1])) {
                throw HttpError::badRequest('a cell is a pair of integers [x, y]');
            }
        }
        if ($ntimes < self::MIN_NTIMES || $ntimes > self::MAX_NTIMES) {
            throw HttpError::badRequest('ntimes must be in ' . self::MIN_NTIMES . '..' . self::MAX_NTIMES);
        }
        if (count($board) > self::MAX_BOARD_CELLS) {
            throw HttpError::badRequest('board is limited to ' . self::MAX_BOARD_CELLS . ' cells');
        }
        $live = [];
        foreach ($board as [$x, $y]) {
            if (abs($x) > self::MAX_COORDINATE || abs($y) > self::MAX_COORDINATE) {
                throw HttpError::badRequest('coordinates are limited to +-' . self::MAX_COORDINATE);
            }
            $live[($x + self::OFFSET) * self::ROW + $y + self::OFFSET] = true; // duplicates count once
        }
        for ($i = 0; $i < $ntimes; $i++) {
            $live = self::nextGeneration($live);
            if (count($live) > self::MAX_POPULATION) {
                throw HttpError::badRequest('population grew past ' . self::MAX_POPULATION . ' cells');
            }
        }
        return ['board' => self::cells($live)];
    }

    /** @param array<int, true> $live @return array<int, true> */
    private static function nextGeneration(array $live): array
    {
        $neighbours = [];
        foreach ($live as $k => $_) {
            // The 8 neighbours, unrolled: this loop is where life spends its time.
            $n = $k - self::ROW - 1; $neighbours[$n] = ($neighbours[$n] ?? 0) + 1;
            $n = $k - self::ROW;     $neighbours[$n] = ($neighbours[$n] ?? 0) + 1;
            $n = $k - self::ROW + 1; $neighbours[$n] = ($neighbours[$n] ?? 0) + 1;
            $n = $k - 1;             $neighbours[$n] = ($neighbours[$n] ?? 0) + 1;
            $n = $k + 1;             $neighbours[$n] = ($neighbours[$n] ?? 0) + 1;
            $n = $k + self::ROW - 1; $neighbours[$n] = ($neighbours[$n] ?? 0) + 1;
            $n = $k + self::ROW;     $neighbours[$n] = ($neighbours[$n] ?? 0) + 1;
            $n = $k + self::ROW + 1; $neighbours[$n] = ($neighbours[$n] ?? 0) + 1;
        }
        $next = [];
        foreach ($neighbours as $k => $count) {
            if ($count === 3 || ($count === 2 && isset($live[$k]))) {
                $next[$k] = true;
            }
        }
        return $next;
    }

    /** @param array<int, true> $live @return list<array{int, int}> the cells sorted by x, then y */
    private static function cells(array $live): array
    {
        $keys = array_keys($live);
        sort($keys); // not SORT_NUMERIC: it compares as doubles, which cannot tell such large keys apart
        $cells = [];
        foreach ($keys as $k) {
            $cells[] = [intdiv($k, self::ROW) - self::OFFSET, $k % self::ROW - self::OFFSET];
        }
        return $cells;
    }
}
