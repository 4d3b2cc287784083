// An MCP server (stdio, written with the official SDK) with a glossary to look words up in and to add to.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const glossary = new Map([['agent', 'a program that acts on its own']]);
const server = new Server({ name: 'glossary', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    { name: 'lookup', description: 'Looks a word up.', inputSchema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] } },
    { name: 'define', description: 'Adds a word.', inputSchema: { type: 'object', properties: { word: { type: 'string' }, meaning: { type: 'string' } }, required: ['word', 'meaning'] } },
    { name: 'forget', description: 'Removes every word.', inputSchema: { type: 'object', properties: {} } },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, (request) => {
  const { word, meaning } = request.params.arguments ?? {};
  if (request.params.name === 'lookup') return { content: [], structuredContent: { word, meaning: glossary.get(word) ?? null } };
  if (request.params.name === 'define') {
    glossary.set(word, meaning);
    return { content: [{ type: 'text', text: `defined ${word}` }] };
  }
  return { isError: true, content: [{ type: 'text', text: 'not allowed' }] };
});
await server.connect(new StdioServerTransport());
