"""What the lifecycle keeps between requests: the conversation a request carries, and a
forked child's fresh tables."""

from __future__ import annotations

import os

import pytest

import tooltap
from tests.telemetry.support import Recorder, attrs
from tooltap import Parsed, ToolCall
from tooltap._telemetry.operation import Operation, get_telemetry
from tooltap.core import parse_request


def exchange(body: dict[str, object], calls: tuple[ToolCall, ...] = (),
             response_id: str | None = None) -> Operation:  # fmt: skip
    """One Responses request read from ``body``; ``calls`` come back as ``response_id``."""
    tel = get_telemetry()
    assert tel is not None
    op = Operation(tel, dialect="openai.responses", request_model="m", server_address="h",
                   server_port=1, stream=False, owner="sdk", request_body=body)  # fmt: skip
    info = op.request("openai.responses")
    assert info is not None
    op.begin_attempt(info, {})
    op.record_parsed(Parsed("openai.responses", calls, response_id=response_id), info)
    op.end()
    return op


def lookup(call_id: str) -> ToolCall:
    return ToolCall("lookup", {"key": "height"}, "openai", call_id, 0, dialect="openai.responses")


def output(call_id: str) -> dict[str, str]:
    return {"type": "function_call_output", "call_id": call_id, "output": "170 cm"}


def test_the_responses_conversation_scopes_and_labels_the_calls(rec: Recorder) -> None:
    exchange({"input": "hi", "conversation": "conv_a"}, (lookup("call_0"),), "resp_a")
    exchange({"input": "hi", "conversation": {"id": "conv_b"}}, (lookup("call_0"),), "resp_b")
    exchange({"conversation": "conv_b", "input": [output("call_0")]})
    (span,) = rec.tools()
    assert attrs(span)["gen_ai.conversation.id"] == "conv_b"
    assert attrs(rec.inference()[2])["gen_ai.conversation.id"] == "conv_b"


def test_a_previous_response_chain_is_one_conversation(rec: Recorder) -> None:
    exchange({"input": "hi"}, (lookup("call_0"),), "resp_1")
    exchange({"input": "hi"}, (lookup("call_0"),), "resp_2")  # another chain, same call id
    exchange({"previous_response_id": "resp_2", "input": [output("call_0")]}, (), "resp_3")
    (answered,) = rec.tools()
    assert rec.inference()[2].links[0].context.span_id == answered.context.span_id
    assert answered.parent is not None
    assert answered.parent.span_id == rec.inference()[1].context.span_id
    exchange({"previous_response_id": "resp_3", "input": "and then?"})
    assert attrs(rec.inference()[3])["gen_ai.conversation.id"] == "resp_2"
    assert "gen_ai.conversation.id" not in attrs(rec.inference()[0])  # never invented


def test_history_before_the_last_model_turn_is_not_read() -> None:
    body = {"input": [output("old"), {"type": "function_call", "call_id": "c1", "name": "f",
                                      "arguments": '{"a": 1}'}, output("c1")]}  # fmt: skip
    (ref,) = parse_request(body, "openai.responses").tool_results
    assert (ref.call_id, ref.name, ref.call_args, ref.position) == ("c1", "f", {"a": 1}, 0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_starts_with_empty_call_memories(rec: Recorder) -> None:
    tel = get_telemetry()
    assert tel is not None
    exchange({"input": "hi"}, (lookup("call_0"),), "resp_1")
    assert len(tel.lifecycle) == 1
    with tel.lifecycle._lock:  # held in the parent while forking: the child must not hang
        pid = os.fork()
        if pid == 0:  # the child: report through the exit code only
            fresh = len(tel.lifecycle) == 0 and len(tel.lifecycle._responses) == 0
            acquired = tel.lifecycle._lock.acquire(timeout=1)
            os._exit(0 if fresh and acquired else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert len(tel.lifecycle) == 1  # the parent keeps its own
    tooltap.flush()
