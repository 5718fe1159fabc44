'use strict';
// Seed 000's auth workload: find the user by id, SHA-512 hex of the password
// (crates/workloads/src/auth.rs).

const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { readFile } = require('node:fs/promises');
const { invalid, notFound } = require('./errors');
const { MAX_PASSWORD_BYTES } = require('./limits');

/** How a server finds users: parsed once at start, or read, parsed and searched on every call (seed 000). */
const MODES = ['preloaded', 'per-request'];

class UserStore {
  /** Opens the store; reads and parses the file now in both modes, so a bad file fails at start. */
  static open(path, mode) {
    if (!MODES.includes(mode)) {
      throw new Error(`unknown mode '${mode}' (expected preloaded or per-request)`);
    }
    const users = parseUsers(readFileSync(path, 'utf8'));
    return new UserStore(path, mode, mode === 'preloaded' ? new Map(users.map((u) => [u.id, u.hash])) : null);
  }

  constructor(path, mode, byId) {
    this.path = path;
    this.mode = mode;
    this.byId = byId;
  }

  /**
   * The auth call. `id` is a number (ids beyond 2^53 cannot match a user anyway).
   * Throws INVALID_ARGUMENT for a bad password, NOT_FOUND for an unknown id.
   */
  async test(id, password) {
    checkPassword(password);
    let found;
    if (this.byId !== null) {
      found = this.byId.has(id);
    } else {
      // What seed 000 measured: the whole file read and parsed, then a linear search, on every call.
      const users = parseUsers(await readFile(this.path, 'utf8'));
      found = users.some((u) => u.id === id);
    }
    if (!found) {
      throw notFound(`no user with id ${id}`);
    }
    return { hash: sha512Hex(password) };
  }
}

function parseUsers(text) {
  const users = JSON.parse(text);
  if (!Array.isArray(users)) {
    throw new Error('the users file must hold a JSON array');
  }
  return users;
}

function checkPassword(password) {
  if (password.length === 0) {
    throw invalid('password must not be empty');
  }
  // The limit is in UTF-8 bytes, not UTF-16 code units.
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) {
    throw invalid(`password is longer than ${MAX_PASSWORD_BYTES} bytes`);
  }
}

/** Lowercase hex SHA-512 of the UTF-8 bytes. */
function sha512Hex(text) {
  return createHash('sha512').update(text, 'utf8').digest('hex');
}

module.exports = { MODES, UserStore, sha512Hex };
