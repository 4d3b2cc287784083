/** Unit tests of the retry policy: retry-after parsing, classification, backoff and cancellation. */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ModelError } from '../../src/protocol/errors.js';
import { backoffDelay, describeFailure, retryAfterMs, withRetries } from '../../src/models/retry.js';

describe('retryAfterMs', () => {
  it('reads retry-after-ms, retry-after seconds and retry-after HTTP dates', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '150' }), now)).toBe(150);
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(retryAfterMs({ 'Retry-After': '0.5' }, now)).toBe(500);
    expect(retryAfterMs({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }, now)).toBe(3000);
    expect(retryAfterMs({ 'retry-after': 'Wed, 31 Dec 2025 00:00:00 GMT' }, now)).toBe(0);
    expect(retryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });
});

describe('describeFailure', () => {
  it('retries 408, 409, 429 and 5xx but not other statuses', () => {
    for (const status of [408, 409, 429, 500, 503, 529]) expect(describeFailure(Object.assign(new Error('x'), { status })).retryable).toBe(true);
    for (const status of [400, 401, 403, 404, 422]) expect(describeFailure(Object.assign(new Error('x'), { status })).retryable).toBe(false);
  });

  it('retries connection resets, timeouts and overloaded stream errors', () => {
    expect(describeFailure(new TypeError('fetch failed', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) })).retryable).toBe(true);
    expect(describeFailure(new TypeError('terminated')).retryable).toBe(true);
    expect(describeFailure(Object.assign(new Error('timed out'), { name: 'APIConnectionTimeoutError' })).retryable).toBe(true);
    expect(describeFailure(Object.assign(new Error('overloaded'), { error: { type: 'error', error: { type: 'overloaded_error' } } })).retryable).toBe(true);
    expect(describeFailure(new Error('a bug')).retryable).toBe(false);
  });
});

describe("describeFailure with the SDKs' own error classes", () => {
  it('retries the connection and timeout errors of both SDKs, whose names the OpenAI SDK does not set', () => {
    for (const error of [
      new OpenAI.APIConnectionTimeoutError(),
      new OpenAI.APIConnectionError({ message: 'Connection error.' }),
      new Anthropic.APIConnectionTimeoutError(),
      new Anthropic.APIConnectionError({ message: 'Connection error.' }),
    ]) {
      expect(describeFailure(error).retryable).toBe(true);
    }
    expect(describeFailure(new OpenAI.APIUserAbortError()).retryable).toBe(false);
  });
});

describe('backoffDelay', () => {
  it('doubles from the initial delay, with at most 25% jitter, capped', () => {
    expect([1, 2, 3].map((retry) => backoffDelay(retry, { initialDelayMs: 100, random: () => 0 }))).toEqual([100, 200, 400]);
    expect(backoffDelay(2, { initialDelayMs: 100, random: () => 0.999 })).toBeGreaterThanOrEqual(150);
    expect(backoffDelay(10, { initialDelayMs: 100, maxDelayMs: 1000, random: () => 0 })).toBe(1000);
  });
});

describe('withRetries', () => {
  it('stops when canRetry says so', async () => {
    let attempts = 0;
    const failing = () => {
      attempts += 1;
      return Promise.reject(Object.assign(new Error('busy'), { status: 503 }));
    };
    await expect(withRetries(failing, { provider: 'Test', initialDelayMs: 1, canRetry: () => false })).rejects.toBeInstanceOf(ModelError);
    expect(attempts).toBe(1);
  });

  it('turns an aborted attempt into an AbortError without retrying', async () => {
    const controller = new AbortController();
    let attempts = 0;
    const attempt = () => {
      attempts += 1;
      controller.abort();
      return Promise.reject(new Error('socket closed'));
    };
    await expect(withRetries(attempt, { provider: 'Test', signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(attempts).toBe(1);
  });
});
