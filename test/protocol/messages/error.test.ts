/** Unit tests of src/protocol/messages/error.ts: error messages have no shorthand and render the failed call. */
import { describe, expect, it } from 'vitest';
import { builtins as handlers, render } from '../../helpers/builtin-messages.js';

describe('error: no shorthand (MSG-8)', () => {
  it('has no shorthand: the built-in normalizers do not touch it', () => {
    expect(handlers.get('error')?.normalize).toBeUndefined();
  });
});

describe('error: rendering (MSG-16)', () => {
  it('renders the tool, the call id, the code, the message and the call as JSON', () => {
    const call = { id: '0.1', _tool: 'get_weather', city: 'Oslo' };
    const content = render({ type: 'error', call, error: { code: 'invalid_params', message: 'The city is unknown.' } }).messages[0]?.content ?? '';
    expect(content).toContain('get_weather');
    expect(content).toContain('(0.1)');
    expect(content).toContain('invalid_params: The city is unknown.');
    expect(content).toContain(JSON.stringify(call));
  });

  it('renders an error whose call has no id or tool (for example a document-written one)', () => {
    const content = render({ type: 'error', call: {}, error: { code: 'x', message: 'y' } }).messages[0]?.content ?? '';
    expect(content).toContain('x: y');
    expect(content).not.toContain('undefined');
  });
});
