import { describe, expect, it } from 'vitest';
import * as library from '../src/index.js';

describe('the public surface', () => {
  it('exports exactly these runtime names (changing them is a breaking change)', () => {
    expect(Object.keys(library).sort()).toEqual([
      'APPROVAL_MODES',
      'ActivityError',
      'AnthropicModel',
      'BoundError',
      'CallError',
      'DELEGATE_ACTIVITY',
      'DelegateError',
      'HandlerRegistry',
      'ModelError',
      'ModelProviders',
      'ModelRegistry',
      'OpenAIModel',
      'ProtocolError',
      'RecordingModel',
      'ReplayModel',
      'RequestError',
      'ResolverRegistry',
      'RunTrace',
      'Runtime',
      'Tracer',
      'UsageError',
      'UserError',
      'builtinHandlers',
      'composeSolutionSchema',
      'createApprovalHook',
      'createDefaultResolvers',
      'createDelegateActivity',
      'createRequestHandler',
      'createRuntime',
      'createUpfrontPreparer',
      'defaultHandlers',
      'formatProblem',
      'jsonlFileSink',
      'memorySink',
      'mergeDelegateContract',
      'renderContext',
      'requiresApproval',
      'serve',
    ]);
  });
});
