'use strict';
// The echo workload for payload sweeps: records of mixed field types, returned as sent
// (crates/workloads/src/echo.rs). Enum values are names, as in REST JSON.

const { invalid } = require('./errors');

const KINDS = new Set(['KIND_UNSPECIFIED', 'KIND_SMALL', 'KIND_MEDIUM', 'KIND_LARGE']);

/** Checks the message (numbers finite, kinds known) and gives it back unchanged. */
function echo(message) {
  const records = message.records ?? [];
  for (let i = 0; i < records.length; i++) {
    checkRecord(records[i], `records[${i}]`);
  }
  return message;
}

/** Echo's check of one record (numbers finite, kind known); `where` names the record in the error. */
function checkRecord(r, where) {
  if (r.kind !== undefined && !KINDS.has(r.kind)) {
    throw invalid(`${where}: unknown kind ${r.kind}`);
  }
  const location = r.location;
  const finite =
    Number.isFinite(r.score ?? 0) &&
    (location == null || (Number.isFinite(location.latitude ?? 0) && Number.isFinite(location.longitude ?? 0)));
  if (!finite) {
    throw invalid(`${where}: numbers must be finite`);
  }
}

module.exports = { echo, checkRecord, KINDS };
