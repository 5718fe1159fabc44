<?php
// The answer to an upload of records (callbench.v1.UploadSummary in REST JSON): how many, how many active, the
// first and last ids (0 when there were none), the samples of all of them.
declare(strict_types=1);

namespace Callbench\Workloads;

final class UploadSummary
{
    private int $count = 0;
    private int $activeCount = 0;
    private int $firstId = 0;
    private int $lastId = 0;
    private int $sampleCount = 0;

    /** Counts the next record, one EchoMessage::record has checked. */
    public function add(array $record): void
    {
        if ($this->count === 0) {
            $this->firstId = $record['id'];
        }
        $this->count++;
        if ($record['active']) {
            $this->activeCount++;
        }
        $this->lastId = $record['id'];
        $this->sampleCount += count($record['samples']);
    }

    public function count(): int
    {
        return $this->count;
    }

    public function toJson(): array
    {
        return [
            'count' => $this->count,
            'activeCount' => $this->activeCount,
            'firstId' => $this->firstId,
            'lastId' => $this->lastId,
            'sampleCount' => $this->sampleCount,
        ];
    }
}
