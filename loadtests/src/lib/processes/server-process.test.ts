import { describe, expect, it } from 'vitest';
import { launchServer, parsePortLine } from './server-process.js';

describe('parsePortLine', () => {
  it('reads the port of the started line', () => {
    const line = JSON.stringify({ time: 't', level: 'info', msg: 'tessera-gateway started', port: 8080, host: '0.0.0.0' });
    expect(parsePortLine(line, 'tessera-gateway started')).toBe(8080);
  });

  it('ignores other messages, lines without a port and non-JSON lines', () => {
    expect(parsePortLine('{"msg":"tessera-gateway started"}', 'tessera-gateway started')).toBeUndefined();
    expect(parsePortLine('{"msg":"static fleet","port":1}', 'tessera-gateway started')).toBeUndefined();
    expect(parsePortLine('tessera-gateway: no --config', 'tessera-gateway started')).toBeUndefined();
  });
});

describe('launchServer', () => {
  it('learns the port from stdout and stops the process', async () => {
    const script = `const s = require('node:http').createServer((q, r) => r.end('ok')).listen(0, '127.0.0.1', () =>
      console.log(JSON.stringify({ msg: 'up', port: s.address().port })));
      process.once('SIGTERM', () => s.close(() => process.exit(0)));`;
    const server = await launchServer({ name: 'probe', args: ['-e', script], startedMsg: 'up' });
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/`);
      expect(await response.text()).toBe('ok');
    } finally {
      await server.stop();
    }
    expect(server.exited()).toBe(true);
  });

  it('rejects with the log when the process exits before it starts', async () => {
    await expect(launchServer({ name: 'broken', args: ['-e', 'console.error("boom"); process.exit(3)'], startedMsg: 'up' })).rejects.toThrow(
      /broken exited \(code 3\)[\s\S]*boom/,
    );
  });
});
