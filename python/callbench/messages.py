"""The contract's protobuf message classes, built at run time from the descriptors compiled into the
extension (no generated code to keep in step with contract/proto/)."""

from __future__ import annotations

import functools
from types import SimpleNamespace


@functools.cache
def messages() -> SimpleNamespace:
    """`callbench.v1` message classes by short name: `messages().Board`, `messages().StepRequest`..."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    from . import _native

    files = descriptor_pb2.FileDescriptorSet.FromString(_native.descriptor_set())
    pool = descriptor_pool.DescriptorPool()
    for f in files.file:
        pool.Add(f)
    classes = {}
    for f in files.file:
        for name in f.message_type:
            full = f"{f.package}.{name.name}"
            classes[name.name] = message_factory.GetMessageClass(pool.FindMessageTypeByName(full))
    return SimpleNamespace(**classes)
