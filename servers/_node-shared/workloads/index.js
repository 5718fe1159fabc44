'use strict';
// The contract's workloads as plain functions, shared by the Node.js servers; a port of crates/workloads.

module.exports = {
  auth: require('./auth'),
  cars: require('./cars'),
  echo: require('./echo'),
  errors: require('./errors'),
  life: require('./life'),
  limits: require('./limits'),
  records: require('./records'),
  students: require('./students'),
};
