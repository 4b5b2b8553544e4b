/**
 * Gives a decoder model one extra output per present: the last position of `present.{i}.{key|value}`
 * ([batch, heads, 1, head_dim], a Slice along axis 2), so a decode run fetches only the new token's
 * key and value. onnxruntime-node hands back a fresh JS copy of every fetched output on every run; the
 * full presents are rows × heads × (capacity + 1) × head_dim floats each, of which a step keeps one
 * position (kv-cache.ts). onnxruntime only copies what is fetched.
 *
 * No parse of the whole graph and no rewrite: protobuf merges a repeated occurrence of a singular
 * message field, so one more `ModelProto.graph` (field 7) appended to the model's bytes, holding only
 * the new nodes, their initializers and the new outputs, is read as one graph with them appended. The
 * model is only scanned (names, opset, IR version, external data) to decide whether that is safe;
 * anything unexpected leaves the model as it is, with the reason.
 */
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';

export type LastPositionPatch =
  | { readonly ok: true; readonly bytes: Uint8Array; readonly outputs: ReadonlyMap<string, string> }
  | { readonly ok: false; readonly why: string };

const PRESENT = /^present\.\d+\.(key|value)$/;
/** Slice takes starts/ends/axes as inputs from opset 10 on. */
const MIN_SLICE_OPSET = 10;
/** IR 4 on: initializers need not be listed as graph inputs. */
const MIN_IR_VERSION = 4;
const INT64_MAX = 2n ** 63n - 1n;
const TENSOR_INT64 = 7;
const TENSOR_FLOAT = 1;
const DATA_LOCATION_EXTERNAL = 1;

/** The extra output carrying the last position of `present`. */
export function lastPositionName(present: string): string {
  return `${present}/tessera_last_position`;
}

const CONSTANTS = { starts: -1n, ends: INT64_MAX, axes: 2n } as const;
const constantName = (which: keyof typeof CONSTANTS): string => `tessera_last_position/${which}`;

interface Scan {
  irVersion: number;
  defaultOpset: number | undefined;
  /** Every name a value, initializer or graph port has in the main graph. */
  readonly names: Set<string>;
  readonly outputs: string[];
  externalData: boolean;
}

/** The model with the last-position outputs appended, or why not (the model is then loaded as it is). */
export function withLastPositionOutputs(model: Uint8Array): LastPositionPatch {
  let scan: Scan;
  try {
    scan = scanModel(model);
  } catch (error) {
    return { ok: false, why: `the model could not be scanned as ONNX (${error instanceof Error ? error.message : String(error)})` };
  }
  if (scan.irVersion < MIN_IR_VERSION) return { ok: false, why: `IR version ${scan.irVersion} is below ${MIN_IR_VERSION}` };
  if (scan.defaultOpset === undefined) return { ok: false, why: 'the model imports no default-domain opset' };
  if (scan.defaultOpset < MIN_SLICE_OPSET) return { ok: false, why: `opset ${scan.defaultOpset} is below ${MIN_SLICE_OPSET} (Slice with input starts/ends)` };
  if (scan.externalData) return { ok: false, why: 'the model keeps tensors in external data files (loading from bytes would lose their folder)' };
  const presents = scan.outputs.filter((name) => PRESENT.test(name));
  if (presents.length === 0) return { ok: false, why: "the model has no 'present.{i}.key|value' outputs" };
  const outputs = new Map(presents.map((p) => [p, lastPositionName(p)]));
  const added = [...outputs.values(), ...Object.keys(CONSTANTS).map((k) => constantName(k as keyof typeof CONSTANTS))];
  const clash = added.find((name) => scan.names.has(name));
  if (clash !== undefined) return { ok: false, why: `the model already has a value named '${clash}'` };
  const graph = appendedGraph(outputs);
  const field = new BinaryWriter().tag(7, WireType.LengthDelimited).uint32(graph.byteLength).finish();
  const bytes = new Uint8Array(model.byteLength + field.byteLength + graph.byteLength);
  bytes.set(model, 0);
  bytes.set(field, model.byteLength);
  bytes.set(graph, model.byteLength + field.byteLength);
  return { ok: true, bytes, outputs };
}

/** A GraphProto holding only the Slice nodes, their int64 constants and the new outputs. */
function appendedGraph(outputs: ReadonlyMap<string, string>): Uint8Array {
  const w = new BinaryWriter();
  for (const [present, last] of outputs) {
    w.tag(1, WireType.LengthDelimited).fork(); // node: NodeProto
    for (const input of [present, constantName('starts'), constantName('ends'), constantName('axes')]) w.tag(1, WireType.LengthDelimited).string(input);
    w.tag(2, WireType.LengthDelimited).string(last);
    w.tag(3, WireType.LengthDelimited).string(last); // name
    w.tag(4, WireType.LengthDelimited).string('Slice');
    w.join();
  }
  for (const [which, value] of Object.entries(CONSTANTS)) {
    w.tag(5, WireType.LengthDelimited).fork(); // initializer: TensorProto
    w.tag(1, WireType.Varint).int64(1); // dims
    w.tag(2, WireType.Varint).int32(TENSOR_INT64); // data_type
    w.tag(8, WireType.LengthDelimited).string(constantName(which as keyof typeof CONSTANTS));
    const raw = new Uint8Array(8);
    new DataView(raw.buffer).setBigInt64(0, value, true); // raw_data is little-endian
    w.tag(9, WireType.LengthDelimited).bytes(raw);
    w.join();
  }
  for (const last of outputs.values()) {
    w.tag(12, WireType.LengthDelimited).fork(); // output: ValueInfoProto, shape left to inference
    w.tag(1, WireType.LengthDelimited).string(last);
    w.tag(2, WireType.LengthDelimited).fork(); // type: TypeProto
    w.tag(1, WireType.LengthDelimited).fork(); // tensor_type
    w.tag(1, WireType.Varint).int32(TENSOR_FLOAT); // elem_type
    w.join();
    w.join();
    w.join();
  }
  return w.finish();
}

/** Calls `each` for every field of a message; length-delimited fields come with their bytes (views, no copy). */
function fields(message: Uint8Array, each: (fieldNo: number, wireType: WireType, reader: BinaryReader) => void): void {
  const reader = new BinaryReader(message);
  while (reader.pos < reader.len) {
    const [fieldNo, wireType] = reader.tag();
    const before = reader.pos;
    each(fieldNo, wireType, reader);
    if (reader.pos === before) reader.skip(wireType, fieldNo);
  }
}

function stringField(message: Uint8Array, wanted: number): string | undefined {
  let value: string | undefined;
  fields(message, (fieldNo, wireType, reader) => {
    if (fieldNo === wanted && wireType === WireType.LengthDelimited) value = reader.string();
  });
  return value;
}

function scanModel(model: Uint8Array): Scan {
  const scan: Scan = { irVersion: 0, defaultOpset: undefined, names: new Set(), outputs: [], externalData: false };
  let graphs = 0;
  fields(model, (fieldNo, wireType, reader) => {
    if (fieldNo === 1 && wireType === WireType.Varint) scan.irVersion = Number(reader.int64());
    else if (fieldNo === 8 && wireType === WireType.LengthDelimited) {
      let domain = '';
      let version = 0;
      fields(reader.bytes(), (f, t, r) => {
        if (f === 1 && t === WireType.LengthDelimited) domain = r.string();
        else if (f === 2 && t === WireType.Varint) version = Number(r.int64());
      });
      if (domain === '' || domain === 'ai.onnx') scan.defaultOpset = version;
    } else if (fieldNo === 7 && wireType === WireType.LengthDelimited) {
      graphs += 1;
      scanGraph(reader.bytes(), scan);
    }
  });
  if (graphs === 0) throw new Error('no graph');
  return scan;
}

function scanGraph(graph: Uint8Array, scan: Scan): void {
  fields(graph, (fieldNo, wireType, reader) => {
    if (wireType !== WireType.LengthDelimited) return;
    if (fieldNo === 1) {
      // node: its inputs (1) and outputs (2) name values.
      fields(reader.bytes(), (f, t, r) => {
        if ((f === 1 || f === 2) && t === WireType.LengthDelimited) scan.names.add(r.string());
      });
    } else if (fieldNo === 5) {
      const tensor = reader.bytes();
      fields(tensor, (f, t, r) => {
        if (f === 8 && t === WireType.LengthDelimited) scan.names.add(r.string());
        else if (f === 14 && t === WireType.Varint && r.int32() === DATA_LOCATION_EXTERNAL) scan.externalData = true;
      });
    } else if (fieldNo === 11 || fieldNo === 12 || fieldNo === 13) {
      const name = stringField(reader.bytes(), 1) ?? '';
      scan.names.add(name);
      if (fieldNo === 12) scan.outputs.push(name);
    }
  });
}
