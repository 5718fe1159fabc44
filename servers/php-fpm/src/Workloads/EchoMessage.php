<?php
// The echo workload of the payload sweeps: POST /echo -> the records, unchanged (numbers finite, kinds known).
// (Named EchoMessage after its proto message: `echo` is a reserved word in PHP.)
declare(strict_types=1);

namespace Callbench\Workloads;

use Callbench\Http\HttpError;
use Callbench\Http\JsonFields as F;
use Callbench\Http\Request;
use stdClass;

final class EchoMessage
{
    private const KINDS = ['KIND_UNSPECIFIED' => 0, 'KIND_SMALL' => 1, 'KIND_MEDIUM' => 2, 'KIND_LARGE' => 3];

    public static function echo(Request $request): array
    {
        $records = [];
        foreach (F::list($request->json(), 'records', required: true) as $i => $record) {
            $records[] = self::record($record, $i);
        }
        return ['records' => $records];
    }

    /**
     * One record (a decoded JSON value, `$i` its index for the messages) read into its typed fields (unknown
     * fields dropped) and checked: the records workload checks its records with it too.
     */
    public static function record(mixed $r, int $i): array
    {
        if (!$r instanceof stdClass) {
            throw HttpError::badRequest("records[$i] must be an object");
        }
        $kind = $r->kind ?? 'KIND_UNSPECIFIED';
        if (!is_string($kind) || !isset(self::KINDS[$kind])) {
            throw HttpError::badRequest("records[$i].kind must be one of " . implode(', ', array_keys(self::KINDS)));
        }
        $location = F::object($r, 'location');
        if ($location !== null) {
            $location = [
                'city' => F::string($location, 'city'),
                'latitude' => F::number($location, 'latitude'),
                'longitude' => F::number($location, 'longitude'),
            ];
        }
        $record = [
            'id' => F::int($r, 'id'),
            'name' => F::string($r, 'name'),
            'score' => F::number($r, 'score'),
            'active' => F::bool($r, 'active'),
            'kind' => $kind,
            'location' => $location,
            'tags' => F::stringList($r, 'tags'),
            'samples' => F::intList($r, 'samples'),
        ];
        if (!is_finite($record['score']) || ($location !== null
            && !(is_finite($location['latitude']) && is_finite($location['longitude'])))) {
            throw HttpError::badRequest("records[$i]: numbers must be finite");
        }
        return $record;
    }
}
