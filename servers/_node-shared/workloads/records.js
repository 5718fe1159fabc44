'use strict';
// The records workload, for the streaming calls: an upload answered once with the summary of its records, and a
// download of `count` records made by the contract's rule (crates/workloads/src/records.rs). Records are echo's,
// checked as echo checks them; a conversation answers each message with echo itself.

const { checkRecord } = require('./echo');
const { invalid } = require('./errors');
const { MAX_DOWNLOAD } = require('./limits');

/** The answer to an upload, built one record at a time (REST JSON field names). */
class UploadSummary {
  constructor() {
    this.count = 0;
    this.activeCount = 0;
    this.firstId = 0;
    this.lastId = 0;
    this.sampleCount = 0;
  }

  /** Adds the next record, refused as echo refuses it. Ids are kept as given (a number, or gRPC's Long). */
  add(record) {
    checkRecord(record, `record ${this.count}`);
    const id = record.id ?? 0;
    if (this.count === 0) {
      this.firstId = id;
    }
    this.count++;
    if (record.active) {
      this.activeCount++;
    }
    this.lastId = id;
    this.sampleCount += record.samples?.length ?? 0;
  }

  /** The summary of a list of records (POST /records/batch). */
  static of(records) {
    const summary = new UploadSummary();
    for (const record of records) {
      summary.add(record);
    }
    return summary;
  }
}

/** Checks a download's count (0..MAX_DOWNLOAD) and gives it back. */
function downloadCount(count) {
  if (!(Number.isInteger(count) && count >= 0 && count <= MAX_DOWNLOAD)) {
    throw invalid(`count must be in 0..${MAX_DOWNLOAD}, got ${count}`);
  }
  return count;
}

const DOWNLOAD_KINDS = ['KIND_SMALL', 'KIND_MEDIUM', 'KIND_LARGE'];

/** Record `i` (from 0) of a download, in REST JSON shape (kinds by name). */
function downloaded(i) {
  return {
    id: i + 1,
    name: `record-${String(i).padStart(6, '0')}`,
    score: i / 2,
    active: i % 2 === 0,
    kind: DOWNLOAD_KINDS[i % 3],
    location: { city: 'Springfield', latitude: 39.78, longitude: -89.65 },
    tags: ['alpha', 'beta'],
    samples: [i, i + 1, i + 2],
  };
}

module.exports = { UploadSummary, downloadCount, downloaded };
