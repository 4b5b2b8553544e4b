/**
 * Triton's LogRequest(): every request-level message starts with it. Here, apart from the validator,
 * so the sequence scheduler words its errors the same way without importing models/.
 */
export function requestPrefix(id: string): string {
  return `[request id: ${id === '' ? '<id_unknown>' : id}] `;
}
