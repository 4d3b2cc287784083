// Node's own minimal static file server, the baseline of the serving figure: each GET reads the file and sends it. Prints its URL on stdout.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? 'requests');
const server = createServer(async (request, response) => {
  try {
    const body = await readFile(join(root, decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname)));
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(body);
  } catch {
    response.writeHead(404);
    response.end();
  }
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
