<?php
// The records workload, REST's side of callbench.v1.Records: an upload in one JSON body (POST /records/batch) or
// streamed as NDJSON (POST /records/upload), both answered with their UploadSummary, and a download of `count`
// records streamed as NDJSON (GET /records?count=N). Records are checked as echo checks them.
declare(strict_types=1);

namespace Callbench\Workloads;

use Callbench\Http\HttpError;
use Callbench\Http\JsonFields as F;
use Callbench\Http\NdjsonResponse;
use Callbench\Http\Request;
use Generator;
use JsonException;

final class Records
{
    public const MAX_DOWNLOAD = 100_000;

    /** The kinds of downloaded records, in turn: 1 + i % 3. */
    private const DOWNLOAD_KINDS = ['KIND_SMALL', 'KIND_MEDIUM', 'KIND_LARGE'];

    public static function batch(Request $request): array
    {
        $summary = new UploadSummary();
        foreach (F::list($request->json(), 'records', required: true) as $i => $record) {
            $summary->add(EchoMessage::record($record, $i));
        }
        return $summary->toJson();
    }

    /** One record a line, each counted as it is read; the first bad line is the answer. */
    public static function upload(Request $request): array
    {
        $summary = new UploadSummary();
        foreach ($request->ndjson()->lines() as $number => $line) {
            try {
                $record = json_decode($line, false, 512, JSON_THROW_ON_ERROR);
                $summary->add(EchoMessage::record($record, $summary->count()));
            } catch (JsonException $e) {
                throw HttpError::badRequest("line $number: malformed JSON: " . $e->getMessage());
            } catch (HttpError $e) {
                throw HttpError::badRequest("line $number: " . $e->getMessage());
            }
        }
        return $summary->toJson();
    }

    /** `count` records (0..100000, a decimal integer), made as they are sent. */
    public static function download(Request $request): NdjsonResponse
    {
        $count = $request->query['count'] ?? null;
        if ($count === null) {
            throw HttpError::badRequest('count is required');
        }
        if (!is_string($count) || !preg_match('/^[+-]?[0-9]+$/D', $count)) {
            throw HttpError::badRequest('count must be a decimal integer');
        }
        $n = (int) $count; // past 64 bits it saturates, and is out of range as it should be
        if ($n < 0 || $n > self::MAX_DOWNLOAD) {
            throw HttpError::badRequest('count must be in 0..' . self::MAX_DOWNLOAD . ", got $count");
        }
        return new NdjsonResponse(self::downloaded($n));
    }

    /**
     * Record i (from 0): id i + 1, name "record-" and i as six digits, score i / 2, active when i is even, kind
     * 1 + i % 3, Springfield, tags alpha and beta, samples i, i + 1, i + 2.
     *
     * @return Generator<int, array>
     */
    private static function downloaded(int $count): Generator
    {
        for ($i = 0; $i < $count; $i++) {
            yield [
                'id' => $i + 1,
                'name' => sprintf('record-%06d', $i),
                'score' => $i / 2,
                'active' => $i % 2 === 0,
                'kind' => self::DOWNLOAD_KINDS[$i % 3],
                'location' => ['city' => 'Springfield', 'latitude' => 39.78, 'longitude' => -89.65],
                'tags' => ['alpha', 'beta'],
                'samples' => [$i, $i + 1, $i + 2],
            ];
        }
    }
}
