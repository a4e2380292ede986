"""Every span attribute name the trace adapters read, in one place.

Names come from the installed convention packages where a constant exists:

- OpenInference: `openinference-semantic-conventions` (`SpanAttributes`,
  `DocumentAttributes`, `OpenInferenceSpanKindValues`).
- OpenTelemetry GenAI: `opentelemetry-semantic-conventions`, incubating module
  `opentelemetry.semconv._incubating.attributes.gen_ai_attributes`. In 0.66b2
  these constants are marked "moved to the OpenTelemetry GenAI semantic
  conventions repository" (no Python package of that repository exists yet);
  the names are unchanged and still exported, so they are imported from there.

Names without a constant in either package are defined here and documented in
docs/ingest.md: the `lara.*` attributes an application may set to carry what
the conventions have no name for (retrieval role, surface, action type,
design document), and the OpenTelemetry GenAI evaluation event name.

The convention packages are an optional dependency (extra `ingest`): when one
is missing, the same literal names are used, so reading an export never needs
them (the tests that emit spans do).
"""

from __future__ import annotations

try:  # pragma: no cover - exercised with and without the optional extra
    from openinference.semconv.trace import (
        DocumentAttributes,
        OpenInferenceSpanKindValues,
        SpanAttributes,
    )

    OI_SPAN_KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
    OI_INPUT_VALUE = SpanAttributes.INPUT_VALUE
    OI_SESSION_ID = SpanAttributes.SESSION_ID
    OI_USER_ID = SpanAttributes.USER_ID
    OI_RETRIEVAL_DOCUMENTS = SpanAttributes.RETRIEVAL_DOCUMENTS
    OI_TOOL_NAME = SpanAttributes.TOOL_NAME
    OI_TOOL_PARAMETERS = SpanAttributes.TOOL_PARAMETERS
    OI_DOCUMENT_ID = DocumentAttributes.DOCUMENT_ID
    OI_DOCUMENT_SCORE = DocumentAttributes.DOCUMENT_SCORE
    OI_DOCUMENT_METADATA = DocumentAttributes.DOCUMENT_METADATA
    OI_METADATA = SpanAttributes.METADATA
    OI_KIND_RETRIEVER = OpenInferenceSpanKindValues.RETRIEVER.value
    OI_KIND_TOOL = OpenInferenceSpanKindValues.TOOL.value
    OI_KIND_AGENT = OpenInferenceSpanKindValues.AGENT.value
except ImportError:  # pragma: no cover
    OI_SPAN_KIND = "openinference.span.kind"
    OI_INPUT_VALUE = "input.value"
    OI_SESSION_ID = "session.id"
    OI_USER_ID = "user.id"
    OI_RETRIEVAL_DOCUMENTS = "retrieval.documents"
    OI_TOOL_NAME = "tool.name"
    OI_TOOL_PARAMETERS = "tool.parameters"
    OI_DOCUMENT_ID = "document.id"
    OI_DOCUMENT_SCORE = "document.score"
    OI_DOCUMENT_METADATA = "document.metadata"
    OI_METADATA = "metadata"
    OI_KIND_RETRIEVER = "RETRIEVER"
    OI_KIND_TOOL = "TOOL"
    OI_KIND_AGENT = "AGENT"

try:  # pragma: no cover
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as _gen_ai
    from opentelemetry.semconv._incubating.attributes import user_attributes as _user

    GEN_AI_OPERATION_NAME = _gen_ai.GEN_AI_OPERATION_NAME
    GEN_AI_CONVERSATION_ID = _gen_ai.GEN_AI_CONVERSATION_ID
    GEN_AI_RETRIEVAL_DOCUMENTS = _gen_ai.GEN_AI_RETRIEVAL_DOCUMENTS
    GEN_AI_RETRIEVAL_QUERY_TEXT = _gen_ai.GEN_AI_RETRIEVAL_QUERY_TEXT
    GEN_AI_DATA_SOURCE_ID = _gen_ai.GEN_AI_DATA_SOURCE_ID
    GEN_AI_INPUT_MESSAGES = _gen_ai.GEN_AI_INPUT_MESSAGES
    GEN_AI_TOOL_NAME = _gen_ai.GEN_AI_TOOL_NAME
    GEN_AI_TOOL_CALL_ID = _gen_ai.GEN_AI_TOOL_CALL_ID
    GEN_AI_TOOL_CALL_ARGUMENTS = _gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS
    GEN_AI_EVALUATION_NAME = _gen_ai.GEN_AI_EVALUATION_NAME
    GEN_AI_EVALUATION_SCORE_VALUE = _gen_ai.GEN_AI_EVALUATION_SCORE_VALUE
    GEN_AI_EVALUATION_SCORE_LABEL = _gen_ai.GEN_AI_EVALUATION_SCORE_LABEL
    GEN_AI_OPERATION_RETRIEVAL = _gen_ai.GenAiOperationNameValues.RETRIEVAL.value
    GEN_AI_OPERATION_EXECUTE_TOOL = _gen_ai.GenAiOperationNameValues.EXECUTE_TOOL.value
    GEN_AI_OPERATION_INVOKE_AGENT = _gen_ai.GenAiOperationNameValues.INVOKE_AGENT.value
    USER_ID = _user.USER_ID
except ImportError:  # pragma: no cover
    GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
    GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"
    GEN_AI_RETRIEVAL_DOCUMENTS = "gen_ai.retrieval.documents"
    GEN_AI_RETRIEVAL_QUERY_TEXT = "gen_ai.retrieval.query.text"
    GEN_AI_DATA_SOURCE_ID = "gen_ai.data_source.id"
    GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages"
    GEN_AI_TOOL_NAME = "gen_ai.tool.name"
    GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
    GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
    GEN_AI_EVALUATION_NAME = "gen_ai.evaluation.name"
    GEN_AI_EVALUATION_SCORE_VALUE = "gen_ai.evaluation.score.value"
    GEN_AI_EVALUATION_SCORE_LABEL = "gen_ai.evaluation.score.label"
    GEN_AI_OPERATION_RETRIEVAL = "retrieval"
    GEN_AI_OPERATION_EXECUTE_TOOL = "execute_tool"
    GEN_AI_OPERATION_INVOKE_AGENT = "invoke_agent"
    USER_ID = "user.id"

# --- names no installed convention package defines ------------------------------------

#: Event the GenAI conventions emit for an evaluation result (documented in the
#: conventions' event registry; no Python constant in opentelemetry-semantic-conventions).
GEN_AI_EVALUATION_RESULT_EVENT = "gen_ai.evaluation.result"

#: Why the agent retrieved (a contract `retrieval_role` value), set on the retrieval span.
LARA_RETRIEVAL_ROLE = "lara.retrieval.role"
#: Where the request came from (a contract `surface` value), on any span of the prompt.
LARA_SURFACE = "lara.surface"
#: Test, monitoring or bot traffic (boolean), on any span of the prompt.
LARA_IS_SYNTHETIC = "lara.is_synthetic"
#: The contract `action_type` of an agent tool call (default: the configured map).
LARA_ACTION_TYPE = "lara.action.type"
#: The design document a tool call acted on (the contract's `actions.document_id`).
LARA_DOCUMENT_ID = "lara.document.id"
#: The asset a tool call acted on, when the application states it explicitly.
LARA_ASSET_ID = "lara.asset.id"
#: On a `gen_ai.evaluation.result` event of a retrieval span: the judged document,
#: by id or by 0-based position in `gen_ai.retrieval.documents`.
LARA_EVALUATION_DOCUMENT_ID = "lara.evaluation.document.id"
LARA_EVALUATION_DOCUMENT_POSITION = "lara.evaluation.document.position"
#: On the same event: `human` or `llm` (otherwise the configured judge).
LARA_EVALUATION_JUDGE = "lara.evaluation.judge"
