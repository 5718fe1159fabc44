'use strict';
// protobufjs turns a map field into a nested entry type named after the field ("Statuses") where
// protoc names it "StatusesEntry" and every descriptor checker requires that name: grpcurl and ghz
// (protobuf-go) refused the health service's reflection ("invalid map: incorrect implicit map entry
// name"). Reflection is given the descriptors with each map entry renamed as protoc names it.

const { FileDescriptorProto } = require('protobufjs/ext/descriptor');

/** protoc's name for the entry type of map field `field` (protobuf-go's strs.MapEntryName). */
function mapEntryName(field) {
  let name = '';
  let upper = true;
  for (const c of field) {
    if (c === '_') {
      upper = true;
    } else {
      name += upper ? c.toUpperCase() : c;
      upper = false;
    }
  }
  return `${name}Entry`;
}

/** Renames the map entries declared in `message` (full name `.pkg.Name`) and in its nested types. */
function renameMapEntries(message, fullName) {
  for (const nested of message.nestedType || []) {
    if (nested.options && nested.options.mapEntry) {
      const refersToIt = (f) => f.typeName === nested.name || f.typeName === `${fullName}.${nested.name}`;
      const field = (message.field || []).find(refersToIt);
      if (field) {
        nested.name = mapEntryName(field.name);
        field.typeName = `${fullName}.${nested.name}`;
      }
    } else {
      renameMapEntries(nested, `${fullName}.${nested.name}`);
    }
  }
}

/** The encoded FileDescriptorProto `bin` with its map entries named as protoc names them. */
function withProtocMapEntries(bin) {
  const file = FileDescriptorProto.decode(bin);
  const scope = file.package ? `.${file.package}` : '';
  for (const message of file.messageType || []) {
    renameMapEntries(message, `${scope}.${message.name}`);
  }
  return Buffer.from(FileDescriptorProto.encode(file).finish());
}

/** A copy of proto-loader's `packageDefinition` whose descriptors reflection may serve. */
function forReflection(packageDefinition) {
  const fixed = new Map();
  const fix = (bin) => {
    const key = Buffer.from(bin).toString('base64');
    if (!fixed.has(key)) fixed.set(key, withProtocMapEntries(bin));
    return fixed.get(key);
  };
  const out = {};
  for (const [name, definition] of Object.entries(packageDefinition)) {
    const protos = definition.fileDescriptorProtos;
    out[name] = Array.isArray(protos) ? { ...definition, fileDescriptorProtos: protos.map(fix) } : definition;
  }
  return out;
}

module.exports = { forReflection, mapEntryName };
