"""The vector tests run example servers as `python -m examples.<env>.server`: from the checkout."""

from __future__ import annotations

import pytest

from tests.helpers import REPO


@pytest.fixture(autouse=True, scope="module")
def _in_repo() -> object:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        yield None
