// sandbox-runtime's own HTTP proxy (the one `srt` puts in front of a
// sandbox), started alone: CONNECT to the hosts in argv[3] (comma
// separated), on 127.0.0.1:argv[2]. Prints "ready" once it listens.
import { createHttpProxyServer } from './node_modules/@anthropic-ai/sandbox-runtime/dist/sandbox/http-proxy.js';

const port = Number(process.argv[2]);
const allow = new Set(process.argv[3].split(','));
const server = createHttpProxyServer({ filter: async (_port, host) => allow.has(host) });
server.listen(port, '127.0.0.1', () => console.log('ready'));
