/**
 * `simple_identity`: OUTPUT0 = INPUT0, element for element and byte for byte (BYTES elements arrive as
 * Uint8Arrays and leave as they came), so a NUL or bytes that are not UTF-8 travel unchanged.
 */
export function initialize() {}

export function execute(requests) {
  return requests.map((request) => {
    const input = request.inputs.INPUT0;
    return { outputs: { OUTPUT0: { datatype: 'BYTES', shape: [...input.shape], data: input.data } } };
  });
}

export function finalize() {}
