"""callbench.v1.Records, the streaming calls: Upload (client streaming), Converse (bidirectional) and Download
(server streaming), over echo's records and with echo's checks.

Each method is an async generator or coroutine on grpc.aio's event loop: a message is read, checked and answered
(Converse) or counted (Upload) before the next is read, and Download yields its records one at a time, so grpc
core's flow control holds the server back when the client reads slowly. grpc core applies the 4 MiB limit to
every message of a stream.
"""

from collections.abc import AsyncIterator

import grpc

from callbench.v1 import echo_pb2, records_pb2, records_pb2_grpc
from callbench_shared import echo, records
from callbench_shared.errors import WorkloadError

from .errors import abort


class Records(records_pb2_grpc.RecordsServicer):
    async def Upload(self, request_iterator: AsyncIterator, context: grpc.aio.ServicerContext):
        """Every record until the client half-closes, answered once with their summary."""
        summary = records.UploadSummary()
        try:
            async for record in request_iterator:
                summary.add(record)
        except WorkloadError as e:
            await abort(context, e)
        return records_pb2.UploadSummary(**summary.fields())

    async def Converse(self, request_iterator: AsyncIterator, context: grpc.aio.ServicerContext):
        """Every message back unchanged as soon as it is read; an invalid one ends the call after the answers
        to those before it."""
        async for message in request_iterator:
            try:
                echo.validate(message.records)
            except WorkloadError as e:
                await abort(context, e)
            yield message

    async def Download(self, request, context: grpc.aio.ServicerContext):
        """`count` records, made one at a time as they are sent."""
        try:
            count = records.download_count(request.count)
        except WorkloadError as e:
            await abort(context, e)
        for i in range(count):
            yield echo_pb2.Record(**records.downloaded(i))
