'use strict';
// callbench.v1.Records, the streaming calls: Upload (client streaming), Converse (bidirectional) and Download
// (server streaming). Each reads and writes with the streams' own flow control: a reply stream that is full
// pauses the reading (Converse) or the making (Download) until it drains, so nothing piles up in memory.

const { echo, records } = require('../../_node-shared/workloads');
const { toNumber, toStatus } = require('./convert');

/** Every record until the client half-closes, answered once with their summary; an invalid one ends the call. */
function upload(call, callback) {
  const summary = new records.UploadSummary();
  let answered = false;
  const answer = (err, reply) => {
    if (!answered) {
      answered = true;
      callback(err, reply);
    }
  };
  call.on('data', (record) => {
    if (answered) {
      return;
    }
    try {
      summary.add(record);
    } catch (err) {
      answer(toStatus(err));
    }
  });
  call.on('end', () => answer(null, summary));
  call.on('error', () => {}); // a cancelled call: there is no one to answer
}

/** Every message back unchanged as soon as it is read; an invalid one ends the call after the answers before it. */
function converse(call) {
  let ended = false;
  call.on('data', (message) => {
    if (ended) {
      return;
    }
    try {
      echo.echo(message);
    } catch (err) {
      ended = true;
      call.emit('error', toStatus(err)); // grpc-js ends the call with this status after the queued answers
      return;
    }
    if (!call.write(message)) {
      call.pause();
      call.once('drain', () => call.resume());
    }
  });
  call.on('end', () => {
    if (!ended) {
      ended = true;
      call.end();
    }
  });
}

/** `count` records, each made when the stream can take it. */
function download(call) {
  let count;
  try {
    count = records.downloadCount(toNumber(call.request.count));
  } catch (err) {
    call.emit('error', toStatus(err));
    return;
  }
  let i = 0;
  const more = () => {
    while (i < count) {
      if (call.cancelled) {
        return;
      }
      if (!call.write(records.downloaded(i++))) {
        call.once('drain', more);
        return;
      }
    }
    call.end();
  };
  more();
}

module.exports = { upload, converse, download };
