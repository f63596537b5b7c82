"""`python -m linkhound.parse_worker`: parse pages sent on stdin, write their links to stdout, until EOF."""

from __future__ import annotations

import pickle
import signal
import sys
from typing import Any

from .parsed_page import HEADER, flatten, parse_page, result_frame


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the parent's to handle; EOF ends this process
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer

    def read() -> Any:
        head = stdin.read(HEADER.size)
        if len(head) < HEADER.size:
            raise EOFError
        return pickle.loads(stdin.read(HEADER.unpack(head)[0]))

    try:
        rules, include_code = read()
        while True:
            request_id, body, url, content_type = read()
            try:
                result = flatten(parse_page(rules, body, url, content_type, include_code))
            except Exception:  # a page that breaks a parser has no links; the run goes on
                result = None
            stdout.write(result_frame(request_id, result))
            stdout.flush()
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        pass


if __name__ == "__main__":
    main()
