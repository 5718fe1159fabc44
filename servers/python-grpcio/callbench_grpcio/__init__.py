"""callbench reference server: gRPC on grpcio's asyncio server (grpc.aio)."""
