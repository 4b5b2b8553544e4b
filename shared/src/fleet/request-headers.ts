/**
 * Headers the gateway adds to the requests it forwards to a node, next to the KServe ones. Both
 * sides import the names from here so they cannot drift.
 */

/**
 * The time the request has left, in whole milliseconds (an integer >= 0), as the gateway computed it
 * when it forwarded the request; relative rather than absolute so node and gateway clocks need not
 * agree. The node drops the request, unexecuted, once that time has passed (HTTP: 504), as a gRPC
 * deadline does. A malformed value is refused with 400 naming the header.
 */
export const DEADLINE_HEADER = 'x-tessera-deadline-ms';
