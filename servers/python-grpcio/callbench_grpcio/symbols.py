"""The descriptor pool reflection answers from, also finding the file of a method's full name."""

from google.protobuf import descriptor_pool


class MethodAwarePool:
    """The default pool, except that `FindFileContainingSymbol` also finds methods
    (`callbench.v1.Auth.Test`): ghz and `grpcurl describe` ask reflection for a method's symbol,
    and upb's pool (protobuf 7) finds only services, messages, enums and fields, so ghz failed
    with "Symbol not found" through reflection."""

    def __init__(self, pool=None):
        self._pool = pool or descriptor_pool.Default()

    def __getattr__(self, name):
        return getattr(self._pool, name)

    def FindFileContainingSymbol(self, symbol):  # noqa: N802 (the pool's own name)
        try:
            return self._pool.FindFileContainingSymbol(symbol)
        except KeyError:
            service, _, method = symbol.rpartition(".")
            try:
                found = self._pool.FindServiceByName(service)
            except KeyError:
                found = None
            if found is not None and method in found.methods_by_name:
                return found.file
            raise
