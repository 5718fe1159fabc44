"""`POST /records/upload`: an NDJSON body read as it streams in, one `Record` a line, summed up line by line.

Only the line being read is held (at most MAX_LINE_BYTES), never the whole upload. Lines end in "\\n" (the last
one may not); blank lines are skipped. After an invalid line the rest of the body is still read (and dropped), up
to the upload limit, so that the 400 leaves the connection usable; an upload or a line over its limit stops the
reading at once (413). The server parses each line into its own record type (`parse`), so the JSON rules are
those of the rest of its REST bodies.
"""

import re
from collections.abc import Callable
from typing import Any

from .errors import WorkloadError
from .limits import MAX_LINE_BYTES, MAX_UPLOAD_BYTES
from .records import UploadSummary

# What a line holds between two newlines, when it holds anything.
_CONTENT = re.compile(rb"[^\n]+")


class Upload:
    """One upload being read: `push` each chunk of the body as it comes, then `finish`."""

    def __init__(self, parse: Callable[[bytes], Any]) -> None:
        """`parse(line)` gives the line's record (an object with the proto's field names), or raises ValueError
        or WorkloadError when the line is not one."""
        self.parse = parse
        self.summary = UploadSummary()
        # The start of a line whose end has not come yet.
        self.line = bytearray()
        # Lines seen, blank ones included (for the error messages, from 1).
        self.lines = 0
        self.received = 0
        # The first failure; once set, the rest of the body is only counted.
        self.failed: WorkloadError | None = None
        # Reading has stopped: over a limit.
        self.stopped = False

    def push(self, chunk: bytes) -> bool:
        """Takes the next chunk of the body. False: stop reading and answer `finish()` now, the rest of the body
        left unread (a limit was passed)."""
        if self.stopped:
            return False
        self.received += len(chunk)
        if self.received > MAX_UPLOAD_BYTES:
            self._stop(WorkloadError.too_large(f"the upload is over {MAX_UPLOAD_BYTES} bytes"))
            return False
        if self.failed is not None:
            return True
        start = 0
        if self.line:
            # The end of a line begun in an earlier chunk.
            end = chunk.find(b"\n")
            if end == -1:
                return self._hold(chunk)
            if len(self.line) + end > MAX_LINE_BYTES:
                return self._stop(self._line_too_long())
            self.line += chunk[:end]
            line = bytes(self.line)
            self.line.clear()
            self.lines += 1
            if not self._add_line(line):
                return True
            start = end + 1
        # The lines with something on them, found by the regex engine: blank lines cost nothing but their count.
        counted = start  # the newlines before `counted` are in self.lines
        for match in _CONTENT.finditer(chunk, start):
            self.lines += chunk.count(b"\n", counted, match.start())
            if match.end() == len(chunk):
                # No newline yet: the line goes on in the next chunk.
                return self._hold(match.group())
            if match.end() - match.start() > MAX_LINE_BYTES:
                return self._stop(self._line_too_long())
            self.lines += 1
            counted = match.end() + 1
            if not self._add_line(match.group()):
                return True
        self.lines += chunk.count(b"\n", counted)
        return True

    def finish(self) -> UploadSummary:
        """The summary, once the body has ended or `push` said to stop; raises the first failure (400 for an
        invalid line, 413 for a limit)."""
        if self.failed is None and self.line:
            # The last line may have no "\n".
            self.lines += 1
            self._add_line(bytes(self.line))
        if self.failed is not None:
            raise self.failed
        return self.summary

    def _hold(self, start: bytes) -> bool:
        """Keeps the start of a line until its end comes."""
        if len(self.line) + len(start) > MAX_LINE_BYTES:
            return self._stop(self._line_too_long())
        self.line += start
        return True

    def _add_line(self, line: bytes) -> bool:
        """Adds line number `self.lines`; False when it is refused (the failure is kept)."""
        if not line.strip():
            return True  # a blank line (spaces, a lone "\r")
        try:
            record = self.parse(line)
        except (ValueError, WorkloadError) as e:
            detail = e.message if isinstance(e, WorkloadError) else str(e)
            self.failed = WorkloadError.invalid(f"line {self.lines}: not a record: {detail}")
            return False
        try:
            self.summary.add(record)
        except WorkloadError as e:
            self.failed = WorkloadError.invalid(f"line {self.lines}: {e.message}")
            return False
        return True

    def _line_too_long(self) -> WorkloadError:
        return WorkloadError.too_large(f"line {self.lines + 1} is over {MAX_LINE_BYTES} bytes")

    def _stop(self, error: WorkloadError) -> bool:
        """Stops the reading over a limit; False, for `push` to say so."""
        self.stopped = True
        # A record already refused is still the answer: it came first.
        if self.failed is None:
            self.failed = error
        return False
