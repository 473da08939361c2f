"""``tooltap replay``: flight records parsed again by today's core, or served to a real client."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from ._core.flight import FlightRecord, FormatError, Reported, decode
from ._core.replay import replay

__all__ = ["replay_files", "serve_file"]


def replay_files(
    paths: Sequence[str], *, as_json: bool, check: bool, out: TextIO | None = None
) -> int:
    """Replay each record; print a table (or JSON lines). Exit status: 0; 1 when ``check``
    finds a result that differs from the recorded one (or a record that cannot be
    checked); 2 when a file is not a readable record."""
    out = out or sys.stdout
    status = 0
    for path in paths:
        try:
            record = decode(Path(path).read_bytes())
        except (OSError, FormatError) as exc:
            print(f"{path}: {exc}", file=sys.stderr)
            status = 2
            continue
        today = replay(record)
        same = record.reported is not None and not record.cut and today.same_as(record.reported)
        if as_json:
            for line in _json_lines(path, today):
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
        else:
            _table(path, record, today, same, out)
        if check and not same:
            status = max(status, 1)
    return status


def _json_lines(path: str, result: Reported) -> Iterator[dict[str, Any]]:
    """One object per call (with its problems), then one per other call id that has problems
    (a broken call: no name, no arguments; None: the response's own), at least one."""
    shown: set[str | None] = set()
    for call in result.calls:
        shown.add(call.call_id)
        yield _line(path, call.call_id, call.name, call.args, result)
    for call_id in dict.fromkeys(p.call_id for p in result.problems):
        if call_id not in shown:
            shown.add(call_id)
            yield _line(path, call_id, None, None, result)
    if not shown:  # no call, no problem: the response's own line (its error, if any)
        yield _line(path, None, None, None, result)


def _line(path: str, call_id: str | None, name: str | None, args: Any, result: Reported) -> Any:
    problems = [{"kind": p.kind, "call_id": p.call_id} for p in result.problems]
    return {
        "file": path,
        "call_id": call_id,
        "name": name,
        "args": args,
        "problems": [p for p in problems if p["call_id"] == call_id],
        "error": result.error,
    }


def _table(path: str, record: FlightRecord, today: Reported, same: bool, out: TextIO) -> None:
    size = len(record.body)
    out.write(
        f"{path}\n  {record.dialect} {record.method} {record.path} -> {record.status}, "
        f"{record.mode} ({record.framing}), {len(record.chunks)} chunks, {size} bytes, "
        f"ended {record.end}"
        f"{' (cut)' if record.cut else ''}; recorded by tooltap {record.tooltap or '?'} "
        f"at {record.recorded_at or '?'}\n"
    )
    rows = [("call_id", "name", "args")]
    rows += [
        (c.call_id or "-", c.name, json.dumps(c.args, ensure_ascii=False)) for c in today.calls
    ]
    rows += [(p.call_id or "-", f"problem: {p.kind}", "") for p in today.problems]
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    for row in rows:
        out.write(f"  {row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]}".rstrip() + "\n")
    out.write(f"  error: {today.error or '-'}\n")
    if same:
        out.write("  same as recorded\n")
    elif record.reported is None or record.cut:
        out.write("  cannot compare: the record does not hold the whole result\n")
    else:
        was = record.reported
        calls = ", ".join(f"{c.name}({c.call_id})" for c in was.calls) or "-"
        problems = ", ".join(f"{p.kind}({p.call_id or '-'})" for p in was.problems) or "-"
        out.write(
            f"  DIFFERS from recorded: calls {calls}; problems {problems}; "
            f"error {was.error or '-'}\n"
        )


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def serve_file(path: str, *, port: int, timing: bool, out: TextIO | None = None) -> int:
    """Serve one record on 127.0.0.1 until interrupted."""
    out = out or sys.stdout
    from .simulator import RecordServer

    try:
        record = decode(Path(path).read_bytes())
    except (OSError, FormatError) as exc:
        print(f"{path}: {exc}", file=sys.stderr)
        return 2
    with RecordServer(record, port=port, timing=timing) as server:
        out.write(
            f"serving {path} ({record.dialect}, {record.status}) on {server.url}; Ctrl-C stops\n"
        )
        out.flush()
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0
