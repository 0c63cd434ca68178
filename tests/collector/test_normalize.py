"""Convention readers on attribute dicts as the receivers decode them (docs/architecture.md, Conventions and readers).

Each test feeds ``normalize_span`` the attributes one span would carry and checks the Step: its type,
text, tokens, tool fields and documents. Odd values (bad JSON, numbers as strings, missing list
indices, non-object metadata) must never raise and must keep what can be kept.
"""

from __future__ import annotations

import json

import pytest

from collector.normalize import normalize_span
from collector.normalize.docvalues import json_docs
from collector.normalize.messages import unwrap_text
from collector.normalize.values import as_float, as_int, as_str_list


def docs_of(step, stage):
    return [d for d in step.docs if d.stage == stage]


# --------------------------------------------------------------------------------------------------
# OpenInference


def test_openinference_retriever_documents_and_source_ids():
    attrs = {
        "openinference.span.kind": "RETRIEVER",
        "input.value": "refund window?",
        "retrieval.documents.0.document.id": "3f9a-chunk-uuid",
        "retrieval.documents.0.document.content": "Refunds within 30 days.",
        "retrieval.documents.0.document.score": 0.82,
        "retrieval.documents.0.document.metadata": json.dumps({"ref_doc_id": "policy-7", "page": 2}),
        "retrieval.documents.1.document.id": "77b1-chunk-uuid",
        "retrieval.documents.1.document.content": "Shipping is free.",
        "retrieval.documents.1.document.score": "0.5",  # a number sent as a string
        "retrieval.documents.1.document.metadata": json.dumps({"file_name": "shipping.md"}),
        "retrieval.documents.2.document.id": "no-meta",
        "retrieval.documents.2.document.content": "Third.",
    }
    step = normalize_span(attrs)
    assert (step.step_type, step.convention, step.query_text) == (
        "retrieval",
        "openinference",
        "refund window?",
    )
    c = docs_of(step, "candidate")
    assert [d.position for d in c] == [0, 1, 2]
    assert [d.chunk_id for d in c] == ["3f9a-chunk-uuid", "77b1-chunk-uuid", "no-meta"]
    # the source document id comes from metadata when the id is a chunk id; else the id itself
    assert [d.doc_id for d in c] == ["policy-7", "shipping.md", "no-meta"]
    assert [d.score for d in c] == [0.82, 0.5, None]
    assert c[0].metadata == {"ref_doc_id": "policy-7", "page": 2}
    assert c[0].content == "Refunds within 30 days."


def test_openinference_source_key_order_and_custom_keys():
    attrs = {
        "openinference.span.kind": "RETRIEVER",
        "retrieval.documents.0.document.id": "chunk-1",
        "retrieval.documents.0.document.metadata": json.dumps({"file_name": "a.md", "doc_id": "A"}),
    }
    assert normalize_span(attrs).docs[0].doc_id == "A"  # doc_id is listed before file_name
    custom = normalize_span(attrs, source_keys=("file_name",))
    assert custom.docs[0].doc_id == "a.md"


def test_openinference_bad_metadata_missing_indices_and_odd_values():
    attrs = {
        "openinference.span.kind": "retriever",  # case does not matter
        "retrieval.documents.0.document.content": "zero",
        "retrieval.documents.0.document.metadata": "{not json",
        "retrieval.documents.2.document.content": "two",  # index 1 is missing
        "retrieval.documents.2.document.metadata": json.dumps(["a", "list"]),
        "retrieval.documents.2.document.score": "high",  # not a number
        "retrieval.documents.2.document.id": 12345,  # a number as id
        "retrieval.documents.x.document.content": "not an index",
    }
    step = normalize_span(attrs)
    c = docs_of(step, "candidate")
    assert [d.position for d in c] == [0, 2]  # the rank the span gave, gaps kept
    assert c[0].metadata == {"value": "{not json"}  # kept as text, not lost, not raised
    assert c[0].doc_id is None and c[0].chunk_id is None
    assert c[1].metadata == {"value": ["a", "list"]}
    assert c[1].score is None
    assert (c[1].chunk_id, c[1].doc_id) == ("12345", "12345")


def test_openinference_reranker_input_and_output():
    attrs = {
        "openinference.span.kind": "RERANKER",
        "reranker.query": "q",
        "reranker.top_k": "2",
        "reranker.model_name": "cross-encoder",
        "reranker.input_documents.0.document.id": "a",
        "reranker.input_documents.0.document.content": "A text",
        "reranker.input_documents.1.document.id": "b",
        "reranker.input_documents.1.document.content": "B text",
        "reranker.output_documents.0.document.id": "b",
        "reranker.output_documents.0.document.content": "B text",
        "reranker.output_documents.0.document.score": 0.9,
    }
    step = normalize_span(attrs)
    assert (step.step_type, step.query_text, step.top_k, step.model) == ("rerank", "q", 2, "cross-encoder")
    assert [d.chunk_id for d in docs_of(step, "rerank_input")] == ["a", "b"]
    out = docs_of(step, "reranked")
    assert [(d.chunk_id, d.score, d.position) for d in out] == [("b", 0.9, 0)]


def test_openinference_llm_messages_tokens_and_output():
    attrs = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-x",
        "llm.token_count.prompt": 120,
        "llm.token_count.completion": "30",
        "llm.token_count.total": 150.0,
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "Use the context: Refunds within 30 days.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": "How long for refunds?",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "30 days.",
        "input.value": "ignored when messages exist",
        "output.value": "ignored too",
        "session.id": "s-1",
        "user.id": "u-1",
    }
    step = normalize_span(attrs)
    assert step.step_type == "llm" and step.model == "gpt-x"
    assert (step.input_tokens, step.output_tokens, step.total_tokens) == (120, 30, 150)
    assert step.input_text == "Use the context: Refunds within 30 days.\nHow long for refunds?"
    assert step.query_text == "How long for refunds?"
    assert step.output_text == "30 days."
    assert (step.session_id, step.user_id) == ("s-1", "u-1")


def test_openinference_llm_message_contents_parts():
    attrs = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.0.message_content.type": "text",
        "llm.input_messages.0.message.contents.0.message_content.text": "part one",
        "llm.input_messages.0.message.contents.1.message_content.type": "image",
        "llm.input_messages.0.message.contents.1.message_content.image.image.url": "http://x/y.png",
        "llm.input_messages.0.message.contents.2.message_content.text": "part two",
    }
    step = normalize_span(attrs)
    assert step.input_text == "part one\npart two"
    assert step.query_text == "part one\npart two"


def test_openinference_llm_prompts_list_and_flattened():
    as_list = normalize_span({"openinference.span.kind": "LLM", "llm.prompts": ["first prompt", "second"]})
    assert as_list.input_text == "first prompt\nsecond"
    flat = normalize_span(
        {"openinference.span.kind": "LLM", "llm.prompts.0.prompt.text": "flat prompt", "input.value": "raw"}
    )
    assert flat.input_text == "flat prompt"


def test_openinference_llm_prompt_template_rendered_when_no_prompt():
    # LlamaIndex's LLM.predict span: a template and its variables, input.value a repr of an object.
    attrs = {
        "openinference.span.kind": "LLM",
        "input.value": '{"prompt": "SelectorPromptTemplate(metadata={...})"}',
        "llm.prompt_template.template": "Context:\n{context_str}\nQuery: {query_str}\nKeep {braces} as is.",
        "llm.prompt_template.variables": json.dumps(
            {"context_str": "Refunds within 30 days.", "query_str": "How long?"}
        ),
        "output.value": "30 days",
    }
    step = normalize_span(attrs)
    assert step.input_text == "Context:\nRefunds within 30 days.\nQuery: How long?\nKeep {braces} as is."
    assert step.query_text == "How long?"
    assert step.output_text == "30 days"


def test_openinference_tool_arguments_from_input_value():
    attrs = {
        "openinference.span.kind": "TOOL",
        "tool.name": "lookup_order",
        "tool.parameters": json.dumps({"type": "object", "properties": {"order_id": {"type": "string"}}}),
        "input.value": json.dumps({"order_id": "A-17"}),
        "output.value": "shipped",
    }
    step = normalize_span(attrs)
    assert (step.step_type, step.tool_name, step.tool_result) == ("tool", "lookup_order", "shipped")
    assert json.loads(step.tool_arguments) == {"order_id": "A-17"}
    schema_only = normalize_span({k: v for k, v in attrs.items() if k != "input.value"})
    assert "properties" in schema_only.tool_arguments


def test_openinference_retriever_json_query_unwrapped_and_unknown_kind():
    step = normalize_span(
        {
            "openinference.span.kind": "RETRIEVER",
            "input.value": json.dumps({"query_bundle": {"query_str": "q?"}}),
        }
    )
    assert step.query_text == "q?" and step.docs == []
    other = normalize_span({"openinference.span.kind": "SOMETHING_NEW", "input.value": "x"})
    assert other.step_type == "other" and other.convention == "openinference"
    for kind, expected in [
        ("AGENT", "agent"),
        ("CHAIN", "chain"),
        ("EMBEDDING", "embedding"),
        ("GUARDRAIL", "other"),
    ]:
        assert normalize_span({"openinference.span.kind": kind}).step_type == expected


# --------------------------------------------------------------------------------------------------
# OTel GenAI semantic conventions


def test_genai_retrieval_documents_json():
    docs = [
        {"id": "kb-1", "score": 0.91, "content": "Refunds within 30 days."},
        {"id": "kb-2", "score": "0.40"},
        "a bare string document",
        42,  # not a document: skipped
    ]
    attrs = {
        "gen_ai.operation.name": "retrieval",
        "gen_ai.retrieval.query.text": "refund window",
        "gen_ai.request.top_k": 4,
        "gen_ai.retrieval.documents": json.dumps(docs),
    }
    step = normalize_span(attrs)
    assert (step.step_type, step.convention, step.query_text, step.top_k) == (
        "retrieval",
        "genai",
        "refund window",
        4,
    )
    c = docs_of(step, "candidate")
    assert [(d.position, d.doc_id, d.score) for d in c] == [
        (0, "kb-1", 0.91),
        (1, "kb-2", 0.4),
        (2, None, None),
    ]
    assert c[0].content == "Refunds within 30 days." and c[1].content is None
    assert c[2].content == "a bare string document"


def test_genai_retrieval_documents_structured_and_bad_json():
    structured = normalize_span(
        {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": [{"id": "d", "score": 1}]}
    )
    assert [(d.doc_id, d.score) for d in structured.docs] == [("d", 1.0)]
    bad = normalize_span({"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": "[{oops"})
    assert bad.step_type == "retrieval" and bad.docs == []


def test_genai_chat_parts_system_instructions_and_usage():
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-req",
        "gen_ai.response.model": "gpt-resp",
        "gen_ai.usage.input_tokens": 200,
        "gen_ai.usage.output_tokens": "12",
        "gen_ai.system_instructions": json.dumps(
            [{"type": "text", "content": "Answer from: Refunds within 30 days."}]
        ),
        "gen_ai.input.messages": json.dumps(
            [
                {"role": "user", "parts": [{"type": "text", "content": "first question"}]},
                {
                    "role": "assistant",
                    "parts": [{"type": "tool_call", "id": "c1", "name": "kb", "arguments": {"q": "x"}}],
                },
                {
                    "role": "tool",
                    "parts": [{"type": "tool_call_response", "id": "c1", "response": "tool said 30 days"}],
                },
                {"role": "user", "parts": [{"type": "text", "content": "How long?"}]},
            ]
        ),
        "gen_ai.output.messages": json.dumps(
            [
                {
                    "role": "assistant",
                    "parts": [{"type": "text", "content": "30 days."}],
                    "finish_reason": "stop",
                }
            ]
        ),
        "gen_ai.conversation.id": "conv-9",
        "enduser.id": "alice",
    }
    step = normalize_span(attrs)
    assert (step.step_type, step.model) == ("llm", "gpt-resp")
    assert (step.input_tokens, step.output_tokens, step.total_tokens) == (200, 12, 212)
    assert step.input_text.startswith("Answer from: Refunds within 30 days.\nfirst question")
    assert "tool said 30 days" in step.input_text  # what a tool returned is part of the prompt
    assert step.query_text == "How long?"
    assert step.output_text == "30 days."
    assert (step.session_id, step.user_id) == ("conv-9", "alice")


def test_genai_older_flattened_prompts_and_usage():
    attrs = {
        "gen_ai.system": "openai",
        "gen_ai.operation.name": "chat",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "old style question",
        "gen_ai.completion.0.content": "old style answer",
        "gen_ai.usage.prompt_tokens": "7",
        "gen_ai.usage.completion_tokens": 3,
    }
    step = normalize_span(attrs)
    assert (step.input_text, step.query_text, step.output_text) == (
        "old style question",
        "old style question",
        "old style answer",
    )
    assert (step.input_tokens, step.output_tokens, step.total_tokens) == (7, 3, 10)


def test_genai_bad_messages_json_kept_as_text():
    step = normalize_span({"gen_ai.operation.name": "chat", "gen_ai.input.messages": "not json at all"})
    assert step.input_text == "not json at all" and step.query_text is None


def test_genai_execute_tool_and_invoke_agent():
    tool = normalize_span(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.id": "call-1",
            "gen_ai.tool.call.arguments": json.dumps({"city": "Paris"}),
            "gen_ai.tool.call.result": json.dumps({"temp_c": 21}),
        }
    )
    assert (tool.step_type, tool.tool_name) == ("tool", "get_weather")
    assert json.loads(tool.tool_arguments) == {"city": "Paris"}
    assert json.loads(tool.tool_result) == {"temp_c": 21}
    agent = normalize_span(
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "helper",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "hello"}]}]
            ),
        }
    )
    assert (agent.step_type, agent.query_text, agent.output_text) == ("agent", "hi", "hello")
    for op, expected in [
        ("embeddings", "embedding"),
        ("create_agent", "agent"),
        ("text_completion", "llm"),
        ("new_op", "other"),
    ]:
        assert normalize_span({"gen_ai.operation.name": op}).step_type == expected


# --------------------------------------------------------------------------------------------------
# OpenLLMetry (traceloop)


def test_traceloop_langchain_retriever_documents_in_entity_output():
    out = {
        "documents": [
            {
                "page_content": "Policy 1: refunds take 7 days",
                "metadata": {"source": "policy-1.md", "version": 2},
            },
            {"page_content": "No metadata here"},
            {"page_content": "Bad metadata", "metadata": "oops"},
        ],
        "count": 3,
    }
    attrs = {
        "traceloop.span.kind": "task",
        "traceloop.entity.name": "KW",
        "gen_ai.operation.name": "vector_db_retrieve",
        "traceloop.entity.input": json.dumps({"query": "refunds?", "tags": [], "metadata": {}}),
        "traceloop.entity.output": json.dumps(out),
    }
    step = normalize_span(attrs)
    assert (step.step_type, step.convention, step.query_text) == ("retrieval", "traceloop", "refunds?")
    c = docs_of(step, "candidate")
    assert [d.content for d in c] == ["Policy 1: refunds take 7 days", "No metadata here", "Bad metadata"]
    assert [d.doc_id for d in c] == ["policy-1.md", None, None]
    assert [d.chunk_id for d in c] == [None, None, None]  # LangChain documents carry no id
    assert c[0].metadata == {"source": "policy-1.md", "version": 2}
    assert c[2].metadata == {"value": "oops"}


def test_traceloop_older_retriever_task_with_lc_serialized_documents():
    doc = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "document", "Document"],
        "kwargs": {"page_content": "Serialized doc", "metadata": {"doc_id": "D-1"}},
    }
    attrs = {
        "traceloop.span.kind": "task",
        "traceloop.entity.name": "VectorStoreRetriever",
        "traceloop.entity.input": json.dumps({"inputs": "what?"}),
        "traceloop.entity.output": json.dumps({"outputs": [doc]}),
    }
    step = normalize_span(attrs)
    assert step.step_type == "retrieval" and step.query_text == "what?"
    assert [(d.doc_id, d.content) for d in step.docs] == [("D-1", "Serialized doc")]


def test_traceloop_chat_span_without_span_kind_and_workflow_root():
    chat = normalize_span(
        {
            "traceloop.workflow.name": "RunnableSequence",
            "gen_ai.provider.name": "langchain",
            "gen_ai.operation.name": "chat",
            "gen_ai.system_instructions": json.dumps(
                [{"type": "text", "content": "ctx: refunds take 7 days"}]
            ),
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "q?"}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "7 days"}]}]
            ),
        }
    )
    assert (chat.step_type, chat.convention) == ("llm", "traceloop")
    assert chat.input_text == "ctx: refunds take 7 days\nq?"
    assert (chat.query_text, chat.output_text) == ("q?", "7 days")
    root = normalize_span(
        {
            "traceloop.span.kind": "workflow",
            "traceloop.entity.name": "RunnableSequence",
            "gen_ai.operation.name": "invoke_agent",  # every workflow gets this, agent or not
            "traceloop.entity.input": json.dumps({"inputs": "q?", "tags": [], "metadata": {}, "kwargs": {}}),
            "traceloop.entity.output": json.dumps({"outputs": "7 days", "kwargs": {"tags": []}}),
        }
    )
    assert (root.step_type, root.query_text, root.input_text, root.output_text) == (
        "chain",
        "q?",
        "q?",
        "7 days",
    )
    agent = normalize_span({"traceloop.span.kind": "agent", "gen_ai.operation.name": "invoke_agent"})
    assert agent.step_type == "agent"


def test_traceloop_task_payload_dict_kept_as_json_and_tool():
    task = normalize_span(
        {
            "traceloop.span.kind": "task",
            "gen_ai.operation.name": "execute_task",
            "traceloop.entity.input": json.dumps({"inputs": {"context": "c", "question": "q"}, "tags": []}),
        }
    )
    assert task.step_type == "chain" and json.loads(task.input_text) == {"context": "c", "question": "q"}
    assert task.query_text == "q"
    tool = normalize_span(
        {
            "traceloop.span.kind": "tool",
            "traceloop.entity.name": "calculator",
            "traceloop.entity.input": json.dumps({"inputs": "2+2"}),
            "traceloop.entity.output": json.dumps({"outputs": "4"}),
        }
    )
    assert (tool.step_type, tool.tool_name, tool.tool_arguments, tool.tool_result) == (
        "tool",
        "calculator",
        "2+2",
        "4",
    )


def test_traceloop_older_llm_request_type():
    step = normalize_span(
        {
            "llm.request.type": "chat",
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": "hello?",
            "gen_ai.completion.0.content": "hi",
            "llm.usage.total_tokens": "9",
            "traceloop.association.properties.session_id": "sess",
        }
    )
    assert (step.step_type, step.convention, step.query_text, step.output_text) == (
        "llm",
        "traceloop",
        "hello?",
        "hi",
    )
    assert step.total_tokens == 9 and step.session_id == "sess"


# --------------------------------------------------------------------------------------------------
# ragfault.* attributes, on top of any convention


@pytest.mark.parametrize(
    "attrs",
    [
        {
            "ragfault.case_id": "case-1",
            "ragfault.run_id": "run-1",
            "ragfault.user_scope": ["hr", "eng"],
            "ragfault.run_group": "cfg-1",
            "ragfault.baseline_of": "run-0",
        },
        {
            "traceloop.association.properties.ragfault.case_id": "case-1",
            "traceloop.association.properties.ragfault.run_id": "run-1",
            "traceloop.association.properties.ragfault.user_scope": "hr,eng",
            "traceloop.association.properties.ragfault.run_group": "cfg-1",
            "traceloop.association.properties.ragfault.baseline_of": "run-0",
        },
        {
            "metadata": json.dumps(
                {
                    "ragfault.case_id": "case-1",
                    "ragfault.run_id": "run-1",
                    "ragfault.user_scope": ["hr", "eng"],
                    "ragfault.run_group": "cfg-1",
                    "ragfault.baseline_of": "run-0",
                }
            )
        },
        {
            "metadata": json.dumps(
                {
                    "ragfault": {
                        "case_id": "case-1",
                        "run_id": "run-1",
                        "user_scope": '["hr", "eng"]',
                        "run_group": "cfg-1",
                        "baseline_of": "run-0",
                    }
                }
            )
        },
        {
            "baggage.ragfault.case_id": "case-1",
            "baggage.ragfault.run_id": "run-1",
            "baggage.ragfault.user_scope": '["hr","eng"]',
            "baggage.ragfault.run_group": "cfg-1",
            "baggage.ragfault.baseline_of": "run-0",
        },
    ],
    ids=["attributes", "traceloop-association", "metadata-dotted", "metadata-nested", "baggage"],
)
def test_ragfault_ids_from_every_carrier(attrs):
    for convention in ({"openinference.span.kind": "CHAIN"}, {"gen_ai.operation.name": "chat"}, {}):
        step = normalize_span({**convention, **attrs})
        assert (step.case_id, step.run_id, step.user_scope) == ("case-1", "run-1", ["hr", "eng"])
        assert (step.run_group, step.baseline_of) == ("cfg-1", "run-0")


def test_ragfault_ids_numbers_and_bad_metadata():
    step = normalize_span({"ragfault.case_id": 17, "ragfault.run_id": "", "metadata": "{bad json"})
    assert step.case_id == "17" and step.run_id is None and step.user_scope is None
    direct_wins = normalize_span({"ragfault.case_id": "a", "metadata": json.dumps({"ragfault.case_id": "b"})})
    assert direct_wins.case_id == "a"
    not_object = normalize_span({"metadata": json.dumps(["ragfault.case_id", "x"])})
    assert not_object.case_id is None


def test_ragfault_explicit_context_flattened_and_json():
    flat = normalize_span(
        {
            "openinference.span.kind": "LLM",
            "ragfault.context.documents.0.document.id": "chunk-a",
            "ragfault.context.documents.0.document.content": "A",
            "ragfault.context.documents.0.document.metadata": json.dumps({"doc_id": "DOC-A"}),
            "ragfault.context.documents.1.document.id": "DOC-B",
            "ragfault.context.documents.1.document.content": "B",
        }
    )
    ctx = docs_of(flat, "context")
    assert [(d.position, d.doc_id, d.chunk_id, d.content) for d in ctx] == [
        (0, "DOC-A", "chunk-a", "A"),
        (1, "DOC-B", "DOC-B", "B"),
    ]
    as_json = normalize_span(
        {
            "gen_ai.operation.name": "chat",
            "ragfault.context.documents": json.dumps([{"id": "X", "content": "x"}]),
        }
    )
    assert [(d.stage, d.doc_id) for d in as_json.docs] == [("context", "X")]
    assert normalize_span({"ragfault.context.documents": "{broken"}).docs == []


@pytest.mark.parametrize(
    "value",
    [["DOC-A", "DOC-B"], json.dumps(["DOC-A", "DOC-B"]), "DOC-A, DOC-B", ("DOC-A", None, "", "DOC-B")],
    ids=["array", "json-string", "comma-string", "with-empties"],
)
def test_ragfault_answer_citations(value):
    assert normalize_span({"ragfault.answer.citations": value}).citations == ["DOC-A", "DOC-B"]


def test_unknown_convention_is_other():
    step = normalize_span({"http.method": "GET"})
    assert (step.step_type, step.convention, step.docs) == ("other", "unknown", [])


# --------------------------------------------------------------------------------------------------
# helpers


def test_number_and_list_helpers():
    assert [as_int(v) for v in (3, "4", " 5 ", "6.0", 7.0, "7.5", True, None, "x")] == [
        3,
        4,
        5,
        6,
        7,
        None,
        None,
        None,
        None,
    ]
    assert [as_float(v) for v in (1, "2.5", "nan", "x", False)] == [1.0, 2.5, None, None, None]
    assert (
        as_str_list("[1, 2]") == ["1", "2"]
        and as_str_list("[broken") == ["[broken"]
        and as_str_list(5) == ["5"]
    )


def test_json_docs_shapes():
    nested = json_docs(
        json.dumps([{"document": {"id": "n", "content": "c"}, "score": 0.3}]), "candidate", ("doc_id",)
    )
    assert [(d.doc_id, d.content, d.score) for d in nested] == [("n", "c", 0.3)]
    assert json_docs(json.dumps({"count": 0}), "candidate", ()) == []
    assert json_docs(None, "candidate", ()) == []


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ('{"query_bundle": {"query_str": "q1", "image_path": null}}', "q1"),
        ('{"inputs": "q2", "tags": [], "metadata": {}, "kwargs": {"name": "R"}}', "q2"),
        ('{"outputs": "a3", "kwargs": {"tags": []}}', "a3"),
        ('{"response": "a4", "source_nodes": ["<NodeWithScore>"]}', "a4"),
        ('"quoted"', "quoted"),
        ('[{"role": "user", "parts": [{"type": "text", "content": "m"}]}]', "m"),
        ("plain text", "plain text"),
        ('{"a": 1, "b": 2}', '{"a": 1, "b": 2}'),
        ("{not json", "{not json"),
    ],
)
def test_unwrap_text(raw, text):
    assert unwrap_text(raw) == text


# --------------------------------------------------------------------------------------------------
# The fast reading of OpenInference document lists equals the general one


def _general_docs(attrs, prefix, stage):
    from collector.normalize.docvalues import DEFAULT_SOURCE_KEYS, make_doc
    from collector.normalize.values import indexed

    return [
        make_doc(stage, i, s.get("document.id"), s.get("document.content"), s.get("document.score"),
                 s.get("document.metadata"), DEFAULT_SOURCE_KEYS)
        for i, s in sorted(indexed(attrs, prefix).items())
    ]  # fmt: skip


_VALUES = [
    None, "", "c-1", "kb-7#c2", 3, 2.5, float("nan"), True, b"x", ["a"], {"k": 1},
    '{"doc_id": "kb-1"}', '{"source": ""}', '{"file_name": 7}', "{}", "null", '"s"', "[1]", "{bad", "0.5",
]  # fmt: skip


def _doc_attrs(seed: int) -> dict:
    import random

    rng = random.Random(seed)
    attrs: dict = {"openinference.span.kind": "RETRIEVER"}
    indices = list(range(rng.randrange(0, 6)))
    if rng.random() < 0.2 and indices:
        indices = [i + rng.randrange(0, 3) for i in indices]  # gaps or a list not starting at 0
    for i in indices:
        for field in ("id", "content", "score", "metadata"):
            if rng.random() < 0.8:
                attrs[f"retrieval.documents.{i}.document.{field}"] = rng.choice(_VALUES)
        if rng.random() < 0.05:
            attrs[f"retrieval.documents.{i}.document.metadata.extra"] = (
                "x"  # a key the fast path does not read
            )
    return attrs


@pytest.mark.parametrize("seed", range(300))
def test_fast_document_reading_matches_the_general_reading(seed):
    from collector.normalize.docvalues import DEFAULT_SOURCE_KEYS, openinference_docs
    from collector.normalize.values import key_blob

    attrs = _doc_attrs(seed)
    want = _general_docs(attrs, "retrieval.documents.", "candidate")
    for keys in (None, key_blob(attrs)):
        got = openinference_docs(attrs, "retrieval.documents.", "candidate", DEFAULT_SOURCE_KEYS, keys)
        assert repr(got) == repr(want)  # repr: NaN scores compare equal as text
