import { describe, expect, it } from 'vitest';
import { parseStartedLine } from './node-process.js';

describe('parseStartedLine', () => {
  it('reads the ports of the started line', () => {
    const line = JSON.stringify({ time: 't', level: 'info', msg: 'tessera-node started', httpPort: 8000, grpcPort: 8001, metricsPort: 8002 });
    expect(parseStartedLine(line)).toEqual({ httpPort: 8000, grpcPort: 8001, metricsPort: 8002 });
  });

  it('ignores other lines, including non-JSON ones', () => {
    expect(parseStartedLine('{"msg":"loading model"}')).toBeUndefined();
    expect(parseStartedLine('warning: something')).toBeUndefined();
    expect(parseStartedLine('null')).toBeUndefined();
  });
});
