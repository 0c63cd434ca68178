"""OpenLLMetry (Traceloop) attributes -> Step.

``traceloop.span.kind`` (workflow, task, agent, tool) and ``traceloop.entity.{name,input,output}``;
model calls carry GenAI attributes (``gen_ai.prompt.{i}.content`` in older releases,
``gen_ai.input.messages`` / ``gen_ai.system_instructions`` / ``gen_ai.output.messages`` in newer).
Newer releases also set ``gen_ai.operation.name``: ``vector_db_retrieve`` for a LangChain retriever
(whose documents sit only in ``traceloop.entity.output`` as ``{"documents": [{page_content,
metadata}], "count": n}``), ``execute_task`` for a task, ``execute_tool`` for a tool, ``chat`` for a
model call (that span has no ``traceloop.span.kind``), and ``invoke_agent`` for *every* workflow
span, a plain LCEL chain included — so a ``workflow`` kind is read as a chain, not an agent.

The SDK's decorators (``@workflow``, ``@task``, ``@agent``, ``@tool``) write a call's arguments as
``{"args": [...], "kwargs": {...}}`` and its return value as JSON (dataclasses and pydantic models as
objects). A task or tool returning a list of documents (objects with a text) retrieved them: a task
is a retrieval, a tool keeps its type and the documents are its candidates; a task given documents
and returning documents (a reranker, a prompt budget) is a rerank. ``Traceloop.set_association_
properties`` adds ``traceloop.association.properties.*`` to every span below.
"""

from __future__ import annotations

from typing import Any

from collector.normalize import genai
from collector.normalize.docvalues import json_docs, make_doc, tool_docs
from collector.normalize.messages import message_text, unwrap_text
from collector.normalize.step import Doc, Reader, Stage, Step, StepType
from collector.normalize.values import as_str, parse_json

KIND_TO_STEP: dict[str, StepType] = {"workflow": "chain", "task": "chain", "agent": "agent", "tool": "tool"}
REQUEST_TYPE_TO_STEP: dict[str, StepType] = {
    "chat": "llm",
    "completion": "llm",
    "embedding": "embedding",
    "rerank": "rerank",
}
_PROPS = "traceloop.association.properties."
# attributes holding a model call's content (GenAI semconv, and the flattened form of older releases)
_GENAI_CONTENT = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.prompt.0.content")


def node_docs(value: Any, source_keys: tuple[str, ...], stage: Stage = "candidate") -> list[Doc]:
    """Candidates from a JSON list of LlamaIndex ``NodeWithScore`` (objects or JSON strings of them):
    ``{"node": {"id_", "text", "metadata"}, "score"}``."""
    items = parse_json(value)
    if not isinstance(items, list):
        return []
    docs: list[Doc] = []
    for item in items:
        parsed = parse_json(item) if isinstance(item, str) else item
        if not isinstance(parsed, dict) or not isinstance(parsed.get("node"), dict):
            return []
        node = parsed["node"]
        docs.append(
            make_doc(
                stage,
                len(docs),
                node.get("id_", node.get("id")),
                node.get("text"),
                parsed.get("score"),
                node.get("metadata"),
                source_keys,
            )
        )
    return docs


_QUERY_KEYS = ("query", "input", "question", "query_str", "user_input", "q", "text", "prompt")


def call_args(value: Any) -> tuple[list[Any], dict[str, Any]] | None:
    """(args, kwargs) of a decorated call's input ``{"args": [...], "kwargs": {...}}``, else None."""
    parsed = parse_json(value)
    if isinstance(parsed, dict) and len(parsed) == 2:
        args, kwargs = parsed.get("args"), parsed.get("kwargs")
        if isinstance(args, list) and isinstance(kwargs, dict):
            return args, kwargs
    return None


def _call_query(args: list[Any], kwargs: dict[str, Any]) -> str | None:
    """The query of a decorated call: a query-named keyword argument, else its one text argument.

    A method's ``self`` arrives as its class name (the SDK's JSON encoder names objects it cannot
    serialize), so when several string arguments remain, bare identifiers are left out.
    """
    for key in _QUERY_KEYS:
        v = kwargs.get(key)
        if isinstance(v, str) and v:
            return v
    texts = [a for a in args if isinstance(a, str) and a]
    if len(texts) > 1:
        texts = [t for t in texts if not t.isidentifier()]
    if len(texts) == 1:
        return texts[0]
    if texts:
        return None
    # a pipeline's inputs by component ({"retriever": {"query": q}, "prompt_builder": {"question": q}}
    # as OpenLLMetry's Haystack instrumentation writes Pipeline.run): one text asked of them all
    asked = {
        v
        for inner in kwargs.values()
        if isinstance(inner, dict)
        for key in _QUERY_KEYS
        if isinstance(v := inner.get(key), str) and v
    }
    return asked.pop() if len(asked) == 1 else None


def _query_of(entity_input: Any) -> str | None:
    call = call_args(entity_input)
    if call is not None:
        return _call_query(*call)
    parsed = parse_json(entity_input)
    if isinstance(parsed, dict):
        inputs = parsed.get("inputs", parsed)
        if isinstance(inputs, dict):
            for key in ("query", "input", "question", "query_str", "user_input"):
                if isinstance(inputs.get(key), str):
                    return str(inputs[key])
        if isinstance(inputs, str):
            return inputs
        return None
    if isinstance(parsed, str):
        return parsed
    return as_str(entity_input)


def _given_docs(call: tuple[list[Any], dict[str, Any]], source_keys: tuple[str, ...]) -> list[Doc]:
    """The documents a decorated call was given (the first argument that is a list of documents)."""
    args, kwargs = call
    for value in [*args, *kwargs.values()]:
        if isinstance(value, (list, dict)):
            docs = tool_docs(value, source_keys, "rerank_input")
            if docs:
                return docs
    return []


def _structured(value: Any) -> Any:
    """The parsed value of a JSON object or array (a string, or structured already), else None."""
    if isinstance(value, (dict, list)):
        return value
    if not isinstance(value, str):
        return None
    head = value[:1]
    if head.isspace():
        head = value.lstrip()[:1]
    if head != "{" and head != "[":
        return None
    parsed = parse_json(value)
    return parsed if isinstance(parsed, (dict, list)) else None


def _step_type(kind: str, op: str, request_type: str) -> StepType | None:
    if kind == "workflow" and op in ("", "invoke_agent", "workflow"):
        return "chain"
    if kind == "agent":
        return "agent"
    if op in genai.OPERATION_TO_STEP:
        return genai.OPERATION_TO_STEP[op]
    if request_type in REQUEST_TYPE_TO_STEP:
        return REQUEST_TYPE_TO_STEP[request_type]
    return KIND_TO_STEP.get(kind)


def _task_docs(
    step: Step, kind: str, parsed_in: Any, parsed_out: Any, entity_out: str, source_keys: tuple[str, ...]
) -> list[Doc] | None:
    """The documents of a task (a chain so far) whose output lists documents, and its step type set
    to retrieval, or rerank when it was given documents too; None when its output lists none.
    ``parsed_in`` / ``parsed_out``: the entity input and output parsed (None when not JSON)."""
    call = call_args(parsed_in) if kind == "task" and parsed_in is not None else None
    if call is not None and parsed_out is not None:
        # A decorated task returning documents: given documents too, it reranked or cut them.
        docs = tool_docs(parsed_out, source_keys)
        given = _given_docs(call, source_keys) if docs else []
        if given:
            step.step_type = "rerank"
            for d in docs:
                d.stage = "reranked"
            return given + docs
        if docs:
            step.step_type = "retrieval"
            return docs
    if "NodeWithScore" in entity_out:
        # LlamaIndex's retrievers are tasks whose output is a list of NodeWithScore JSON strings.
        docs = node_docs(parsed_out, source_keys)
        if not docs:
            return None
        given_nodes = parsed_in.get("nodes") if isinstance(parsed_in, dict) else None
        step.step_type = "retrieval"
        if isinstance(given_nodes, list):
            # a node postprocessor (nodes in, nodes out): LlamaIndex's rerankers and cut-offs
            step.step_type = "rerank"
            for d in docs:
                d.stage = "reranked"
            return node_docs(given_nodes, source_keys, "rerank_input") + docs
        if (
            isinstance(parsed_in, dict)
            and "query_bundle" in parsed_in
            and "str_or_query_bundle" not in parsed_in
        ):
            # LlamaIndex's BaseRetriever.retrieve(str_or_query_bundle) wraps the retriever's own
            # _retrieve(query_bundle), and both spans carry the same nodes: the outer one is the
            # retrieval, the inner one is read without them (as OpenInference reports it), so the
            # candidates are counted once. Its nodes stay in the span's raw attributes, and the
            # structural layer is told not to read them again.
            step.provenance = {"docs": "traceloop:nodes counted on the enclosing retrieval"}
            return []
        return docs
    return None


def detect(attrs: dict[str, Any]) -> bool:
    if "traceloop.span.kind" in attrs or "traceloop.entity.name" in attrs or "llm.request.type" in attrs:
        return True
    # OpenLLMetry's LangChain model-call span has no span kind, only traceloop.workflow.name & co.
    return any(k.startswith("traceloop.") for k in attrs)


def read(attrs: dict[str, Any], step: Step, source_keys: tuple[str, ...]) -> None:
    step.convention = "traceloop"
    kind = str(attrs.get("traceloop.span.kind", "")).lower()
    op = str(attrs.get("gen_ai.operation.name", "")).lower()
    request_type = str(attrs.get("llm.request.type", "")).lower()
    step.step_type = _step_type(kind, op, request_type) or step.step_type
    step.session_id = (
        as_str(attrs.get(_PROPS + "session_id"))
        or as_str(attrs.get("gen_ai.conversation.id"))
        or step.session_id
    )
    step.user_id = as_str(attrs.get(_PROPS + "user_id")) or as_str(attrs.get("enduser.id")) or step.user_id

    entity_in = attrs.get("traceloop.entity.input")
    entity_out = attrs.get("traceloop.entity.output")
    step.input_text = as_str(entity_in)
    step.output_text = as_str(entity_out)
    parsed_in = _structured(entity_in)  # each parsed once, for every reading below
    parsed_out = _structured(entity_out) if step.step_type in ("chain", "tool", "agent") else None
    call_in = entity_in if parsed_in is None else parsed_in
    docs: list[Doc] | None = None
    if step.step_type == "chain" and isinstance(entity_out, str):
        docs = _task_docs(step, kind, parsed_in, parsed_out, entity_out, source_keys)
    if step.step_type == "chain" and any(k in attrs for k in _GENAI_CONTENT):
        # A model call made inside a task (LlamaIndex's LLM.chat / LLM.predict) carries GenAI
        # messages but no llm.request.type: it is an LLM step.
        step.step_type = "llm"
    if step.step_type == "retrieval":
        step.query_text = _query_of(call_in) or unwrap_text(as_str(entity_in))
        if docs is None:
            docs = json_docs(entity_out if parsed_out is None else parsed_out, "candidate", source_keys)
        step.docs = docs
    elif step.step_type == "rerank":
        step.docs = docs or []
    elif step.step_type == "llm":
        genai.read_llm_io(attrs, step)
        if _haystack_result_keys(attrs):
            step.output_text = None
    elif step.step_type == "tool":
        step.tool_name = as_str(attrs.get("gen_ai.tool.name")) or as_str(attrs.get("traceloop.entity.name"))
        step.tool_arguments = as_str(attrs.get("gen_ai.tool.call.arguments")) or unwrap_text(
            as_str(entity_in)
        )
        result = as_str(attrs.get("gen_ai.tool.call.result"))
        if result is None and entity_out is not None:
            # a list of documents stays the JSON it is (its texts are not the result's one text)
            result = as_str(entity_out)
            if parsed_out is None or not tool_docs(parsed_out, source_keys):
                result = unwrap_text(result)
        step.tool_result = result
    elif step.step_type in ("chain", "agent"):
        step.query_text = _query_of(call_in)
        step.input_text = _payload(entity_in, parsed_in, "inputs")
        step.output_text = _generator_reply(entity_out, parsed_out) or _payload(
            entity_out, parsed_out, "outputs"
        )


# the keys of the dict a Haystack generator's run() returns
_HAYSTACK_RESULT_KEYS = frozenset(("replies", "meta"))


def _haystack_result_keys(attrs: dict[str, Any]) -> bool:
    """Whether a model call's completions are only the keys of a Haystack generator's result.

    OpenLLMetry's Haystack instrumentation (0.62.4) enumerates the ``{"replies": [...], "meta": ...}``
    its generator returns, so its ``haystack.openai.chat`` span says the model answered "replies":
    that is no output. Such a span never names the model that responded (a real answer would).
    """
    if attrs.get("gen_ai.completion.0.content") not in _HAYSTACK_RESULT_KEYS:
        return False
    if "gen_ai.response.model" in attrs or "gen_ai.output.messages" in attrs:
        return False
    contents = {v for k, v in attrs.items() if k.startswith("gen_ai.completion.") and k.endswith(".content")}
    return contents <= _HAYSTACK_RESULT_KEYS


def _generator_reply(value: Any, parsed: Any) -> str | None:
    """The reply text in a Haystack pipeline's result (``{"<component>": {"replies": [...]}}``, as
    OpenLLMetry writes ``Pipeline.run``'s return value): a generator's first reply, a string or a
    ``ChatMessage`` as a dataclass (``{"_role", "_content": [{"text": ...}]}``); None unless exactly
    one component replied."""
    if not isinstance(value, str) or '"replies"' not in value or not isinstance(parsed, dict):
        return None
    replies = [
        out["replies"][0]
        for out in parsed.values()
        if isinstance(out, dict) and isinstance(out.get("replies"), list) and out["replies"]
    ]
    if len(replies) != 1:
        return None
    reply = replies[0]
    if isinstance(reply, str):
        return reply or None
    if isinstance(reply, dict):
        return message_text(reply.get("_content", reply.get("content", reply.get("text"))))
    return None


def _payload(value: Any, parsed: Any, key: str) -> str | None:
    """``{"inputs": X, "tags": ..., "kwargs": ...}`` -> X (text as is, anything else as JSON);
    ``parsed``: the value parsed."""
    if isinstance(parsed, dict) and key in parsed:
        inner = parsed[key]
        return inner if isinstance(inner, str) else as_str(inner)
    return as_str(value)


READER = Reader("traceloop", detect, read, ("traceloop.", "gen_ai.", "llm."))
