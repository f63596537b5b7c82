"""The in-memory crawl state against the backend contract."""

from __future__ import annotations

import pytest

from linkhound.memory_state import MemoryState
from state_contract import Make, StateContract


class TestMemoryState(StateContract):
    @pytest.fixture
    def make(self) -> Make:
        return MemoryState
