"""The dialect table: every wire dialect tooltap understands, each entry complete.

A dialect's pieces live in its modules here: ``<dialect>.py`` reads responses (the
stream reducer, the whole-body parser), ``<dialect>_request.py`` the rest (request
reader, result messages, tool declarations, content mapping, provider facts). Every
other module looks a dialect up in ``TABLE``; adding one is its modules plus one entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from . import (
    anthropic,
    anthropic_request,
    bedrock_converse,
    bedrock_converse_request,
    cohere_chat,
    cohere_chat_request,
    google,
    google_request,
    ollama_chat,
    ollama_chat_request,
    openai_chat,
    openai_chat_request,
    openai_responses,
    openai_responses_request,
)
from ._base import Dialect, always, unchanged
from ._content import Message, Part
from ._openai import PROVIDER as OPENAI
from ._openai_request import TOOL_NAME_RULE as OPENAI_TOOL_NAME_RULE
from ._openai_request import openai_provider

__all__ = [
    "DIALECTS",
    "TABLE",
    "Dialect",
    "Message",
    "Part",
    "dialect",
    "provider_of",
    "valid_tool_name",
]

_ENTRIES: Final = (
    Dialect(
        name=openai_chat.DIALECT,
        provider=OPENAI,
        path_suffixes=("/chat/completions",),
        claims_path=always,
        body_keys=((b'"messages"',),),
        body_streams=True,
        read_request=openai_chat_request.read_request,
        from_path=unchanged,
        reducer=openai_chat.Reducer,
        parse_body=openai_chat.parse_body,
        result_message=openai_chat_request.result_message,
        result_messages=openai_chat_request.result_messages,
        declarations=openai_chat_request.declarations,
        input_messages=openai_chat_request.input_messages,
        output_text=openai_chat_request.output_text,
        streamed_body=openai_chat_request.streamed_body,
        tool_definitions=openai_chat_request.tool_definitions,
        request_params=openai_chat_request.REQUEST_PARAMS,
        provider_name=openai_provider,
        operation_name="chat",
        tool_name_rule=OPENAI_TOOL_NAME_RULE,
    ),
    Dialect(
        name=openai_responses.DIALECT,
        provider=OPENAI,
        path_suffixes=("/responses",),
        claims_path=always,
        body_keys=((b'"model"', b'"input"'),),
        body_streams=True,
        read_request=openai_responses_request.read_request,
        from_path=unchanged,
        reducer=openai_responses.Reducer,
        parse_body=openai_responses.parse_body,
        result_message=openai_responses_request.result_message,
        result_messages=openai_responses_request.result_messages,
        declarations=openai_responses_request.declarations,
        input_messages=openai_responses_request.input_messages,
        output_text=openai_responses_request.output_text,
        streamed_body=openai_responses_request.streamed_body,
        tool_definitions=openai_responses_request.tool_definitions,
        request_params=openai_responses_request.REQUEST_PARAMS,
        provider_name=openai_provider,
        operation_name="chat",
        tool_name_rule=OPENAI_TOOL_NAME_RULE,
    ),
    Dialect(
        name=anthropic.DIALECT,
        provider=anthropic.PROVIDER,
        # Claude on Bedrock and on Vertex AI too (the path names the model)
        path_suffixes=(
            "/messages",
            "/invoke",
            "/invoke-with-response-stream",
            ":rawPredict",
            ":streamRawPredict",
        ),
        claims_path=anthropic_request.claims_path,
        body_keys=((b'"messages"',), (b'"model"', b'"max_tokens"')),
        body_streams=True,
        read_request=anthropic_request.read_request,
        from_path=anthropic_request.from_path,
        reducer=anthropic.Reducer,
        parse_body=anthropic.parse_body,
        result_message=anthropic_request.result_message,
        result_messages=anthropic_request.result_messages,
        declarations=anthropic_request.declarations,
        input_messages=anthropic_request.input_messages,
        output_text=anthropic_request.output_text,
        streamed_body=anthropic_request.streamed_body,
        tool_definitions=anthropic_request.tool_definitions,
        request_params=anthropic_request.REQUEST_PARAMS,
        provider_name=anthropic_request.provider_name,
        operation_name="chat",
        tool_name_rule=anthropic_request.TOOL_NAME_RULE,
    ),
    Dialect(
        name=google.DIALECT,
        provider=google.PROVIDER,
        path_suffixes=(":generateContent", ":streamGenerateContent"),
        claims_path=always,
        # The model is in the path, so a body need not name it.
        body_keys=((b'"contents"',),),
        body_streams=False,
        read_request=google_request.read_request,
        from_path=google_request.from_path,
        reducer=google.Reducer,
        parse_body=google.parse_body,
        result_message=google_request.result_message,
        result_messages=google_request.result_messages,
        declarations=google_request.declarations,
        input_messages=google_request.input_messages,
        output_text=google_request.output_text,
        streamed_body=google_request.streamed_body,
        tool_definitions=google_request.tool_definitions,
        request_params=google_request.REQUEST_PARAMS,
        provider_name=google_request.provider_name,
        operation_name="generate_content",
        tool_name_rule=google_request.TOOL_NAME_RULE,
    ),
    Dialect(
        name=bedrock_converse.DIALECT,
        provider=bedrock_converse.PROVIDER,
        path_suffixes=("/converse", "/converse-stream"),
        claims_path=bedrock_converse_request.claims_path,
        # The model is in the path; the body has no other key every request holds.
        body_keys=((b'"messages"',),),
        body_streams=False,
        read_request=bedrock_converse_request.read_request,
        from_path=bedrock_converse_request.from_path,
        reducer=bedrock_converse.Reducer,
        parse_body=bedrock_converse.parse_body,
        result_message=bedrock_converse_request.result_message,
        result_messages=bedrock_converse_request.result_messages,
        declarations=bedrock_converse_request.declarations,
        input_messages=bedrock_converse_request.input_messages,
        output_text=bedrock_converse_request.output_text,
        streamed_body=bedrock_converse_request.streamed_body,
        tool_definitions=bedrock_converse_request.tool_definitions,
        request_params=bedrock_converse_request.REQUEST_PARAMS,
        provider_name=bedrock_converse_request.provider_name,
        operation_name="chat",
        tool_name_rule=bedrock_converse_request.TOOL_NAME_RULE,
    ),
    Dialect(
        name=ollama_chat.DIALECT,
        provider=ollama_chat.PROVIDER,
        path_suffixes=("/api/chat",),
        claims_path=always,
        body_keys=((b'"messages"',), (b'"model"',)),
        body_streams=True,
        read_request=ollama_chat_request.read_request,
        from_path=unchanged,
        reducer=ollama_chat.Reducer,
        parse_body=ollama_chat.parse_body,
        result_message=ollama_chat_request.result_message,
        result_messages=ollama_chat_request.result_messages,
        declarations=ollama_chat_request.declarations,
        input_messages=ollama_chat_request.input_messages,
        output_text=ollama_chat_request.output_text,
        streamed_body=ollama_chat_request.streamed_body,
        tool_definitions=ollama_chat_request.tool_definitions,
        request_params=ollama_chat_request.REQUEST_PARAMS,
        provider_name=ollama_chat_request.provider_name,
        operation_name="chat",
        tool_name_rule=ollama_chat_request.TOOL_NAME_RULE,
    ),
    Dialect(
        name=cohere_chat.DIALECT,
        provider=cohere_chat.PROVIDER,
        path_suffixes=("/v2/chat",),
        claims_path=always,
        body_keys=((b'"messages"',), (b'"model"',)),
        body_streams=True,
        read_request=cohere_chat_request.read_request,
        from_path=unchanged,
        reducer=cohere_chat.Reducer,
        parse_body=cohere_chat.parse_body,
        result_message=cohere_chat_request.result_message,
        result_messages=cohere_chat_request.result_messages,
        declarations=cohere_chat_request.declarations,
        input_messages=cohere_chat_request.input_messages,
        output_text=cohere_chat_request.output_text,
        streamed_body=cohere_chat_request.streamed_body,
        tool_definitions=cohere_chat_request.tool_definitions,
        request_params=cohere_chat_request.REQUEST_PARAMS,
        provider_name=cohere_chat_request.provider_name,
        operation_name="chat",
        tool_name_rule=cohere_chat_request.TOOL_NAME_RULE,
    ),
)

#: Every dialect by name, in a stable order.
TABLE: Final[Mapping[str, Dialect]] = MappingProxyType({d.name: d for d in _ENTRIES})
#: The names of the dialects, in the table's order.
DIALECTS: Final = tuple(TABLE)


def dialect(name: str) -> Dialect:
    """The table entry of ``name``; ValueError for an unknown name."""
    try:
        return TABLE[name]
    except KeyError:
        raise ValueError(f"unknown dialect {name!r}; expected one of {DIALECTS}") from None


def provider_of(dialect: str) -> str:
    """The provider family of ``dialect`` (``ToolCall.provider``); "" if unknown."""
    entry = TABLE.get(dialect)
    return "" if entry is None else entry.provider


def valid_tool_name(name: str, dialect: str) -> bool:
    """Whether ``name`` satisfies the tool-name rule of ``dialect`` (True if unknown)."""
    entry = TABLE.get(dialect)
    return entry is None or entry.tool_name_rule.fullmatch(name) is not None
