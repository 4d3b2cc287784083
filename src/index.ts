/** The public surface of the library: everything a user embeds, named once here. */

// Running Requests
export { createRuntime, DelegatingRuntime, type CreateRuntimeOptions } from './create-runtime.js';
export { ActivityRegistry, type ActivityOptions, type ActivityRegistration } from './protocol/calls/activity-registry.js';
export { Runtime, type RunPreparer, type RuntimeOptions } from './protocol/run/runtime.js';
export { DELEGATE_ACTIVITY } from './protocol/constants.js';
export type {
  Activity,
  ActivityEnvironment,
  ConfirmDecision,
  ConfirmHook,
  ConfirmRequest,
  RunInfo,
  RunOptions,
  TreeEndHook,
  RequestFileReader,
  RunResult,
  ResumeOptions,
} from './protocol/contracts.js';
export { requestHash, type JournalOpener, type JournalStore } from './protocol/trace/journal.js';
export type { JournaledOptions } from './protocol/trace/events.js';
export { openJournalFile, readJournalText } from './files/journal-file.js';
export type { UsageSummary } from './protocol/usage.js';
export type { LoadedRequest } from './protocol/messages/load-request.js';
export { readRequestFile } from './files/read-request-file.js';
export type { TreeBounds, TreeLimits } from './protocol/run/tree-bounds.js';

// Documents and messages
export type {
  AdvisorMessage,
  Call,
  DataMessage,
  ErrorMessage,
  InputMessage,
  JsonSchema,
  JsonValue,
  Message,
  MetaMessage,
  OutputMethod,
  PlanMessage,
  RequestConfig,
  RequestDocument,
  RequestMeta,
  Solution,
  StateMessage,
  TextMessage,
  ToolMessage,
  ToolSchema,
  TurnMessage,
} from './protocol/types.js';
export type { Usage } from './protocol/usage.js';
export {
  HandlerRegistry,
  defineHandler,
  type AnswerCheck,
  type DataSemantics,
  type DocumentProblem,
  type MessageHandler,
  type PlacedMessage,
  type RenderState,
  type ShownFields,
} from './protocol/messages/handlers.js';
export type { MessageProblem } from './protocol/errors.js';
export { recordFor, type DataRecord, type ReadResult, type RecordOutcome } from './protocol/variables/data-records.js';
export { builtinHandlers, defaultHandlers } from './protocol/messages/builtin-handlers.js';
export { renderContext, type RenderedContext, type RenderOptions } from './protocol/messages/render-context.js';
export { composeSolutionSchema, type SolutionAdditions } from './protocol/tools/tools.js';

// Errors
export {
  ActivityError,
  BoundError,
  CallError,
  DelegateError,
  InputError,
  ModelError,
  ProtocolError,
  RequestError,
  UsageError,
  UserError,
  formatProblem,
  type ErrorCode,
  type Problem,
} from './protocol/errors.js';

// Trace
export { Tracer, RunTrace, memorySink, type TraceContext, type TraceContextSource, type TraceEvent, type TraceListener } from './protocol/trace/trace.js';
export { traceToOpenTelemetry, type OpenTelemetryOptions, type OpenTelemetryTrace } from './telemetry-entry.js';
export { jsonlFileSink, type JsonlFileSink } from './files/jsonl-file-sink.js';
export {
  knownTraceEvent,
  type KnownTraceEvent,
  type TraceEventBase,
  type TraceEventMap,
  type TraceEventName,
  type TraceEventOf,
} from './protocol/trace/events.js';

// Delegation
export { createDelegateActivity, type DelegateActivityOptions, type ChildModelChooser } from './activities/delegate.js';
export { createUpfrontPreparer, mergeDelegateContract } from './activities/upfront-preparer.js';
export { createTierDelegateActivity, type TierDelegateActivityOptions, type TierModelChooser } from './activities/tier-delegate.js';
export type { DelegateOutcome, FailureMode } from './activities/delegate-outcome.js';
export type { InsufficientContextRequest } from './activities/need-context.js';
export { DELEGATE_TOOL, NEED_CONTEXT_TOOL, type TierCatalog } from './protocol/tools/delegate-tool.js';
export { ResolverRegistry, createDefaultResolvers, type DefaultResolverOptions, type ResolverRegistryOptions } from './resolvers/resolver-registry.js';
export type { DelegateRegistryKind, LocatedRequest, Resolver, ResolveContext, ResolvedRequest } from './resolvers/resolver.js';
export { DelegateRegistry, type DelegateTarget } from './resolvers/delegate-registry.js';
export { NameResolver, type NameResolverOptions } from './resolvers/name-resolver.js';

// Approvals
export {
  APPROVAL_MODES,
  createApprovalHook,
  requiresApproval,
  type ApprovalMode,
  type ApprovalPolicyOptions,
  type ApprovalPrompt,
} from './approvals/approval-policy.js';

// Models
export type { Model, ModelFactory, ModelFactoryOptions, ModelRequest, ModelResponse, ModelRetry, ProviderMessage } from './protocol/model.js';
export { addCost, addUsage, zeroUsage } from './protocol/usage.js';
export { ReplayModel, type ReplayModelOptions } from './models/replay.js';
export type { CassetteClaims } from './models/cassette-claims.js';
export { RecordingModel } from './models/recording.js';
export { OpenAIModel } from './models/openai.js';
export { AnthropicModel } from './models/anthropic.js';
export { ModelProviders, type ModelProvidersOptions } from './models/model-providers.js';
export { ModelCatalog, ModelRegistry, type ModelEntry, type ModelPrice, type ModelsFile, type PricedModel, type Tier } from './models/model-catalog.js';
export { ModelChooser, type TierModels } from './models/choose-model.js';

// Serving
export { createRequestHandler } from './server/handler.js';
export { serve } from './server/node-listener.js';
