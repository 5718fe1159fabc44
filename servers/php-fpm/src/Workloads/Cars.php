<?php
// Seed 003's cars: POST /cars -> the car + driver message, unchanged once validated.
declare(strict_types=1);

namespace Callbench\Workloads;

use Callbench\Http\HttpError;
use Callbench\Http\JsonFields as F;
use Callbench\Http\Request;

final class Cars
{
    private const MAX_STRING_BYTES = 256;
    private const MIN_YEAR = 1886;
    private const MAX_YEAR = 2100;
    private const MAX_MILEAGE = 10_000_000;

    public static function send(Request $request): array
    {
        $body = $request->json();
        $car = F::object($body, 'car') ?? throw HttpError::badRequest('car is required');
        $driver = F::object($body, 'driver') ?? throw HttpError::badRequest('driver is required');
        // Read into the message's typed fields (unknown fields dropped), then check, then send it back.
        $message = [
            'car' => [
                'make' => F::string($car, 'make'),
                'model' => F::string($car, 'model'),
                'trim' => F::string($car, 'trim'),
                'color' => F::string($car, 'color'),
                'year' => F::int($car, 'year'),
                'mileage' => F::int($car, 'mileage'),
            ],
            'driver' => [
                'firstname' => F::string($driver, 'firstname'),
                'lastname' => F::string($driver, 'lastname'),
                'driverId' => F::string($driver, 'driverId'),
            ],
        ];
        self::validate($message['car'], $message['driver']);
        return $message;
    }

    private static function validate(array $car, array $driver): void
    {
        if ($car['make'] === '' || $car['model'] === '') {
            throw HttpError::badRequest('car.make and car.model are required');
        }
        foreach ([$car['make'], $car['model'], $car['trim'], $car['color'], ...array_values($driver)] as $s) {
            if (strlen($s) > self::MAX_STRING_BYTES) {
                throw HttpError::badRequest('strings are limited to ' . self::MAX_STRING_BYTES . ' bytes');
            }
        }
        if ($car['year'] < self::MIN_YEAR || $car['year'] > self::MAX_YEAR) {
            throw HttpError::badRequest('car.year must be in ' . self::MIN_YEAR . '..' . self::MAX_YEAR);
        }
        if ($car['mileage'] < 0 || $car['mileage'] > self::MAX_MILEAGE) {
            throw HttpError::badRequest('car.mileage must be in 0..' . self::MAX_MILEAGE);
        }
    }
}
