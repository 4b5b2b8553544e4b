/**
 * Checks our hand-written .proto files (through their generated descriptors) against the field tables
 * of the reference wire schema: every message, field name, number, type, label and oneof, every enum
 * value and every RPC. A mismatch here would silently break interoperability with Triton's clients.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ScalarType } from '@bufbuild/protobuf';
import type { DescField, DescFile } from '@bufbuild/protobuf';
import { nestedTypes } from '@bufbuild/protobuf/reflect';
import { file_model_config } from '../src/gen/model_config_pb.js';
import { file_grpc_service } from '../src/gen/grpc_service_pb.js';
import { file_health } from '../src/gen/health_pb.js';
import { referenceData } from '../test/support/reference-data.js';

// Outside the repository: a fresh clone skips this file with one line saying what is missing.
const schema = referenceData('reference/triton-wire-schema.md', 'our .proto files against the reference wire schema');

interface Expected {
  messages: Map<string, string[]>; // full name → "field|number|type|label|oneof" rows
  enums: Map<string, string[]>; // full name → "NAME=n"
  rpcs: Map<string, string[]>; // service → rpc lines
}

function parseSchema(text: string): Expected {
  const expected: Expected = { messages: new Map(), enums: new Map(), rpcs: new Map() };
  let message: string | undefined;
  let service: string | undefined;
  for (const line of text.split('\n')) {
    const heading = /^#### (\S+)/.exec(line);
    const enumLine = /^enum (\S+): (.*)$/.exec(line);
    const serviceLine = /^service (\S+):$/.exec(line);
    const rpcLine = /^- rpc (.*)$/.exec(line);
    if (heading) {
      message = heading[1]!;
      expected.messages.set(message, []);
    } else if (enumLine) {
      expected.enums.set(enumLine[1]!, enumLine[2]!.split(', '));
    } else if (serviceLine) {
      service = serviceLine[1]!;
      expected.rpcs.set(service, []);
    } else if (rpcLine && service) {
      expected.rpcs.get(service)!.push(rpcLine[1]!);
    } else if (message && line.startsWith('| ') && !line.startsWith('| field') && !line.startsWith('| ---')) {
      const cells = line.split('|').slice(1, -1).map((cell) => cell.trim());
      expected.messages.get(message)!.push(cells.join('|'));
    }
  }
  return expected;
}

function typeName(field: DescField): string {
  const scalarName = (scalar: ScalarType) => ScalarType[scalar].toLowerCase();
  switch (field.fieldKind) {
    case 'scalar':
      return scalarName(field.scalar);
    case 'enum':
      return field.enum.typeName;
    case 'message':
      return field.message.typeName;
    case 'list':
      return field.listKind === 'scalar'
        ? scalarName(field.scalar)
        : field.listKind === 'enum'
          ? field.enum.typeName
          : field.message.typeName;
    case 'map': {
      const value =
        field.mapKind === 'scalar'
          ? scalarName(field.scalar)
          : field.mapKind === 'enum'
            ? field.enum.typeName
            : field.message.typeName;
      return `map<${scalarName(field.mapKey)}, ${value}>`;
    }
  }
}

function actualOf(files: DescFile[]): Expected {
  const actual: Expected = { messages: new Map(), enums: new Map(), rpcs: new Map() };
  for (const file of files) {
    for (const type of nestedTypes(file)) {
      if (type.kind === 'message') {
        const rows = type.fields.map((field) =>
          [
            field.name,
            String(field.number),
            typeName(field),
            field.fieldKind === 'list' ? 'repeated' : '',
            field.oneof?.name ?? '',
          ].join('|'),
        );
        actual.messages.set(type.typeName, rows);
      } else if (type.kind === 'enum') {
        actual.enums.set(
          type.typeName,
          type.values.map((value) => `${value.name}=${value.number}`),
        );
      } else if (type.kind === 'service') {
        actual.rpcs.set(
          type.typeName,
          type.methods.map((method) => {
            const streamIn = method.methodKind === 'client_streaming' || method.methodKind === 'bidi_streaming';
            const streamOut = method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming';
            return `${method.name}(${streamIn ? 'stream ' : ''}${method.input.typeName}) returns (${streamOut ? 'stream ' : ''}${method.output.typeName})`;
          }),
        );
      }
    }
  }
  return actual;
}

describe.skipIf(!schema.present)('our .proto files against the reference wire schema', () => {
  const expected = parseSchema(schema.present ? readFileSync(schema.path, 'utf8') : '');
  const actual = actualOf([file_model_config, file_grpc_service, file_health]);

  it('has every message with the same fields, numbers, types, labels and oneofs', () => {
    expect(expected.messages.size).toBeGreaterThan(90);
    // Map entry messages are synthetic (not listed in the reference) and never show up in nestedTypes.
    expect([...actual.messages.keys()].sort()).toEqual([...expected.messages.keys()].sort());
    for (const [name, rows] of expected.messages) {
      // Field order in the table is declaration order; compare as sets of rows to stay order-agnostic.
      expect({ name, rows: [...(actual.messages.get(name) ?? [])].sort() }).toEqual({ name, rows: [...rows].sort() });
    }
  });

  it('has every enum with the same values', () => {
    expect([...actual.enums.keys()].sort()).toEqual([...expected.enums.keys()].sort());
    for (const [name, values] of expected.enums) {
      expect({ name, values: actual.enums.get(name) }).toEqual({ name, values });
    }
  });

  it('has every service with every RPC and streaming shape', () => {
    expect(actual.rpcs).toEqual(expected.rpcs);
  });
});
