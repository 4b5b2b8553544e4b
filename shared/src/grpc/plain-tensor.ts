/**
 * One tensor of a plain ModelInferRequest input or ModelInferResponse output, read in place with a
 * WireCursor: the name, datatype and shape fields (1, 2, 3) and nothing else, then checked against its
 * raw contents as the reference conversions check it. Both one-pass readers (the gateway's request
 * reader and its node-answer reader) use it; anything outside it is not plain (NotPlain), and the
 * caller takes the reference path for its error.
 */
import { countBytesElements, datatypeByteSize, type Datatype, type Tensor } from '../tensors/index.js';
import { addDimension, NotPlain, readPackedDimensions, type RememberedStrings, type ShapeRead, type WireCursor } from './wire-cursor.js';

/** A tensor as read from its message: everything but its data. */
export interface TensorHead extends ShapeRead {
  name: string;
  datatype: Datatype | undefined;
}

/** The tensor whose body ends at `end`, read with `c` (its end narrowed, then put back); its name kept in `remembered` at `slot`. */
export function readTensorHead(c: WireCursor, end: number, remembered: RememberedStrings, slot: number): TensorHead {
  const head: TensorHead = { name: '', datatype: undefined, shape: [], elements: 1 };
  const outer = c.end;
  c.end = end;
  while (c.pos < end) {
    const tag = c.varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field === 1 && wire === 2) head.name = c.string(remembered, slot);
    else if (field === 2 && wire === 2) head.datatype = c.datatype();
    else if (field === 3 && wire === 2) readPackedDimensions(c, head);
    else if (field === 3 && wire === 0) addDimension(head, c.varint());
    else throw new NotPlain();
  }
  c.end = outer;
  return head;
}

/** `head` over `data` when `data` holds exactly what its shape says and its datatype is known; else not plain. */
export function checkedTensor(head: TensorHead, data: Uint8Array, role: 'input' | 'output'): Tensor {
  const datatype = head.datatype;
  // No datatype: the reference names the empty one in its error.
  if (datatype === undefined) throw new NotPlain();
  const size = datatypeByteSize(datatype);
  if (size === null) {
    // BYTES: the reference's own count (it throws on a truncated element: then its message, not ours).
    let found: number;
    try {
      found = countBytesElements(data, role, head.elements);
    } catch {
      throw new NotPlain();
    }
    if (found !== head.elements) throw new NotPlain();
  } else if (data.length !== head.elements * size) throw new NotPlain();
  return { name: head.name, datatype, shape: head.shape, data };
}
