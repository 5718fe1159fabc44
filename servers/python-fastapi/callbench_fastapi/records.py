"""The records routes: `POST /records/batch` (one JSON body), `POST /records/upload` (NDJSON read line by line as
the body streams in, never held whole) and `GET /records?count=N` (NDJSON lines written as they are made).

The summary, the line reading and the records a download sends are callbench_shared's (records.py, upload.py); a
line is parsed as every other REST body is (strict JSON, the pydantic models).
"""

import json
from collections.abc import AsyncIterator

import pydantic
import pydantic_core
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import StreamingResponse

from callbench_shared import records
from callbench_shared.errors import WorkloadError
from callbench_shared.limits import MAX_UPLOAD_BYTES
from callbench_shared.upload import Upload

from .json_route import JsonRoute
from .models import EchoMessage, Record, UploadSummary

# The media type of a streamed upload and of a download's answer.
NDJSON = "application/x-ndjson"
# The route whose body may be bigger than the 4 MiB of the others (the app's gzip middleware needs to know it).
UPLOAD_PATH = "/records/upload"
# A download's answer goes out in chunks of about this many bytes (whole lines), never built whole.
CHUNK_BYTES = 16 * 1024

router = APIRouter(route_class=JsonRoute)


@router.post("/records/batch")
async def batch(message: EchoMessage) -> UploadSummary:
    return UploadSummary(**records.UploadSummary.of(message.records).fields())


# The body limit of this route is the upload's (64 MiB), not the app's 4 MiB: lines are held one at a time.
@router.post(UPLOAD_PATH, max_body_size=MAX_UPLOAD_BYTES)
async def upload(request: Request) -> UploadSummary:
    if not is_ndjson(request.headers.get("content-type")):
        raise HTTPException(415, f"Content-Type must be {NDJSON}")
    reader = Upload(parse_record)
    async for chunk in request.stream():
        if not reader.push(chunk):
            break  # over a limit: the rest stays unread (see unread_body.py)
    return UploadSummary(**reader.finish().fields())


@router.get("/records")
async def download(request: Request) -> StreamingResponse:
    # The first `count` when the query repeats it.
    values = request.query_params.getlist("count")
    count = records.count_param(values[0] if values else None)
    return StreamingResponse(download_chunks(count), media_type=NDJSON)


async def download_chunks(count: int) -> AsyncIterator[bytes]:
    """The answer's lines, a chunk of whole lines at a time, made as they are sent."""
    lines: list[str] = []
    size = 0
    for i in range(count):
        line = json.dumps(records.downloaded(i), separators=(",", ":")) + "\n"
        lines.append(line)
        size += len(line)
        if size >= CHUNK_BYTES:
            yield "".join(lines).encode()
            lines.clear()
            size = 0
    if lines:
        yield "".join(lines).encode()


def parse_record(line: bytes) -> Record:
    """One upload line as a Record, as strictly as a JSON body (json_route.py): no NaN, no lone surrogates."""
    try:
        return Record.model_validate(pydantic_core.from_json(line, allow_inf_nan=False))
    except pydantic.ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise WorkloadError.invalid(f"{where}: {first['msg']}" if where else first["msg"]) from e


def is_ndjson(content_type: str | None) -> bool:
    return content_type is not None and content_type.partition(";")[0].strip().lower() == NDJSON
