import { request, Agent } from 'node:http';
const port = Number(process.argv[2]); const agent = new Agent({ keepAlive: true, maxSockets: 64 });
for (let i = 0; i < 64; i++) request({ port, host: '127.0.0.1', agent }, (res) => res.on('data', () => {})).end();
