// An MCP client of delegate-mcp: lists its tools and calls one. `node examples/mcp-client.mjs` starts `delegate-mcp requests`
// over stdio (the package's own, wherever it is installed); `node examples/mcp-client.mjs http://127.0.0.1:8788/mcp` reaches a
// `delegate-mcp requests --http 8788` instead.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fileURLToPath } from 'node:url';

const url = process.argv[2];
const transport =
  url === undefined
    ? new StdioClientTransport({
        command: process.execPath,
        args: [fileURLToPath(new URL('../dist/cli/mcp.js', import.meta.url)), fileURLToPath(new URL('../requests', import.meta.url))],
        stderr: 'ignore',
      })
    : new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: 'example', version: '1.0.0' });
await client.connect(transport);
try {
  const { tools } = await client.listTools();
  console.log(`${tools.length} tools:`, tools.map((tool) => tool.name).join(', '));
  // welcome.json is a plan that needs no model: its call answers at once.
  const result = await client.callTool({ name: 'welcome', arguments: { name: 'Ada' } });
  console.log(JSON.stringify(result.structuredContent));
  if (result.isError) process.exitCode = 1;
} finally {
  await client.close();
}
