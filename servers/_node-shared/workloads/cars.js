'use strict';
// Seed 003's cars workload: validate the car + driver message and echo it (crates/workloads/src/cars.rs).
// Fields absent from a message hold their proto3 default ("" or 0).

const { invalid } = require('./errors');
const { MAX_CAR_YEAR, MAX_MILEAGE, MAX_STRING_BYTES, MIN_CAR_YEAR } = require('./limits');

/** Checks the message and gives it back unchanged. */
function send(message) {
  validate(message);
  return message;
}

function validate(message) {
  const { car, driver } = message;
  if (car == null) {
    throw invalid('car is required');
  }
  if (driver == null) {
    throw invalid('driver is required');
  }
  if (!car.make || !car.model) {
    throw invalid('car.make and car.model are required');
  }
  const strings = [car.make, car.model, car.trim, car.color, driver.firstname, driver.lastname, driver.driverId];
  if (strings.some((s) => s !== undefined && Buffer.byteLength(s, 'utf8') > MAX_STRING_BYTES)) {
    throw invalid(`strings are limited to ${MAX_STRING_BYTES} bytes`);
  }
  const year = car.year ?? 0;
  if (year < MIN_CAR_YEAR || year > MAX_CAR_YEAR) {
    throw invalid(`car.year must be in ${MIN_CAR_YEAR}..${MAX_CAR_YEAR}`);
  }
  if ((car.mileage ?? 0) > MAX_MILEAGE) {
    throw invalid(`car.mileage must be at most ${MAX_MILEAGE}`);
  }
}

module.exports = { send, validate };
